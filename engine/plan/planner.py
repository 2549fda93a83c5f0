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
from functools import lru_cache
from typing import Any

from layerpath.engine.events import OnEvent
from layerpath.engine.kinds import kind_spec
from layerpath.engine.plan.adjust_words import parse_adjustment, region_of
from layerpath.engine.plan.modifier_words import MODIFIER_CLAUSE, STRENGTH_CLAUSE
from layerpath.engine.plan.statements import (
    as_edit,
    naming,
    needed_thing,
    remedy,
    statement_subject,
    wanted,
    without_purpose,
)
from layerpath.engine.plan.style_words import parse_look
from layerpath.engine.types import EditRequest, Subtask, SubtaskKind
from layerpath.errors import BadInput, UnsupportedInstruction, shown
from layerpath.kit.colours import parse_color
from layerpath.kit.looks import look_words

K = SubtaskKind

_QUOTE = re.compile(r"[\"“”‘’]([^\"“”‘’]+)[\"“”‘’]|(?<![a-z])'([^']+)'(?![a-z])", re.I)
_CLAUSE_SPLIT = re.compile(
    r"(?:(?:\.(?!\d)|[;!\n])+\s*|\?\s+|,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+then\s+|\s+then\s+|\s+and\s+|"
    r"\s+after\s+that\s+|\balso\b,?\s*|\s+while\s+|\s+as well as\s+|\s+plus\s+|"
    r"\s+and\s+finally\s+|\bfinally\b,?\s*|\bnext\b,\s*)",
    re.I,
)
_ARTICLES = r"(?:(?:all|some|each|any) of the|the|a|an|this|that|these|those|all|all the|my|his|her|their|our|your)\s+"
_TEXT_WORDS = r"(?:text|texts|word|words|writing|letters|lettering|title|headline|inscription|caption text|label text|signage|signboard)"
_PRONOUNS = {"it", "them", "this one", "that one"}
#: what a blur or redaction of which is a text redaction
_TEXTLIKE = r"\b(?:text|texts|words?|writing|letters|numbers?|digits?|names?|e-?mail|phone|plates?|licen[cs]e|address|signature|caption|label|sign|signage|document)\b"
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


#: one-word names of the xkcd survey that after 'make' or 'turn' are a state or a scene,
#: not a colour ('make the sky dark', 'make the skin pale', 'turn it golden')
_NOT_AFTER_MAKE = {"dark", "pale", "golden", "bland", "drab", "ice", "dusk", "twilight",
                   "midnight", "sky", "sea", "ocean", "grass", "leaf", "earth", "dirt", "mud",
                   "dust", "forest", "desert", "swamp", "velvet", "sunshine", "sandy", "stone",
                   "steel", "silver", "gold", "rose"}  # fmt: skip


def is_color(words: str, loose: bool = False) -> bool:
    """Whether the words name a colour. A one-word name of the xkcd survey ('sand',
    'stone', 'copper') counts only when `loose`: after a verb that colours ('dye her
    hair copper'); elsewhere such a word is more often a thing ('remove the sand')."""
    try:
        parse_color(words, surveyed=loose or len(words.split()) > 1)
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
    raw: str = ""  # the clause as typed (its letters' case), same length as `text`

    def literal(self) -> str | None:
        return self.literals[0] if self.literals else None

    def expand(self, value: str) -> str:
        for i, lit in enumerate(self.literals):
            value = value.replace(f"quote{i}", lit)
        return value


#: a word in capitals is sign text (OPEN, SALE), but for these words of photography
_UPPER = (
    r"\b(?!(?:B&W|BW|EV|HDR|ISO|RGB|JPE?G|PNG|TIFF?|RAW|OK|WB|ND|UV)\b)"
    r"[A-Z][A-Z0-9!&$%-]*[A-Z0-9!&$%]\b"
)


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

    text = re.sub(_UPPER, upper, text)
    return text, literals


#: phrases whose 'and' joins no clauses: black and white, and the looks' ('teal and
#: orange', 'dark and moody')
_JOINED = re.compile(
    r"\b("
    + "|".join(["black", *sorted({w.split(" and ")[0] for w in look_words() if " and " in w})])
    + r")\s*(?:and|&|n)\s*("
    + "|".join(["white", *sorted({w.split(" and ")[1] for w in look_words() if " and " in w})])
    + r")\b",
    re.I,
)


def _split(instruction: str) -> list[_Clause]:
    text, literals = _lift_literals(_JOINED.sub(r"\1-and-\2", instruction))
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(text) if p and p.strip(" ,")]
    clauses = []
    for part in parts:
        used = [int(n) for n in re.findall(r"quote(\d+)", part)]
        # Renumber so each clause's literals start at quote0.
        for new, old in enumerate(used):
            part = part.replace(f"quote{old}", f"quote#{new}")
        part = part.replace("quote#", "quote")
        clauses.append(_Clause(part.lower(), [literals[i] for i in used], part))
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


@rule(
    r"\bsentiment\b|\b(?:tone|mood|feeling)\b.*\b(?:text|message|review|caption|words?|writing|post)\b|"
    r"\b(?:analy[sz]e|detect|what is|classify)\b.*\b(?:tone|mood|feeling)\b"
)
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
def _captioning(m: re.Match[str], c: _Clause) -> Subtask | None:
    if c.literal() and re.search(r"\b(?:add|write|put|insert|place|type|overlay)\b", c.text):
        return None  # "add the caption 'Summer 2024'": text to add
    return Subtask(K.IMAGE_CAPTIONING)


@rule(
    r"\bhighlight\b\s*(?:the\s+|all\s+|every\s+)?(?:(?:key)?words?|keywords?|terms?|text)?\s*(quote0|[a-z]+)?"
)
def _highlight(m: re.Match[str], c: _Clause) -> Subtask | None:
    if c.literal() or re.search(r"\b(?:keyword|word|term|text)s?\b", c.text):
        word = c.literal() or (m.group(1) or "")
        return Subtask(K.KEYWORD_HIGHLIGHTING, target=word, params={"match": word})
    return None


