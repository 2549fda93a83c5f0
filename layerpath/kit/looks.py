"""The looks' catalogue: a time of day, a season, the weather, a mood, a colour grade,
an artistic medium, an atmosphere ("make it look like sunset", "give it a teal and
orange grade", "turn it into a watercolour", "add fog").

A look is data (tools/data/looks.json): the words that ask for it, a recipe of steps at
full strength, and what a viewer must see change (the check's expectations). Its steps
are the adjustments (kit/adjustments.py) and a few of its own (split toning, a hue band
turned, haze, glow, clarity, a faded black point, an artistic medium: tools/looks.py).
A look is one adjustment (op 'look'), so it has one strength (the step's opacity over
the picture), can be made again at another strength, and works on the whole picture,
inside a region, outside one ("keep the face unchanged") or graduated from one side
(tools/adjust.py renders it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from layerpath.errors import BadInput
from layerpath.kit.adjustments import ADJUSTMENTS, SIDES, adjustment_ops

#: the look's own steps beyond the adjustments (tools/looks.py); the others are the ops
#: of kit/adjustments.py
OWN_STEPS = {"split_tone", "hue_shift", "haze", "glow", "clarity", "fade", "medium"}
#: steps that read a neighbourhood (a blur, a filter) rather than the pixel alone
NEIGHBOURHOOD = {
    "glow",
    "clarity",
    "hue_shift",
    "medium",
    "denoise",
    "sharpen",
    "blur",
    "white_balance",
}
#: of those, the ones whose reach is a share of the frame: a band with a margin will do
NEIGHBOURHOOD_BANDED = {"glow", "clarity", "hue_shift"}
#: what the check measures; see looks.json's comment
MEASURES = (
    "lightness",
    "warmth",
    "tint",
    "chroma",
    "contrast",
    "local_contrast",
    "black_point",
    "greens",
    "autumn_hues",
    "split",
    "redrawn",
)


class Look(BaseModel):
    """One look of the catalogue."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    label: str
    group: str
    scenery: bool = False
    words: list[str]
    recipe: list[dict[str, Any]]
    expect: dict[str, float]

    @property
    def banded(self) -> bool:
        """Whether the look can be made a band of rows at a time, with a margin of rows
        around each band for its blurs (all but an artistic medium's, which paints the
        whole picture at once)."""
        return all(
            step["op"] in NEIGHBOURHOOD_BANDED or step["op"] not in NEIGHBOURHOOD
            for step in self.recipe
        )


@lru_cache(maxsize=1)
def looks() -> dict[str, Look]:
    """The catalogue, by name."""
    text = resources.files("layerpath.tools").joinpath("data/looks.json").read_text()
    return {look.name: look for look in map(look_from, json.loads(text)["looks"])}


def look_from(record: Mapping[str, Any]) -> Look:
    """A catalogue record as a Look; a ValueError when its check names a measure the
    check does not make or a step layerpath does not know (said at load, not when a
    photographer's run is judged)."""
    look = Look.model_validate(record)
    unknown = set(look.expect) - set(MEASURES)
    steps = {str(step.get("op")) for step in look.recipe} - OWN_STEPS - set(ADJUSTMENTS)
    if unknown or steps:
        raise ValueError(f"look {look.name}: unknown measures or steps {sorted(unknown | steps)}")
    return look


@lru_cache(maxsize=1)
def _word_pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    by_word = {w.lower(): look.name for look in looks().values() for w in look.words}
    alternatives = sorted(by_word, key=len, reverse=True)  # 'golden hour' before 'hour'
    spaced = [re.escape(w).replace(r"\ ", r"[\s-]+") for w in alternatives]
    return re.compile(r"\b(" + "|".join(spaced) + r")\b", re.I), by_word


def find_look(text: str) -> tuple[Look, re.Match[str]] | None:
    """The look the words name ('make it look like golden hour' -> sunset), with where
    they name it; None when they name none."""
    pattern, by_word = _word_pattern()
    match = pattern.search(text)
    if match is None:
        return None
    word = re.sub(r"[\s-]+", " ", match.group(1).lower())
    return looks()[by_word[word]], match


def look_words() -> list[str]:
    """Every phrase that names a look."""
    return [w.lower() for look in looks().values() for w in look.words]


def look_named(name: str) -> Look:
    """A look by its name or by any of its words; a clear error naming the looks."""
    if name in looks():
        return looks()[name]
    found = find_look(name)
    if found is None:
        raise BadInput(f"'{name}' is not a look layerpath knows; the looks: {look_names()}.")
    return found[0]


def look_names() -> str:
    return ", ".join(look.label.lower() for look in looks().values())


#: the blur widths of glow and clarity, as shares of the frame's shorter side
GLOW_SHARE, CLARITY_SHARE = 0.02, 0.015
#: the softening a hue turn's weight is read through, as a share of the shorter side
HUE_SOFTENING = 0.0015


#: how far each step that reads around a pixel reaches, as a share of the shorter side,
#: where a band needs a margin of rows for it (glow and clarity read a field of the whole
#: picture instead: tools/looks.py)
REACH = {"hue_shift": HUE_SOFTENING}


def halo(look: Look, frame: tuple[int, int]) -> int:
    """The rows a band of the look needs above and below it: three of its widest blur
    (none for a look whose every step reads the pixel alone)."""
    reach = max((REACH.get(str(step["op"]), 0.0) for step in look.recipe), default=0.0)
    return int(np.ceil(3 * reach * min(frame))) + 2 if reach else 0


def adjustment_problem(params: Mapping[str, Any]) -> str | None:
    """What is wrong with an adjustment's parameters (an unknown op, an amount outside
    its range), said before any tool runs; None when they are usable."""
    spec = ADJUSTMENTS.get(str(params.get("op")))
    if spec is None:
        return f"'{params.get('op')}' is not an adjustment; the ops are: {adjustment_ops()}"
    if params.get("op") == "look":
        if params.get("look") not in looks():
            return (
                f"'{params.get('look')}' is not a look layerpath knows; the looks: {look_names()}"
            )
    if params.get("graduated") is not None and params.get("graduated") not in SIDES:
        return f"a graduated adjustment starts from the {', '.join(SIDES)}; not '{params.get('graduated')}'"
    amount = params.get("amount")
    if amount is None:
        return None
    try:
        value = float(amount)
    except (TypeError, ValueError):
        return f"the amount {amount!r} is not a number"
    if not spec.low <= value <= spec.high:
        unit = f" {spec.unit}" if spec.unit else ""
        return (
            f"{spec.name} goes from {spec.low:g} to {spec.high:g}{unit}; {value:g} is outside that."
        )
    return None
