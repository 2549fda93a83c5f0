"""The offline planner: ordinary imperative English -> an ordered subtask chain.

No LLM and no network. A clause grammar (verb + target + "to"/"with" value) covers
the 24 subtasks; quoted or UPPERCASE words are literal text; "it"/"them" refer to the
previous target; a clause without a verb reuses the previous verb ("remove the cat
and the dog"). The chain is then put in dependency order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from layerpath.engine.types import Subtask, SubtaskKind
from layerpath.errors import BadInput, UnsupportedInstruction, shown
from layerpath.tools.imaging import parse_color

K = SubtaskKind

_QUOTE = re.compile(r"[\"“”‘’]([^\"“”‘’]+)[\"“”‘’]|(?<![a-z])'([^']+)'(?![a-z])", re.I)
_CLAUSE_SPLIT = re.compile(
    r"(?:[.;!\n]+\s*|\?\s+|,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+then\s+|\s+then\s+|\s+and\s+|"
    r"\s+after\s+that\s+|\balso\b,?\s*)",
    re.I,
)
_ARTICLES = r"(?:the|a|an|this|that|these|those|all|all the|my)\s+"
_TEXT_WORDS = r"(?:text|texts|word|words|writing|letters|lettering|title|headline|inscription|caption text|label text)"
_PRONOUNS = {"it", "them", "this one", "that one"}
_VERBLESS_OK = re.compile(r"^(?:the|a|an|this|that|these|those|all|my)\b", re.I)
_POSITIONS = {
    "top": "top",
    "bottom": "bottom",
    "center": "center",
    "centre": "center",
    "middle": "center",
}
_SCENES = r"(?:night|nighttime|day|daytime|winter|summer|autumn|fall|spring|sunset|sunrise|snow|snowy|rain|rainy|dusk|dawn|foggy|fog)"


@dataclass(frozen=True)
class Plan:
    """The planner's answer: the ordered subtasks and what it could not understand."""

    subtasks: tuple[Subtask, ...]
    warnings: tuple[str, ...] = ()
    planner: str = "offline"


def is_color(words: str) -> bool:
    try:
        parse_color(words)
        return True
    except BadInput:
        return False


def _clean_target(text: str) -> str:
    text = re.sub(r"^(?:of\s+)?" + _ARTICLES, "", text.strip(" ,.").lower())
    text = re.sub(r"^" + _ARTICLES, "", text)
    return text.strip(" ,.")


@dataclass
class _Clause:
    """One clause with its literals lifted out: `text` holds QUOTE0.. placeholders."""

    text: str
    literals: list[str]

    def literal(self) -> str | None:
        return self.literals[0] if self.literals else None

    def expand(self, value: str) -> str:
        for i, lit in enumerate(self.literals):
            value = value.replace(f"quote{i}", lit)
        return value


def _lift_literals(instruction: str) -> tuple[str, list[str]]:
    literals: list[str] = []

    def keep(match: re.Match[str]) -> str:
        literals.append(match.group(1) or match.group(2))
        return f" quote{len(literals) - 1} "

    text = _QUOTE.sub(keep, instruction)

    # UPPERCASE words (OPEN, SALE) are literal text too.
    def upper(match: re.Match[str]) -> str:
        literals.append(match.group(0))
        return f"quote{len(literals) - 1}"

    text = re.sub(r"\b[A-Z][A-Z0-9!&$%-]{1,}\b", upper, text)
    return text, literals


def _split(instruction: str) -> list[_Clause]:
    text, literals = _lift_literals(instruction)
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(text) if p and p.strip(" ,")]
    clauses = []
    for part in parts:
        used = [int(n) for n in re.findall(r"quote(\d+)", part)]
        # Renumber so each clause's literals start at quote0.
        for new, old in enumerate(used):
            part = part.replace(f"quote{old}", f"quote#{new}")
        clauses.append(
            _Clause(part.replace("quote#", "quote").lower(), [literals[i] for i in used])
        )
    return clauses


# --- the clause grammar: (pattern, builder) tried in order --------------------------------

Builder = Callable[[re.Match[str], _Clause], Subtask | None]
_RULES: list[tuple[re.Pattern[str], Builder]] = []


def rule(pattern: str) -> Callable[[Builder], Builder]:
    def register(fn: Builder) -> Builder:
        _RULES.append((re.compile(pattern, re.I), fn))
        return fn

    return register


def _text_params(clause: _Clause, target: str | None = None) -> dict[str, str]:
    if clause.literal():
        return {"match": clause.literal() or ""}
    target = target or clause.text
    for key, pattern in (("phone", "phone"), ("email", "e-?mail"), ("digits", r"number|digit")):
        if re.search(pattern, target):
            return {"pattern": key}
    return {}