@rule(
    r"\b(?:de-?blur|unblur)\b|\b(?:remove|fix|reduce|correct|undo|get rid of)\b.*\bblur(?:ry|riness)?\b"
)
def _deblur(m: re.Match[str], c: _Clause) -> Subtask:
    """(before the adjustments and redaction, which 'blur' alone means)"""
    return Subtask(K.IMAGE_DEBLURRING)


@rule(r"\b(?:use|take|borrow|apply|put|swap|drop|bring|grab)\b.*\bquote0\b")
def _sky_from(m: re.Match[str], c: _Clause) -> Subtask | None:
    """'use the sky from ref', 'take the sky of ref', 'swap it for the sky in ref' (the
    reference's sky is its placeholder '@ref' by now: engine/plan/references.py)."""
    literal = c.literal() or ""
    if not literal.startswith("@") or re.search(r"\b" + _TEXT_WORDS + r"\b", c.text):
        return None
    return Subtask(K.CHANGING_SCENERY, target="sky", to=literal)


@rule(
    r"\b(?:change|set|switch|make|turn)\b\s+(?P<thing>.+?)(?:'s)?\s+colou?r\s+(?:to|into|in)\s+"
    r"(?P<colour>.+)$|\bgive\b\s+(?P<given>.+?)\s+(?:a|an|some)\s+(?P<new>.+?)\s+"
    r"(?:colou?r|paint job|coat of paint|finish|shade|tint)\b"
)
def _recolor_named(m: re.Match[str], c: _Clause) -> Subtask | None:
    """'change the chair colour to light brown', 'give the sofa a dark green colour'
    (before the replacements and adjustments, which would read 'chair colour' as a thing
    or 'dark green' as an adjustment)."""
    thing = _clean_target(c.expand(m.group("thing") or m.group("given")))
    colour = (m.group("colour") or m.group("new") or "").strip(" .")
    if not is_color(colour):
        return None
    if not thing or thing in _NO_THING:  # 'change the colour to red': the selection's
        thing = "this"
    return Subtask(K.OBJECT_RECOLORATION, target=thing, to=colour)


_NUMBERED_RATIO = r"\d+(?:\.\d+)?\s*(?:[:x/]|by)\s*\d+(?:\.\d+)?"
_RATIO = _NUMBERED_RATIO + r"|\b(?:square|portrait|landscape|panorama|wide|widescreen)\b"
#: a frame's name that is a ratio
_RATIO_NAMES = {"widescreen": "16:9"}


@rule(r"\bcrop\w*\b|\breframe\b")
def _crop(m: re.Match[str], c: _Clause) -> Subtask:
    """'crop to 16:9', 'square crop', 'crop to the face', 'crop around the person at 4:5'."""
    ratio = re.search(_NUMBERED_RATIO, c.text) or re.search(_RATIO, c.text)
    # ('for a youtube banner': what it is for; 'crop for the face' names what to keep)
    rest = re.sub(
        r"\bfor\s+(?:(?:a|an|the|my|our)\s+)?(?:[a-z'-]+\s+)*?(?:instagram|facebook|youtube|tiktok|"
        r"print|web|website|banner|thumbnail|slideshow|feed|story|stories|profile|post|poster|cover|"
        r"album|listing|shop|blog|card|invite|invitation)\b.*$",
        " ",
        c.text,
    )
    rest = re.sub(_RATIO, " ", rest)
    rest = re.sub(
        r"\b(?:crop\w*|reframe|around|in on|tight(?:er|ly)?|closer|ratio|aspect|format)\b",
        " ",
        rest,
    )
    target, position = region_of(rest)
    aspect = re.sub(r"\s*by\s*", ":", ratio.group(0)).replace(" ", "") if ratio else None
    params: dict[str, object] = {"aspect": _RATIO_NAMES.get(aspect, aspect)} if aspect else {}
    if position:
        params["position"] = position
    return Subtask(K.CROP, target=target, params=params)


@rule(
    r"\b(?:rotate|turn|spin|tilt)\b.*(?:\d+(?:\.\d+)?\s*(?:°|degrees?|deg)\b|\b(?:counter[\s-]?clockwise|anti[\s-]?clockwise|clockwise|upside down|left|right)\b)|"
    r"\b(?:straighten|level)\b|\b(?:fix|correct)\b.*\b(?:tilt|horizon)\b|\bhorizon\b.*\blevel\b|"
    r"\b(?:flip|mirror)\b"
)
def _rotate(m: re.Match[str], c: _Clause) -> Subtask | None:
    """'rotate 90 degrees clockwise', 'rotate left', 'straighten the horizon', 'flip'.
    Degrees count counter-clockwise; a turn without a direction is clockwise, as a
    photo app's rotate button."""
    text = c.text
    if re.search(r"\b(?:flip|mirror)\b", text):
        vertical = re.search(r"\b(?:vertical(?:ly)?|upside down|top to bottom)\b", text)
        return Subtask(K.ROTATION, params={"flip": "vertical" if vertical else "horizontal"})
    if re.search(r"\b(?:straighten|level)\b|\btilt\b|\bhorizon\b", text) and not re.search(
        r"\d", text
    ):
        return Subtask(K.ROTATION, params={})
    number = re.search(r"(\d+(?:\.\d+)?)\s*(?:°|degrees?|deg)\b", text)
    degrees = float(number.group(1)) if number else (180.0 if "upside down" in text else 90.0)
    anticlockwise = re.search(r"\b(?:counter[\s-]?clockwise|anti[\s-]?clockwise|left)\b", text)
    # (a half turn is the same either way: said as +180)
    signed = degrees if anticlockwise or "upside down" in text or degrees == 180 else -degrees
    return Subtask(K.ROTATION, params={"degrees": signed})


