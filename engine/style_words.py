"""The words of a look and of where an adjustment goes: 'make it look like golden hour',
'give it a teal and orange grade', 'turn it into a watercolour', 'add fog', and the
modifiers photographers put on any adjustment or look — 'but keep the face unchanged',
'everything except the sky', 'graduated from the top'.

A look the paper calls Changing Scenery (a time of day, a season, the weather) over
the whole picture stays that subtask, so a diffusion model can do it where one runs;
every other look, and a scenery look with a region or a modifier, is an adjustment
(op 'look'), made offline.
"""

from __future__ import annotations

import re
from typing import Any

from layerpath.engine.types import Subtask, SubtaskKind
from layerpath.tools.looks import find_look

K = SubtaskKind

#: a clause that only says what to leave alone: it belongs to the edit before it
MODIFIER_CLAUSE = re.compile(
    r"^(?:but\s+|yet\s+|though\s+)?(?:(?:please\s+)?(?:keep(?:ing)?|leav(?:e|ing)|preserv(?:e|ing)|protect(?:ing)?|"
    r"don'?t (?:touch|change))\b|except\b|apart from\b|other than\b|not (?:on|to) the\b|"
    r"not (?:the|my|his|her|their|its)\b|excluding\b|"
    r"graduat\w*\b|gradually\b|fading\s+(?:out\s+)?(?:from|towards?|into|to)\b)",
    re.I,
)
#: a clause that only says how strong the edit before it is ('but only subtly', 'about
#: 70%', 'and go strong with it', 'dialled down to 30%')
STRENGTH_CLAUSE = re.compile(
    r"^(?:but\s+|and\s+|yet\s+)?(?:only\s+|just\s+|keep it\s+|make it\s+|go\s+|at\s+|about\s+|"
    r"around\s+|roughly\s+|dial(?:l?ed)?\s+(?:down|back|up)\s+to\s+|turned\s+(?:down|up)\s+to\s+)*"
    r"(?:a\s+)?(?:subtl[ey]|gentl[ey]|light(?:ly)?|soft(?:ly)?|strong(?:ly)?|heavy|full[\s-]strength|"
    r"half[\s-]strength|\d+(?:\.\d+)?\s*(?:%|percent))(?:\s+(?:with it|strength|please))?[\s.!]*$",
    re.I,
)
_KEEP = re.compile(
    r"\b(?:but\s+|and\s+|yet\s+)?(?:please\s+)?(?:keep(?:ing)?|leav(?:e|ing)|preserv(?:e|ing)|protect(?:ing)?|"
    r"don'?t (?:touch|change))\s+(?P<region>.+?)"
    r"(?:\s+(?:unchanged|untouched|as (?:it|they) (?:is|are|was|were)|as is|alone|intact|the same|"
    r"natural|original|unedited|as before))?\s*$",
    re.I,
)
_EXCEPT = re.compile(
    r"\b(?:(?:everything|everywhere|all)\s+)?(?:except(?:\s+for)?|apart from|other than|but not|"
    r"not (?:on|to)|excluding|everything but|all but|everywhere but)\s+(?P<region>.+?)\s*$",
    re.I,
)
_SIDE = r"(?:from|at|on|towards?|into|to)\s+(?:the\s+)?(?:top|bottom|left|right|sky|ground)\b"
_GRADUATED = re.compile(
    r"\b(?:(?:with|using)\s+(?:a|an)\s+)?(?:graduat\w*|gradual(?:ly)?|gradient|grad(?:\s+nd)?)\b"
    r"(?:\s+(?:filter|effect|look|nd))?(?:\s+" + _SIDE + ")?"
    r"|\bfad(?:e|es|ing)(?:\s+(?:out|away|off))?\s+" + _SIDE,
    re.I,
)
_SIDE_PARTS = re.compile(
    r"(?P<prep>from|at|on|towards?|into|to)\s+(?:the\s+)?(?P<side>top|bottom|left|right|sky|ground)\b",
    re.I,
)
#: what a graduated effect starting from the sky or the ground means in the frame
_SIDE_WORDS = {"sky": "top", "ground": "bottom"}
_OPPOSITE = {"top": "bottom", "bottom": "top", "left": "right", "right": "left"}
#: verbs that make a clause an object or text edit, whatever look word it holds
_OBJECT_VERBS = re.compile(
    r"\b(?:remove|erase|delete|replace|swap|recolou?r|detect|segment|find|locate|extract|"
    r"highlight|redact|caption|crop|rotate|write|type|select|mask|outpaint|extend|upscale|"
    r"deblur|answer|read|count|paint\s+(?:it|the|them)\b)",
    re.I,
)
#: 'a painting of a cat' is a thing to add, not a look
_A_PICTURE_OF = re.compile(
    r"\b(?:a|an|the)\s+(?:painting|drawing|sketch|illustration|cartoon|comic)\s+of\b", re.I
)
#: ('soft' is not among them: 'a soft glow', 'soft light' say what the look is like)
_SOFTER = r"\b(?:slight(?:ly)?|a (?:little )?bit|a little|a touch|a hint|a tad|a smidge(?:n)?|subtl[ey]|gentl[ey]|somewhat|mild(?:ly)?|lightly|a light\b|barely|softly|understated|restrained)\b"
_STRONGER = r"\b(?:much|a lot|lots|loads|strong(?:ly)?|heav(?:y|ily)|very|really|full(?:y)?|extreme(?:ly)?|intense(?:ly)?|completely|totally|all the way|max(?:imum)?)\b"