@rule(r"\b(?:sentiment|tone|mood|feeling)\b")
def _sentiment(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.SENTIMENT_ANALYSIS, target="text")


@rule(
    r"\bcaption\b.*\b(?:match|matches|consistent|consistency|correct|accurate|verify|check)\b|"
    r"\b(?:check|verify)\b.*\bcaption\b"
)
def _caption_check(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.CAPTION_CONSISTENCY, params={"caption": c.literal() or ""})


@rule(
    r"^(?:please\s+)?(?:answer|what|which|who|when|where|how much|how many|is there|does|do)\b.*"
    r"\b(?:text|sign|say|says|written|read|price|menu|label|poster)\b"
)
def _question(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.QUESTION_ANSWERING, target="text", params={"question": c.expand(c.text)})


@rule(r"\b(?:caption|describe)\b")
def _captioning(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.IMAGE_CAPTIONING)


@rule(
    r"\bhighlight\b\s*(?:the\s+|all\s+|every\s+)?(?:(?:key)?words?|keywords?|terms?|text)?\s*(quote0|[a-z]+)?"
)
def _highlight(m: re.Match[str], c: _Clause) -> Subtask | None:
    if c.literal() or re.search(r"\b(?:keyword|word|term|text)s?\b", c.text):
        word = c.literal() or (m.group(1) or "")
        return Subtask(K.KEYWORD_HIGHLIGHTING, target=word, params={"match": word})
    return None


@rule(r"\b(?:redact|censor|black out|blank out|blur out|obscure|anonymi[sz]e)\b\s*(.*)")
def _redact(m: re.Match[str], c: _Clause) -> Subtask:
    target = _clean_target(c.expand(m.group(1))) or "text"
    return Subtask(K.TEXT_REDACTION, target=target, params=_text_params(c, m.group(1)))


@rule(
    r"\b(?:extract|transcribe|ocr|read(?: out)?|get|copy|pull out)\b.*\b" + _TEXT_WORDS + r"\b|"
    r"\bwhat (?:does|do) .* say\b"
)
def _extract(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.TEXT_EXTRACTION, target="text")


@rule(r"\b(?:detect|find|locate|mark|box|spot|outline)\b.*\b" + _TEXT_WORDS + r"\b")
def _detect_text(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.TEXT_DETECTION, target="text", params=_text_params(c))


@rule(
    r"\b(?:replace|change|swap|update|rewrite|edit|alter)\b\s+(.*?)\s*\b(?:with|to say|to read|to|into|by|for)\b\s+(.+)$"
)
def _replace(m: re.Match[str], c: _Clause) -> Subtask | None:
    old, new = m.group(1), m.group(2).strip(" .")
    textual = re.search(r"\b" + _TEXT_WORDS + r"\b|\bsign\b|quote", old) or re.search(
        r"\bto (?:say|read)\b", c.text
    )
    if "colo" in old and is_color(_clean_target(c.expand(new))):
        return None  # "change the colour of X to Y" is a recolour
    if textual and "quote" in new:
        match = {"match": c.expand(re.search(r"quote\d", old).group(0))} if "quote" in old else {}  # type: ignore[union-attr]
        return Subtask(K.TEXT_REPLACEMENT, target="text", to=c.expand(new.strip()), params=match)
    if textual:
        return None
    to = _clean_target(c.expand(new))
    if is_color(to):
        return Subtask(K.OBJECT_RECOLORATION, target=_clean_target(c.expand(old)), to=to)
    if re.search(r"\b(?:background|scenery|scene|sky|weather|season)\b", old):
        return Subtask(K.CHANGING_SCENERY, target=_clean_target(old), to=to)
    return Subtask(K.OBJECT_REPLACEMENT, target=_clean_target(c.expand(old)), to=to)


@rule(
    r"\b(?:remove|erase|delete|clear|get rid of|take out|wipe)\b.*(?:\b"
    + _TEXT_WORDS
    + r"\b|quote0)"
)
def _remove_text(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.TEXT_REMOVAL, target="text", params=_text_params(c))


@rule(
    r"\b(?:add|write|put|insert|place|type|overlay)\b.*(?:quote0|\b(?:text|caption|title|words?)\b)"
)
def _add_text(m: re.Match[str], c: _Clause) -> Subtask | None:
    if not c.literal():
        return None
    params = {}
    for word, position in _POSITIONS.items():
        if re.search(rf"\b{word}\b", c.text):
            params["position"] = position
    color = re.search(r"\bin\s+([a-z ]+?)(?:\s+at\b|$)", c.text)
    if color and is_color(color.group(1)):
        params["color"] = color.group(1)
    return Subtask(K.TEXT_ADDITION, target="text", to=c.literal(), params=params)