@rule(r".")
def _look(m: re.Match[str], c: _Clause) -> Subtask | None:
    """'make it look like golden hour', 'a teal and orange grade', 'turn it into a
    watercolour', 'add fog', with where it goes (style_words)."""
    found = parse_look(c.text)
    if found is not None and found.target and re.search(_TEXTLIKE, found.target):
        return None
    return found


@rule(r".")
def _adjustment(m: re.Match[str], c: _Clause) -> Subtask | None:
    """'brighten', 'warmer', 'black and white', 'blur the face', ... (adjust_words)."""
    colouring = re.match(r"(?:recolou?r|colou?r|(?:re-?)?paint|dye|tint|switch)\s+(.+)$", c.text)
    if colouring and _split_color(colouring.group(1), loose=True):
        return None  # ('paint the wall a warm grey': a recolour, not a warmer picture)
    found = parse_adjustment(c.text)
    if found is None:
        return None
    if found.params.get("op") == "curve" and parse_look(c.text):
        return None  # ('that silver retention film look': the look, not a faded curve)
    if found.target and re.search(_TEXTLIKE, found.target) and found.params.get("op") == "blur":
        return None  # 'blur the licence plate': a text redaction reads it first
    return found


@rule(
    r"\bmake\s+(.+?)\s+(?:disappear|vanish|go away)\b|"
    r"\b(?:get|take)\s+(.+?)\s+out(?:\s+of\s+(?:the\s+)?(?:shot|frame|picture|photo|image))?\s*$"
)
def _make_disappear(m: re.Match[str], c: _Clause) -> Subtask | None:
    """'make the bin bags disappear', 'get the van out of the shot' ('take the noise out'
    is an adjustment's)."""
    target = _clean_target(c.expand(m.group(1) or m.group(2)))
    if re.fullmatch(
        r"(?:colou?rs?|noise|grain|saturation|contrast|blur|warmth|tint|cast|"
        r"(?:the\s+)?(?:blue|red|green|yellow|orange|magenta)s?)",
        target,
    ):
        return None
    return Subtask(K.OBJECT_REMOVAL, target=target)


@rule(r"\b(?:cover(?:\s+up)?|hide|mask out)\s+(.+)$")
def _cover(m: re.Match[str], c: _Clause) -> Subtask | None:
    """'cover up the phone number': text hidden, as a redaction hides it."""
    target = _clean_target(c.expand(m.group(1)))
    if not re.search(_TEXTLIKE, target):
        return None
    return Subtask(K.TEXT_REDACTION, target=target, params=_text_params(c, m.group(1)))


@rule(
    r"\b(?:redact|censor|black out|blank out|blur out|blur|obscure|anonymi[sz]e|pixelate)\b\s*(.*)"
)
def _redact(m: re.Match[str], c: _Clause) -> Subtask:
    # 'the text on it': the text, wherever it is
    target = re.sub(r"\s+(?:on|in|from|of|at)\s+.*$", "", _clean_target(c.expand(m.group(1))))
    target = re.sub(r"\s+out$", "", target)  # ('blur the plates out')
    target = "text" if not target or re.fullmatch(_TEXT_WORDS, target) else target
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
    if "colo" in old and is_color(_clean_target(c.expand(new)), loose=True):
        return None  # "change the colour of X to Y" is a recolour
    if textual and "quote" in new:
        match = {"match": c.expand(re.search(r"quote\d", old).group(0))} if "quote" in old else {}  # type: ignore[union-attr]
        return Subtask(K.TEXT_REPLACEMENT, target="text", to=c.expand(new.strip()), params=match)
    if textual and len(new.split()) <= 4 and c.raw:  # 'update the closed signage to open'
        typed = c.raw[m.start(2) : m.start(2) + len(new)].strip(" .")
        match = {"match": old_word} if (old_word := _sign_word(old)) else {}
        said = re.search(r"\bfrom\s+(\S+(?:\s+\S+)?)$", old)  # ('the sign from closed to open')
        if said and not match:
            match = {"match": c.expand(said.group(1))}
        return Subtask(K.TEXT_REPLACEMENT, target="text", to=c.expand(typed), params=match)
    if textual:
        return None
    to = _clean_target(c.expand(new))
    if is_color(to) and not re.fullmatch(r"(?:a|an)\s+" + _FRUIT_COLOURS, new.strip()):
        # ('with an orange': the fruit; 'to a deep blue': the colour)
        return Subtask(K.OBJECT_RECOLORATION, target=_clean_target(c.expand(old)), to=to)
    if re.search(r"\b(?:background|scenery|scene|sky|weather|season)\b", old):
        place = _clean_target(old)
        place = "scenery" if place in {"scene", "scenery", "weather", "season"} else place
        return Subtask(K.CHANGING_SCENERY, target=place, to=to)
    return Subtask(K.OBJECT_REPLACEMENT, target=_clean_target(c.expand(old)), to=to)


#: colours that are also things, so 'a lime' or 'an orange' names the thing
_FRUIT_COLOURS = (
    r"(?:orange|lime|lemon|peach|plum|cherry|olive|chocolate|salmon|tomato|coral|gold|silver|rose)"
)


def _sign_word(old: str) -> str:
    """The sign's old word in 'the closed signage' ('closed'), '' when none is named."""
    words = [w for w in re.findall(r"[a-z]+", old) if w not in {"the", "a", "an", "this", "that"}]
    nouns = {"sign", "signage", "signboard", "text", "texts", "word", "words", "writing",
             "letters", "lettering", "title", "headline", "label", "banner"}  # fmt: skip
    named = [w for w in words if w not in nouns]
    return named[0] if len(named) == 1 and len(words) > 1 else ""


