"""The modifiers photographers put on any adjustment or look: 'but keep the face
unchanged', 'everything except the sky', 'graduated from the top', and the clauses
that only say how strong the edit before them is ('but only subtly', 'about 70%').
"""

from __future__ import annotations

import re
from typing import Any

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