@rule(r"\b(?:remove|delete|cut out|erase|drop|get rid of|clear|make transparent)\b.*\bbackground\b")
def _remove_background(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.BACKGROUND_REMOVAL, target="background")


@rule(
    r"\b(?:deblur|unblur|sharpen|de-blur)\b|\b(?:remove|fix|reduce)\b.*\bblur\b|\bmake\b.*\bsharper\b"
)
def _deblur(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.IMAGE_DEBLURRING)


@rule(
    r"\b(?:outpaint|uncrop|zoom out|widen)\b|\b(?:extend|expand)\b.*\b(?:image|picture|photo|canvas|frame|borders?|edges?|left|right|sides?)\b"
)
def _outpaint(m: re.Match[str], c: _Clause) -> Subtask:
    side = re.search(r"\b(left|right|top|bottom|all sides)\b", c.text)
    return Subtask(K.OUTPAINTING, params={"side": side.group(1)} if side else {})


@rule(
    r"\b(?:upscale|upsample|enlarge|super-?resolve|super-?resolution|increase (?:the )?resolution|higher resolution|\dx)\b"
)
def _upscale(m: re.Match[str], c: _Clause) -> Subtask:
    factor = re.search(r"\b(\d)x\b|\bx(\d)\b", c.text)
    return Subtask(
        K.IMAGE_UPSCALING,
        params={"factor": int(factor.group(1) or factor.group(2))} if factor else {},
    )


@rule(r"\bdepth\b")
def _depth(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.DEPTH_ESTIMATION)


@rule(r"\blandmarks?\b|\b(?:identify|recogni[sz]e|name)\b.*\b(?:building|monument|place)\b")
def _landmark(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.LANDMARK_DETECTION)


@rule(
    r"\b(?:make|turn|change|convert|transform|set)\b.*\b(?:to|into|look like|as if it were|at)?\s*(?:a\s+)?("
    + _SCENES
    + r")\b(?:\s+scene)?"
)
def _scenery(m: re.Match[str], c: _Clause) -> Subtask | None:
    head = c.text[: m.start(1)]
    if re.search(
        r"\b(?:scene|scenery|image|picture|photo|it|everything|background|sky|weather|season)\b",
        head,
    ):
        return Subtask(K.CHANGING_SCENERY, target="scenery", to=m.group(1))
    return None


def _split_color(rest: str) -> tuple[str, str] | None:
    """'the wall to light blue' -> ('wall', 'light blue'); None if no colour ends it."""
    rest = rest.strip(" .")
    joined = re.match(r"(.+?)\s+(?:to|in|into|with|as)\s+(?:a\s+)?(.+)$", rest)
    if joined and is_color(joined.group(2)):
        return _clean_target(joined.group(1)), joined.group(2)
    words = rest.split()
    for n in (2, 1):
        if len(words) > n and is_color(" ".join(words[-n:])):
            return _clean_target(" ".join(words[:-n])), " ".join(words[-n:])
    return None


@rule(
    r"\b(?:recolou?r|colou?r|paint|dye|tint)\b\s+(.+)$|\bchange\b\s+(?:the\s+)?colou?r\s+of\s+(.+)$|"
    r"\b(?:make|turn)\b\s+(.+)$"
)
def _recolor(m: re.Match[str], c: _Clause) -> Subtask | None:
    found = _split_color(m.group(1) or m.group(2) or m.group(3))
    if found is None or not found[0]:
        return None
    return Subtask(K.OBJECT_RECOLORATION, target=found[0], to=found[1])


@rule(r"\b(?:remove|erase|delete|get rid of|take out|eliminate|clear|wipe out|cut)\b\s+(.+)$")
def _remove(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.OBJECT_REMOVAL, target=_clean_target(c.expand(m.group(1))))


@rule(
    r"\b(?:add|insert|put|place|draw)\b\s+(.+?)(?:\s+(?:to|on|onto|in|into|next to|beside|near|at|above|below|under)\s+(.+))?$"
)
def _add(m: re.Match[str], c: _Clause) -> Subtask:
    params = {"where": _clean_target(m.group(2))} if m.group(2) else {}
    return Subtask(K.OBJECT_ADDITION, target=_clean_target(c.expand(m.group(1))), params=params)


@rule(
    r"\b(?:detect|find|locate|identify|spot|highlight|outline|count|show|point out|box)\b\s+(.+)$"
)
def _detect(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.OBJECT_DETECTION, target=_clean_target(c.expand(m.group(1))))


@rule(r"\b(?:segment|select|mask|isolate|cut out|extract)\b\s+(.+)$")
def _segment(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.OBJECT_SEGMENTATION, target=_clean_target(c.expand(m.group(1))))


def _parse_clause(clause: _Clause) -> Subtask | None:
    for pattern, build in _RULES:
        match = pattern.search(clause.text)
        if match:
            subtask = build(match, clause)
            if subtask is not None:
                return subtask
    return None