@rule(
    r"\b(?:remove|erase|delete|clear|get rid of|take out|wipe|strip)\b.*(?:\b"
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
    places = [p for w, p in _POSITIONS.items() if re.search(rf"\b{w}\b", c.text)]
    places += [side for side in ("left", "right") if re.search(rf"\b{side}\b", c.text)]
    if places:  # 'bottom right': the row, then the side
        params["position"] = " ".join(dict.fromkeys(places))
    color = re.search(r"\bin\s+([a-z ]+?)(?:\s+at\b|$)", c.text)
    if color and is_color(color.group(1)):
        params["color"] = color.group(1)
    return Subtask(K.TEXT_ADDITION, target="text", to=c.literal(), params=params)


@rule(
    r"\b(?:remove|delete|cut out|erase|drop|get rid of|clear|make transparent|take out|knock out)\s+"
    r"(?:the\s+|this\s+|its\s+|my\s+)?(?:whole\s+|entire\s+)?(?:back\s*ground|backdrop)\b|"
    r"\bmake\b.*\bbackground\b.*\btransparent\b|\btransparent background\b|"
    r"\b(?:isolate|cut out)\b.*\bsubject\b"
)
def _remove_background(m: re.Match[str], c: _Clause) -> Subtask:
    return Subtask(K.BACKGROUND_REMOVAL, target="background")


@rule(r"\bsharpen\b|\bmake\b.*\bsharper\b|\bcrisp\s+(?:it|them|the\s+\w+\s+)?\s*up\b")
def _sharpen_photo(m: re.Match[str], c: _Clause) -> Subtask:
    """'sharpen the photo': the paper's deblurring (a strength or a region made it the
    sharpening adjustment further up)."""
    return Subtask(K.IMAGE_DEBLURRING)


@rule(
    r"\b(?:outpaint|uncrop|zoom out|widen)\b|\b(?:extend|expand)\b.*\b(?:image|picture|photo|canvas|frame|borders?|edges?|left|right|sides?)\b|"
    r"\b(?:add|give)\b.*\b(?:canvas|room)\b.*\b(?:left|right|top|bottom|sides?|around)\b"
)
def _outpaint(m: re.Match[str], c: _Clause) -> Subtask:
    side = re.search(r"\b(left|right|top|bottom|all sides)\b", c.text)
    params: dict[str, object] = {"side": side.group(1)} if side else {}
    pixels = re.search(r"\b(\d+)\s*(?:px|pixels?)\b", c.text)
    if pixels:
        params["pixels"] = int(pixels.group(1))
    return Subtask(K.OUTPAINTING, params=params)


@rule(
    r"\b(?:upscale|upsample|enlarge|super-?resolve|super-?resolution|increase (?:the )?resolution|higher resolution|\dx|"
    r"(?:double|triple|quadruple) the (?:resolution|size|pixels))\b"
)
def _upscale(m: re.Match[str], c: _Clause) -> Subtask:
    factor = re.search(r"\b(\d)x\b|\bx(\d)\b", c.text)
    times = re.search(r"\b(double|triple|quadruple) the\b", c.text)
    if factor:
        return Subtask(
            K.IMAGE_UPSCALING, params={"factor": int(factor.group(1) or factor.group(2))}
        )
    named = {"double": 2, "triple": 3, "quadruple": 4}
    return Subtask(K.IMAGE_UPSCALING, params={"factor": named[times.group(1)]} if times else {})


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


#: what names no thing: 'change the colour to red', 'recolor to red' recolour the selection
_NO_THING = {"the", "a", "an", "its", "their", "to", "into", "in", "as", "with", "her", "his",
             "my", "our", "your"}  # fmt: skip


def _split_color(rest: str, loose: bool = False) -> tuple[str, str] | None:
    """'the wall to light blue' -> ('wall', 'light blue'); None if no colour ends it;
    ('', colour) when no thing is named. `loose`: after a verb that colours (is_color)."""
    rest = rest.strip(" .")
    joined = re.match(r"(.+?)\s+(?:to|in|into|with|as)\s+(?:a\s+)?(.+)$", rest)
    if joined and is_color(joined.group(2), loose):
        return _clean_target(joined.group(1)), joined.group(2)
    words = rest.split()
    splits = []
    for n in (3, 2, 1):
        if len(words) > n and is_color(" ".join(words[-n:]), loose):
            thing = re.sub(r"\s+(?:a|an|some)$", "", " ".join(words[:-n]))  # 'the bowl a deep blue'
            thing = _clean_target(thing)
            splits.append((("" if thing in _NO_THING else thing), " ".join(words[-n:])))
    # the longest colour that leaves a thing named ('make the grass green': not the
    # survey's 'grass green' of nothing)
    return next((s for s in splits if s[0]), splits[0] if splits else None)


#: verbs that are a colour: 'whiten the wall'
_COLOUR_VERBS = {"whiten": "white", "blacken": "black", "redden": "red"}


@rule(r"\b(whiten|blacken|redden)\s+(.+)$")
def _colour_verb(m: re.Match[str], c: _Clause) -> Subtask | None:
    target = _clean_target(c.expand(m.group(2)))
    if not target or target.split()[0] in {"it", "the", "a"}:
        return None
    return Subtask(K.OBJECT_RECOLORATION, target=target, to=_COLOUR_VERBS[m.group(1)])


@rule(
    r"\b(?:recolou?r|colou?r|(?:re-?)?paint|dye|tint|switch)\b\s+(.+)$|\bchange\b\s+(?:the\s+)?colou?r\s+of\s+(.+)$|"
    r"\b(?:make|turn)\b\s+(.+)$"
)
def _recolor(m: re.Match[str], c: _Clause) -> Subtask | None:
    # ('make the beanie lilac': after 'make' or 'turn' a thing must be named first, and a
    # state is no colour: 'make the sky dark')
    loose = m.group(3) is None or bool(
        re.match(r"(?:the|his|her|their|my|this|that)\s", m.group(3))
    )
    found = _split_color(m.group(1) or m.group(2) or m.group(3), loose=loose)
    if found and m.group(3) is not None and found[1] in _NOT_AFTER_MAKE:
        return None
    if found is None or not (found[0] or m.group(3) is None):
        return None
    return Subtask(K.OBJECT_RECOLORATION, target=found[0] or "this", to=found[1])


@rule(
    r"\b(?:remove|erase|delete|get rid of|take out|take away|eliminate|clear(?:\s+(?:away|out|off))?|"
    r"wipe (?:out|away)|cut|lose|ditch|zap|clone out|edit out|paint out|airbrush out)\b\s+(.+)$"
)
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

Overlaps = Callable[[Subtask, Subtask], bool]


def _must_follow(later: Subtask, earlier: Subtask, overlaps: Overlaps | None) -> bool:
    """True when `later` depends on `earlier`'s result."""
    # in this order, after everything else: the other edits work on the photo (and its
    # masks) as it is, then the frame changes
    frame, earlier_frame = kind_spec(later.kind).frame, kind_spec(earlier.kind).frame
    if _frame_relative(later) and (earlier.kind == K.CROP or earlier.kind == K.ROTATION
                                   and not later.params.get("graduated")):  # fmt: skip
        # a vignette is laid out on the final frame, a graduated filter on the cropped
        # one (turned, its side is no longer the sky's)
        return True
    if frame is not None and earlier_frame is None and not _frame_relative(earlier):
        # (a whole-picture adjustment needs no mask: 'upscale it, then sharpen' as said)
        whole = earlier.kind == K.PHOTO_ADJUSTMENT and later.kind == K.IMAGE_UPSCALING
        return not whole
    if frame is not None and earlier_frame is not None:
        return frame > earlier_frame
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
    return kind_spec(earlier.kind).edits_text and kind_spec(later.kind).reads_text


def _frame_relative(subtask: Subtask) -> bool:
    """An edit laid out on the frame (its corners, a side): a vignette, anything
    graduated, a look whose recipe darkens the corners."""
    params = subtask.params
    if params.get("op") == "vignette" or params.get("graduated"):
        return True
    if params.get("op") == "look":
        from layerpath.kit.looks import looks

        look = looks().get(str(params.get("look")))
        return look is not None and any(step.get("op") == "vignette" for step in look.recipe)
    return False


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
        "adjust (brighter, contrast, shadows, warmer, white balance, saturation, black and "
        "white, vignette, noise, sharpen, blur the face or the background), a look (golden "
        "hour, night, autumn, fog, moody, cinematic, vintage, watercolour, pencil sketch, ...; "
        "also 'except the face' or 'graduated from the top'), crop, rotate, "
        "estimate depth, find landmarks, and for text: extract, detect, replace, remove, add, "
        "redact, highlight a keyword, answer a question, sentiment, caption check. "
        'Example: "remove the cat, recolor the wall to yellow and replace the sign text with OPEN".'
    )


