"""The words of a look: 'make it look like golden hour', 'give it a teal and orange
grade', 'turn it into a watercolour', 'add fog' (the modifiers put on it, 'but keep the
face unchanged', are read by engine/plan/modifier_words.py).

A look the paper calls Changing Scenery (a time of day, a season, the weather) over
the whole picture stays that subtask, so a diffusion model can do it where one runs;
every other look, and a scenery look with a region or a modifier, is an adjustment
(op 'look'), made offline.
"""

from __future__ import annotations

import re

from layerpath.engine.plan.adjust_words import region_of
from layerpath.engine.plan.modifier_words import split_modifiers
from layerpath.engine.types import Subtask, SubtaskKind
from layerpath.kit.looks import find_look

K = SubtaskKind

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
    from layerpath.kit.adjustments import ADJUSTMENTS

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