_LEADING_VERB = re.compile(r"^(?:please\s+)?([a-z]+(?:\s+(?:out|rid of))?)\b")


def _resolve_pronoun(subtask: Subtask, previous: str | None) -> Subtask:
    if subtask.target in _PRONOUNS and previous:
        return replace(subtask, target=previous)
    return subtask


# --- dependency order ------------------------------------------------------------------

_TEXT_EDITS = {K.TEXT_REPLACEMENT, K.TEXT_REMOVAL, K.TEXT_ADDITION, K.TEXT_REDACTION}
_TEXT_READERS = {
    K.TEXT_DETECTION,
    K.TEXT_EXTRACTION,
    K.QUESTION_ANSWERING,
    K.SENTIMENT_ANALYSIS,
    K.KEYWORD_HIGHLIGHTING,
}


Overlaps = Callable[[Subtask, Subtask], bool]


def _must_follow(later: Subtask, earlier: Subtask, overlaps: Overlaps | None) -> bool:
    """True when `later` depends on `earlier`'s result."""
    grows = (K.OUTPAINTING, K.IMAGE_UPSCALING)  # in this order, after everything else:
    if later.kind in grows and earlier.kind not in grows:
        return True  # the other edits work on the photo (and its masks) as it is
    if later.kind == K.IMAGE_UPSCALING and earlier.kind == K.OUTPAINTING:
        return True
    if earlier.kind == K.OBJECT_REPLACEMENT and earlier.to and later.target == earlier.to:
        return True  # a replaced object is recoloured/detected after it exists
    if (
        earlier.kind == K.OBJECT_ADDITION
        and later.target == earlier.target
        and later.kind != K.OBJECT_ADDITION
    ):
        return True
    if (
        later.kind == K.OBJECT_REMOVAL
        and earlier.kind == K.OBJECT_RECOLORATION
        and overlaps is not None
        and overlaps(later, earlier)
    ):
        return True  # fill a removed object from its neighbour's new colour, not the old
    return earlier.kind in _TEXT_EDITS and later.kind in _TEXT_READERS


def order_subtasks(subtasks: Sequence[Subtask], overlaps: Overlaps | None = None) -> list[Subtask]:
    """Stable topological order: the user's order unless a dependency says otherwise.
    `overlaps(a, b)` tells whether two subtasks' regions touch, where masks are known."""
    remaining = list(subtasks)
    ordered: list[Subtask] = []
    while remaining:
        for candidate in remaining:
            if not any(
                _must_follow(candidate, other, overlaps)
                for other in remaining
                if other is not candidate
            ):
                break
        else:  # a cycle (contradictory wording): keep the user's order
            candidate = remaining[0]
        ordered.append(candidate)
        remaining.remove(candidate)
    return [replace(s, id=f"s{i + 1}") for i, s in enumerate(ordered)]


def supported_summary() -> str:
    return (
        "layerpath understands: remove / recolor / replace / add / detect / segment an object, "
        "remove the background, change the scenery, outpaint, upscale, deblur, caption, "
        "estimate depth, find landmarks, and for text: extract, detect, replace, remove, add, "
        "redact, highlight a keyword, answer a question, sentiment, caption check. "
        'Example: "remove the cat, recolor the wall to yellow and replace the sign text with OPEN".'
    )


def plan_offline(instruction: str) -> Plan:
    """Turn an instruction into an ordered subtask chain without any model.

    Raises UnsupportedInstruction when nothing in it is something layerpath can do.
    """
    if not instruction or not instruction.strip():
        raise UnsupportedInstruction("The instruction is empty. " + supported_summary())
    subtasks: list[Subtask] = []
    warnings: list[str] = []
    previous_target: str | None = None
    previous_verb: str | None = None
    for clause in _split(instruction):
        subtask = _parse_clause(clause)
        if subtask is None and previous_verb and _VERBLESS_OK.match(clause.text):
            subtask = _parse_clause(_Clause(f"{previous_verb} {clause.text}", clause.literals))
        if subtask is None:
            warnings.append(f"Ignored '{clause.expand(clause.text)}': not an edit layerpath knows.")
            continue
        subtask = _resolve_pronoun(subtask, previous_target)
        verb = _LEADING_VERB.match(clause.text)
        previous_verb = verb.group(1) if verb else previous_verb
        if subtask.target and subtask.target not in {"text", "background", "scenery"}:
            previous_target = subtask.target
        subtasks.append(subtask)
    if not subtasks:
        raise UnsupportedInstruction(
            f'Nothing in "{shown(instruction.strip())}" is an edit layerpath can do. '
            + supported_summary()
        )
    return Plan(tuple(order_subtasks(subtasks)), tuple(warnings))