# --- everyday wording: order words, politeness, gerunds, 'Answer:' ------------------------

#: verbs a clause may start with as a gerund ('while redacting the text')
_VERBS = {
    "remove", "erase", "delete", "recolor", "recolour", "color", "colour", "paint", "replace",
    "change", "swap", "update", "add", "insert", "put", "place", "write", "detect", "find",
    "locate", "segment", "select", "redact", "blur", "highlight", "extract", "read", "upscale",
    "extend", "brighten", "darken", "warm", "cool", "sharpen", "make", "turn", "convert",
    "increase", "reduce", "lift", "outline", "mark", "identify", "transcribe", "caption",
    "describe", "estimate", "expand", "enlarge", "deblur", "fix", "correct", "boost", "lower",
    "raise", "apply", "give", "set", "cut", "clear", "isolate", "mask", "dye", "tint", "drop",
    "rewrite", "edit", "alter", "count", "box", "spot", "answer", "translate", "obscure",
    "censor", "anonymize", "anonymise", "pixelate", "denoise", "desaturate", "saturate",
    "lighten", "crop", "rotate", "straighten", "wipe", "take", "get", "lose", "ditch", "zap",
    "clone", "strip", "switch", "pump", "knock", "open", "crisp", "fill", "smooth", "tilt",
    "burn", "dial", "double", "cover", "hide",
}  # fmt: skip
_COURTESY = re.compile(
    r"^(?:please|kindly|first(?:ly)?|then|next|lastly|finally|now|also|and|so|ok(?:ay)?|"
    r"(?:can|could|would|will) you(?: please)?|i(?:'d| would) like(?: you)? to|"
    r"i (?:want|need)(?: you)? to|let's|lets|help me|try to|go ahead and|by|"
    r"i(?:'d| would)? (?:want|need|like|love)(?= (?:a|an|some)\b))\b,?\s*",
    re.I,
)


def _imperative(word: str) -> str | None:
    """'redacting' -> 'redact', 'removing' -> 'remove', 'putting' -> 'put'."""
    if not word.endswith("ing") or len(word) < 6:
        return None
    stem = word[:-3]
    for candidate in (stem, stem + "e", stem[:-1]):
        if candidate in _VERBS:
            return candidate
    return None


def _clause_words(text: str) -> str:
    """A clause without its courtesy ('could you please ...', '... please') and with a
    leading gerund as an imperative ('recoloring it to pink' -> 'recolor it to pink')."""
    text = re.sub(r"[\s,]+(?:please|thanks|thank you|cheers|thx)[\s.!]*$", "", text, flags=re.I)
    while True:
        stripped = _COURTESY.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    first = re.match(r"([a-z]+)\b", text)
    if first and first.group(1) in _VERBS:  # ('could you change it to navy?': a request)
        text = text.rstrip(" ?!")
    verb = _imperative(first.group(1)) if first else None
    return verb + text[first.end() :] if first and verb else text