#: words after a look's name that make it the look, not a thing: 'the vintage look'
_LOOK_NOUNS = (
    r"\s*(?:(?:film|photo|colou?r)\s+)?(?:look|style|grade|grading|feel|effect|filter|vibe|mood|tone|toning|atmosphere|"
    r"version|lighting|light|colou?rs?|palette|preset)\b"
)


def split_modifiers(text: str) -> tuple[str, dict[str, Any], str | None]:
    """The clause without its modifiers, the modifiers' parameters ('outside': the region
    keeps its pixels; 'graduated': the side the effect starts from), and the region an
    'outside' names ('the face'), or None."""
    params: dict[str, Any] = {}
    keep_region = None
    # ('but keep it subtle': how strong, not a region kept)
    text = re.sub(
        r"\b(?:but\s+|and\s+)?keep it\s+(subtle|light|gentle|understated|restrained)\b", r"\1", text
    )
    for pattern in (_KEEP, _EXCEPT):
        found = pattern.search(text)
        if found is not None:
            keep_region = found.group("region")
            text = text[: found.start()]
            params["outside"] = True
            break
    graduated = _GRADUATED.search(text)
    if graduated is not None:
        parts = _SIDE_PARTS.search(graduated.group(0))
        named = re.search(r"\b(?:the\s+)?(top|bottom|left|right)\b", text)
        if parts is None and named is not None:  # 'darken the bottom gradually'
            side = named.group(1).lower()
            text = text[: named.start()] + " " + text[named.end() :]
            graduated = _GRADUATED.search(text)
            assert graduated is not None
        else:
            side = (parts.group("side") if parts else "top").lower()
        side = _SIDE_WORDS.get(side, side)
        if parts is not None and parts.group("prep").lower() in ("toward", "towards", "into", "to"):
            side = _OPPOSITE[side]  # fading towards the bottom: whole at the top
        params["graduated"] = side
        text = text[: graduated.start()] + " " + text[graduated.end() :]
    return text, params, keep_region


def strength_of(text: str, default: float) -> float:
    """A look's strength from the words: a number ('at 50 %'), softer or stronger words,
    or the default."""
    number = re.search(r"(\d+(?:\.\d+)?)\s*(%|percent\b)", text)
    if number is not None:
        return max(0.0, min(1.0, float(number.group(1)) / 100.0))
    if re.search(r"\bhalf[\s-]strength\b", text):
        return 0.5
    if re.search(_SOFTER, text):
        return round(default * 0.5, 3)
    if re.search(_STRONGER, text):
        return 1.0
    return default


def parse_look(text: str) -> Subtask | None:
    """One clause's look, or None when it names none (or is an object or text edit that
    happens to hold a look's word: 'remove the painting')."""
    from layerpath.engine.adjust_words import region_of
    from layerpath.tools.adjust import ADJUSTMENTS

    found = find_look(text)
    if found is None or _OBJECT_VERBS.search(text) or _A_PICTURE_OF.search(text):
        return None
    look, match = found
    before, after = text[: match.start()], text[match.end() :]
    as_noun = re.search(r"\b(?:the|this|that|my|its|their)\s+$", before) and not re.search(
        r"\b(?:like|from|of|in)\s+(?:the|a)\s+$", before
    )  # ('a photo from the seventies': the era, not a thing in the picture)
    if as_noun and not re.match(r"(?:\s+[a-z-]+){0,2}?" + _LOOK_NOUNS, after):
        return None  # 'make the sunset more orange': the sunset is what is edited
    rest, params, keep = split_modifiers(text[: match.start()] + " " + text[match.end() :])
    rest = re.sub(r"\d+(?:\.\d+)?\s*(?:%|percent\b)|" + _SOFTER + "|" + _STRONGER, " ", rest)
    rest = re.sub(
        r"\b(?:look|looks|looking|like|style|styled|grade|graded|grading|feel|feeling|vibe|"
        r"mood|atmosphere|effect|filter|tone|toned|lighting|light|shot|scene|scenery|version|"
        r"season|weather|time|day|as if it were|into|turn|make|give|apply|add|change|convert|"
        r"painting|paintings|drawing|sketch|artwork|art|rendering|render|done|made|in|"
        # adjectives that restate the look ('a warm golden hour feel', 'a nice vintage look')
        r"warm|cool|cold|nice|lovely|beautiful|pretty|classic|proper|real|kind|sort|faded|"
        r"retro|old|old-school|aged|dark|bright|soft|muted|rich|gritty|punchy|glowing)\b",
        " ",
        rest,
    )
    for _ in range(3):  # 'a snowy winter feel', 'a foggy morning': one look, said twice
        other = find_look(rest)
        if other is None:
            break
        rest = rest[: other[1].start()] + " " + rest[other[1].end() :]
    rest = re.sub(
        r"\b(?:morning|evening|afternoon|film|movie|cinema|photo|photograph)\b", " ", rest
    )
    target, position = region_of(rest)
    if keep is not None:
        target, position = region_of(keep)
        if target is None:  # 'keep it as it is': nothing is left to change
            return None
    strength = strength_of(text, ADJUSTMENTS["look"].default)
    if look.scenery and target is None and not params:
        amount = {} if strength == ADJUSTMENTS["look"].default else {"amount": strength}
        return Subtask(
            K.CHANGING_SCENERY, target="scenery", to=match.group(1).lower(), params=amount
        )
    params = {"op": "look", "look": look.name, "amount": strength, **params}
    if position:
        params["position"] = position
    kind = K.REGION_ADJUSTMENT if target else K.PHOTO_ADJUSTMENT
    return Subtask(kind, target=target, params=params)