#: 'keep the bride in colour and turn the rest black and white'
_KEEP_THE_REST = re.compile(
    r"^(?:please\s+)?(?:keep|leave)\s+(?P<kept>.+?)(?:\s+(?:in colou?r|as (?:it|they) (?:is|are)|as is|unchanged|"
    r"untouched|natural|alone|the same|sharp|in focus|crisp))?(?:\s*,\s*(?:and\s+|but\s+|then\s+)?|\s+(?:and|but|then)\s+)"
    r"(?P<edit>.+?)\s+(?:the rest|everything else|everything around (?:it|them|him|her))\b(?P<after>.*)$",
    re.I,
)


_SAID = _QUOTE.pattern
#: what a sign should say, said as a wish: (the words, the edit they ask for)
_SIGN_WISHES = (
    (  # "the board should read 'Back in 5', replace the text"
        re.compile(
            rf"^(?P<thing>(?:the\s+)?[a-z ]+?)\s+(?:should|must|needs? to|has to)\s+(?:read|say)\s+"
            rf"(?P<new>{_SAID})\s*[,;.]?\s*(?:so\s+)?(?:please\s+)?(?:replace|change|update|fix|edit)\s+"
            r"(?:the\s+)?(?:text|wording|words|it|that)\s*[.!]?$",
            re.I,
        ),
        "replace the text on {thing} with {new}",
    ),
    (  # "fix the banner so it reads 'Welcome Home'"
        re.compile(
            rf"^(?:(?:can|could|would) you\s+)?(?:please\s+)?(?:fix|change|update|edit)\s+(?P<thing>the\s+[a-z ]+?)"
            rf"\s+so\s+(?:that\s+)?it\s+(?:reads|says)\s+(?P<new>{_SAID})\s*[.!?]?$",
            re.I,
        ),
        "replace the text on {thing} with {new}",
    ),
    (  # "the menu board says 'Tuesday', make it say 'Thursday'"
        re.compile(
            rf"^(?:the\s+)?[a-z ]+?\s+(?:says|reads)\s+(?P<old>{_SAID})\s*[,;.]?\s*(?:so\s+)?(?:please\s+)?"
            rf"(?:make it|have it|change it to|get it to)\s+(?:say|read)?\s*(?P<new>{_SAID})\s*[.!]?$",
            re.I,
        ),
        "replace {old} with {new}",
    ),
)
#: 'turn everything apart from the red bus black and white'
_ALL_BUT = re.compile(
    r"^(?P<verb>(?:please\s+)?(?:turn|make|convert|render))\s+everything\s+(?:apart from|except(?:\s+for)?|"
    r"other than|but)\s+(?P<kept>.+?)\s+(?P<edit>black[\s-]and[\s-]white|b&w|mono(?:chrome)?|"
    r"gr[ae]y\s*scale|(?:in)?to\s+.+)$",
    re.I,
)
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}  # fmt: skip


def _in_figures(text: str) -> str:
    """Amounts said in words as figures: 'thirty percent' -> '30 percent', 'ninety
    degrees' -> '90 degrees', 'a stop and a half' -> '1.5 stops' (only before a unit:
    'the one from ref' stays)."""
    words = "|".join(_NUMBER_WORDS)

    def figure(found: re.Match[str]) -> str:
        total = sum(_NUMBER_WORDS[w] for w in re.split(r"[\s-]+", found.group(1).lower()))
        return f"{total} {found.group(2)}"

    text = re.sub(
        rf"\b((?:{words})(?:[\s-](?:{words}))?)\s+(percent|%|degrees?|stops?|pixels?|px)\b",
        figure,
        text,
        flags=re.I,
    )
    text = re.sub(
        rf"\b({words})\s+(?:by|to)\s+({words})\b",
        lambda found: (
            f"{_NUMBER_WORDS[found.group(1).lower()]}:{_NUMBER_WORDS[found.group(2).lower()]}"
        ),
        text,
        flags=re.I,
    )  # ('crop to four by five')
    text = re.sub(
        r"\b(?:a|one) stop and a half\b|\bone and a half stops\b", "1.5 stops", text, flags=re.I
    )
    return re.sub(r"\b(?:two) stops and a half\b", "2.5 stops", text, flags=re.I)


def _plainly(text: str) -> str:
    """Amounts in figures (_in_figures), a side said plainly ('the right-hand side', 'the
    bottom of the frame'), a look faded in from a side as a graduated one."""
    text = _in_figures(text)
    text = re.sub(r"\b(left|right)[\s-]hand(?:\s+side)?\b", r"\1", text, flags=re.I)
    text = re.sub(
        r"\b(top|bottom)\s+of\s+the\s+(?:frame|picture|photo|image)\b", r"\1", text, flags=re.I
    )
    return re.sub(
        r"\bfade\s+(.+?)\s+in\s+from\s+(?:the\s+)?(top|bottom|left|right)\b",
        r"\1 graduated from the \2",
        text,
        flags=re.I,
    )  # ('fade a blue hour look in from the top')


def _outside_quotes(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the words outside quotes and outside words in capitals (a
    sign's text, as _lift_literals takes it: 'ONE STOP SHOP' stays as typed)."""
    parts, last = [], 0
    for found in re.finditer(f"{_QUOTE.pattern}|(?-i:{_UPPER})", text, re.I):
        parts += [change(text[last : found.start()]), found.group(0)]
        last = found.end()
    return "".join([*parts, change(text[last:])])


def _in_order(instruction: str) -> str:
    """Order words said as such: 'after you X, Y' and 'Y after you X' are 'X, then Y';
    'before you X, Y' is 'Y, then X'. An 'Answer:' or 'Question:' label goes. A region
    kept first and 'the rest' edited is the edit but for that region."""
    text = re.sub(
        r"^\s*(?:answer|question|q|task|instruction)\s*[:\-]\s*",
        "",
        instruction.strip(),
        flags=re.I,
    )
    text = _outside_quotes(text, _plainly)
    for pattern, edit in _SIGN_WISHES:
        wished = pattern.match(text)
        if wished:
            text = edit.format(**wished.groupdict())
            break
    apart = _ALL_BUT.match(text)
    if apart:
        text = f"{apart.group('verb')} it {apart.group('edit')} except {apart.group('kept')}"
    kept = _KEEP_THE_REST.match(text)
    if kept and re.match(r"(?:the|his|her|their|my|this|that|these|those)\s", kept.group("kept")):
        edit = kept.group("edit").strip()
        verb, _, particle = edit.partition(" ")
        edit = f"{verb} it {particle}" if particle in ("up", "down") else f"{edit} it"
        candidate = f"{edit}{kept.group('after')} except {kept.group('kept')}"
        if parse_adjustment(candidate) or parse_look(candidate):  # (an edit kept off a region)
            text = candidate
    lead = r"(?:you\s+|you've\s+|you have\s+|having\s+)?"
    found = re.match(rf"^\s*after\s+{lead}(.+?),\s*(.+)$", text, re.I | re.S)
    if found:
        return f"{found.group(1)}, then {found.group(2)}"
    found = re.match(rf"^\s*before\s+{lead}(.+?),\s*(.+)$", text, re.I | re.S)
    if found:
        return f"{found.group(2)}, then {found.group(1)}"
    found = re.match(
        rf"^(.+?)\s+after\s+{lead}((?:{'|'.join(sorted(_VERBS))})\b.+)$", text, re.I | re.S
    )
    if found and not re.search(r"\bafter that\b", text, re.I):
        return f"{found.group(2)}, then {found.group(1)}"
    return text


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
    for clause in _with_modifiers(_without_statements(_split(_in_order(instruction)))):
        clause = _Clause(_clause_words(clause.text), clause.literals, _clause_words(clause.raw))
        if not clause.text.strip(" ,.!"):
            continue  # ('paint it red, please': the courtesy alone)
        subtask = _parse_clause(clause)
        verbless = subtask is None and previous_verb and _VERBLESS_OK.match(clause.text)
        if verbless:
            subtask = _parse_clause(_Clause(f"{previous_verb} {clause.text}", clause.literals))
        if subtask is None:
            warnings.append(f"Ignored '{clause.expand(clause.text)}': not an edit layerpath knows.")
            continue
        if (
            subtask.kind == K.OBJECT_SEGMENTATION
            and subtask.target in _PRONOUNS
            and subtasks
            and subtasks[-1].target == "text"
        ):  # 'detect the text and extract it'
            subtask = Subtask(K.TEXT_EXTRACTION, target="text")
        subtask = _resolve_pronoun(subtask, previous_target)
        if (
            previous_target
            and subtask.kind == K.PHOTO_ADJUSTMENT
            and re.search(r"\b(?:everything|all) else\b|\bthe rest\b", clause.text)
        ):  # ('recolour the umbrella red and desaturate everything else': all but it)
            params = {**subtask.params, "outside": True}
            subtask = replace(
                subtask, kind=K.REGION_ADJUSTMENT, target=previous_target, params=params
            )
        verb = None if verbless else _LEADING_VERB.match(clause.text)
        previous_verb = verb.group(1) if verb else previous_verb
        if subtask.kind == K.OBJECT_REPLACEMENT and subtask.to:
            previous_target = subtask.to  # 'replace the cat with a rabbit, recolor it'
        elif subtask.target and subtask.target not in {"text", "background", "scenery"}:
            previous_target = subtask.target
        subtasks.append(subtask)
    subtasks = _once(subtasks)
    language = foreign_language(instruction) if warnings or not subtasks else None
    if language is not None:
        raise UnsupportedInstruction(
            f"This reads as {language}. The offline planner understands English only: write "
            "the instruction in English, or set an LLM endpoint in Settings."
        )
    if not subtasks:
        raise UnsupportedInstruction(
            f'Nothing in "{shown(instruction.strip())}" is an edit layerpath can do. '
            + supported_summary()
        )
    return Plan(tuple(order_subtasks(subtasks)), tuple(warnings))


#: a planner: the request (and where to say what it found) -> the plan
Planner = Callable[[EditRequest, OnEvent], Plan]


def offline_planner(request: EditRequest, on_event: OnEvent) -> Plan:
    """The offline grammar as a planner."""
    return plan_offline(request.prompt)


def _once(subtasks: list[Subtask]) -> list[Subtask]:
    """One edit said twice ('make it feel cosy, like candlelight') is done once."""
    seen: set[str] = set()
    kept = []
    for subtask in subtasks:
        key = repr((subtask.kind, subtask.target, subtask.to, sorted(subtask.params.items())))
        if key not in seen:
            seen.add(key)
            kept.append(subtask)
    return kept


#: an edit that says only that something is to be put right ('fix it', 'correct that')
_FIX_IT = r"(?:fix|correct|sort(?:\s+out)?|deal with|repair|get rid of|remove)\s+(?:it|that|this|them)(?:\s+out)?\s*$"


def _remedied(clause: _Clause, about: str | None) -> _Clause | None:
    """The edit that puts a complaint right, on what it is about ('the sky is too
    bright' -> 'darken the sky'), or None when it names no fault known (remedy)."""
    fix = remedy(_clause_words(clause.text))
    if fix is None:
        return None
    if about and not re.match(r"there\b", clause.text):  # ('there's a cast': no thing's)
        fix = re.sub(r"\bit\b", naming(about), fix)
    amount = re.search(r"\b(?:half a|a|one|\d+(?:\.\d+)?)\s+stops?\b", clause.text)
    if amount:  # ("it's a stop underexposed": by that much)
        fix = f"{fix} by {amount.group(0)}"
    return _Clause(fix, [], fix)


def _without_statements(clauses: list[_Clause]) -> list[_Clause]:
    """The clauses that say what to do, when some do: a complaint, a reason or a purpose
    beside them is dropped (engine/plan/statements.py), a complaint's subject standing in for
    the next clause's 'it' or 'them' ('the sky looks dull, make it bluer'), a ratio it
    names for a crop that names none; a purpose said at a clause's end goes too. Only
    statements ('the photo is too dark'): they are read as edits, as before. A need that
    is no edit ('the faces need to be anonymous') is a complaint about its thing; what a
    statement wants the picture to be ('the client wants it in black and white') is what
    a clause that says no edit of its own asks for ('convert it')."""
    said = [statement_subject(_clause_words(c.text)) for c in clauses]
    for index, clause in enumerate(clauses):
        thing = needed_thing(_clause_words(clause.text))
        if (
            said[index] is None
            and thing
            and _parse_clause(_Clause(as_edit(_clause_words(clause.text)), clause.literals)) is None
        ):
            said[index] = thing
    if all(s is not None for s in said):  # (a complaint alone: what puts it right)
        return [_remedied(c, s) or c for c, s in zip(clauses, said, strict=True)]
    statements = [c for c, s in zip(clauses, said, strict=True) if s is not None]
    wish = next((w for w in (wanted(_clause_words(c.text)) for c in statements) if w), None)
    # ('there's an orange cast, correct it': the complaint says what 'correct it' does)
    fixable = [fixed for c, s in zip(clauses, said, strict=True) if s is not None
               for fixed in [_remedied(c, s)] if fixed]  # fmt: skip
    kept: list[_Clause] = []
    subject: str | None = None
    ratios = [
        re.search(_RATIO, c.text) for c, s in zip(clauses, said, strict=True) if s is not None
    ]
    ratio = next((found.group(0) for found in ratios if found), None)
    for clause, about in zip(clauses, said, strict=True):
        if about is not None:
            subject = about or None
            continue
        text, raw = as_edit(without_purpose(clause.text)), as_edit(without_purpose(clause.raw))
        if fixable and re.match(_FIX_IT, _clause_words(text)):
            kept.append(fixable.pop(0))  # (the complaint put right, on what it is about)
            subject = None
            continue
        if subject is not None and not re.search(r"\b(?:crop|rotat|flip|straighten)", text):
            # 'make it bluer' after 'the sky looks dull' (a crop or a turn is the frame's)
            pronoun = r"\b(?:it|them)\b"
            text = re.sub(pronoun, naming(subject), text, count=1)
            raw = re.sub(pronoun, naming(subject), raw, count=1, flags=re.I)
            subject = None
        if ratio and re.search(r"\bcrop\w*\b", text) and not re.search(_RATIO, text):
            text, raw = f"{text} to {ratio}", f"{raw} to {ratio}"
        if wish and _parse_clause(_Clause(_clause_words(text), clause.literals)) is None:
            text, raw = f"{text} {wish}", f"{raw} {wish}"  # ('convert it' what they want)
            wish = None
        kept.append(_Clause(text, clause.literals, raw))
    return kept


def _with_modifiers(clauses: list[_Clause]) -> list[_Clause]:
    """A clause that only says what to leave alone or how to grade it ('but keep the
    face unchanged', 'graduated from the top') joined to the look or adjustment before
    it, which it modifies; one that only gives a ratio ('4:5') to the crop before it."""
    joined: list[_Clause] = []
    for clause in clauses:
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and re.fullmatch(rf"\s*(?:(?:to|at|in)\s+)?(?:{_RATIO})\s*[.!]?\s*", clause.text)
            and re.search(r"\bcrop\w*\b|\breframe\b", previous.text)
            and not re.search(_NUMBERED_RATIO, previous.text)
        ):  # 'crop this for instagram, 4:5'
            joined[-1] = _Clause(
                f"{previous.text} to {clause.text}",
                previous.literals,
                f"{previous.raw} to {clause.raw}",
            )
        elif (
            previous is not None
            and not clause.literals
            and (MODIFIER_CLAUSE.match(clause.text) or STRENGTH_CLAUSE.match(clause.text))
            and (parse_look(previous.text) or parse_adjustment(previous.text))
        ):
            joined[-1] = _Clause(
                f"{previous.text} {clause.text}", previous.literals, f"{previous.raw} {clause.raw}"
            )
        else:
            joined.append(clause)
    return joined


_LANGUAGES = {"de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
              "pt": "Portuguese", "nl": "Dutch", "pl": "Polish", "ru": "Russian",
              "ja": "Japanese", "zh": "Chinese", "sv": "Swedish", "da": "Danish",
              "tr": "Turkish", "cs": "Czech", "ko": "Korean", "uk": "Ukrainian"}  # fmt: skip


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(["en", *_LANGUAGES])
    return identifier


def foreign_language(instruction: str) -> str | None:
    """The language an instruction is written in when that is surely not English
    (py3langid, a naive Bayes model over byte n-grams that ships with the package);
    None for English, or when too short to tell."""
    words = re.findall(r"\w+", instruction)
    if len(words) < 3 and not re.search(r"[^\x00-\x7f]{2}", instruction):
        return None
    code, probability = _identifier().classify(instruction)
    if code == "en" or probability < 0.8:
        return None
    return _LANGUAGES.get(code, "another language")
