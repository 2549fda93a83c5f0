"""Looks: global styles made offline — a time of day, a season, the weather, a mood, a
colour grade, an artistic medium, an atmosphere ("make it look like sunset", "give it a
teal and orange grade", "turn it into a watercolour", "add fog").

A look is data (tools/data/looks.json): the words that ask for it, a recipe of steps at
full strength, and what a viewer must see change (the check's expectations). Its steps
are the adjustments of tools/adjust.py and a few of its own (split toning, a hue band
turned, haze, glow, clarity, a faded black point, an artistic medium). A look is one
adjustment (op 'look'), so it has one strength (the step's opacity over the picture), can
be made again at another strength, and works on the whole picture, inside a region,
outside one ("keep the face unchanged") or graduated from one side (tools/adjust.py).
The paper's Changing Scenery ('make it night') gets the same looks through
`SceneryLook` where no diffusion model can run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict

from layerpath.errors import BadInput

#: the look's own steps beyond the adjustments; the others are tools/adjust.py's ops
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
#: the side of a working copy an artistic medium is painted on (then scaled back):
#: OpenCV's stylization takes 40 s on a 24 MP photo, 1 s at this size
MEDIUM_PIXELS = 2_000_000
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
    from layerpath.tools.adjust import ADJUSTMENTS

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


# --- the looks' own steps, on float RGB display values in 0..1 -----------------------------


def _luma(v: np.ndarray) -> np.ndarray:
    return (v[..., 0] * 0.2126 + v[..., 1] * 0.7152 + v[..., 2] * 0.0722).astype(np.float32)


def _smoothstep(lo: float, hi: float, x: np.ndarray) -> np.ndarray:
    t = np.clip((x - lo) / (hi - lo), 0.0, 1.0)
    return t * t * (3 - 2 * t)


def _chroma_of(colour: Sequence[float]) -> np.ndarray:
    """A colour's offset from the grey of its own brightness (what it adds as a tint)."""
    c = np.asarray(colour, np.float32) / 255.0
    return c - float(_luma(c[None, None])[0, 0])


def split_tone(v: np.ndarray, amount: float, step: Mapping[str, Any]) -> np.ndarray:
    """The shadows tinted towards one colour and the highlights towards another, the
    brightness kept (a colourist's split toning)."""
    y = _luma(v)[..., None]
    low = 1.0 - _smoothstep(0.05, 0.55, y)
    high = _smoothstep(0.45, 0.95, y)
    tint = low * _chroma_of(step["shadows"]) + high * _chroma_of(step["highlights"])
    return np.clip(v + 0.5 * amount * tint, 0.0, 1.0)


def hue_shift(v: np.ndarray, amount: float, step: Mapping[str, Any]) -> np.ndarray:
    """The colours of one band of hues (degrees) turned towards another hue, the more the
    closer to the band's middle and the more colourful: leaves' green to autumn's
    orange, a grey stone untouched. How far a pixel turns is read on a lightly softened
    copy, so neighbours turn alike: read on the pixel itself, a photo's colour noise at
    the band's edge turned neighbours by different amounts (a mottled leaf at 100 %)."""
    hsv = cv2.cvtColor(np.ascontiguousarray(v, np.float32), cv2.COLOR_RGB2HSV)
    sigma = max(1.0, HUE_SOFTENING * _frame_side(v, step))
    soft = cv2.cvtColor(cv2.GaussianBlur(np.ascontiguousarray(v, np.float32), (0, 0), sigma),
                        cv2.COLOR_RGB2HSV)  # fmt: skip
    start, goal, width = float(step["from"]), float(step["to"]), float(step["width"])
    distance = np.abs((soft[..., 0] - start + 180.0) % 360.0 - 180.0)
    weight = (1.0 - _smoothstep(0.5 * width, width, distance)) * _smoothstep(
        0.08, 0.3, soft[..., 1]
    )
    hue = hsv[..., 0]
    turn = ((goal - start + 180.0) % 360.0) - 180.0
    hsv[..., 0] = (hue + amount * weight * turn) % 360.0
    return np.clip(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB), 0.0, 1.0)


def haze(v: np.ndarray, amount: float, step: Mapping[str, Any]) -> np.ndarray:
    """Fog: the picture veiled towards a light haze colour, more towards the top of the
    frame (where the distance usually is) and in the mid-tones than in what is bright
    already."""
    top, h, _ = step.get("rows", (0, v.shape[0], v.shape[1]))
    rows = (np.arange(top, top + v.shape[0], dtype=np.float32) / max(1, h - 1))[:, None, None]
    depth = 0.45 + 0.55 * (1.0 - rows)
    colour = np.asarray(step.get("colour", (205, 210, 215)), np.float32) / 255.0
    weight = np.clip(amount * depth, 0.0, 0.92)
    return v + weight * (colour - v)


#: the blur widths of glow and clarity, as shares of the frame's shorter side
GLOW_SHARE, CLARITY_SHARE = 0.02, 0.015
#: the softening a hue turn's weight is read through, as a share of the shorter side
HUE_SOFTENING = 0.0015


#: how far each step that reads around a pixel reaches, as a share of the shorter side
REACH = {"glow": GLOW_SHARE, "clarity": CLARITY_SHARE, "hue_shift": HUE_SOFTENING}


def halo(look: Look, frame: tuple[int, int]) -> int:
    """The rows a band of the look needs above and below it: three of its widest blur
    (none for a look whose every step reads the pixel alone)."""
    reach = max((REACH.get(str(step["op"]), 0.0) for step in look.recipe), default=0.0)
    return int(np.ceil(3 * reach * min(frame))) + 2 if reach else 0


def _frame_side(v: np.ndarray, step: Mapping[str, Any]) -> float:
    """The shorter side of the whole frame (a band of rows knows its frame)."""
    _, h, w = step.get("rows", (0, v.shape[0], v.shape[1]))
    return float(min(h, w))


def glow(v: np.ndarray, amount: float, step: Mapping[str, Any]) -> np.ndarray:
    """A soft bloom: the bright parts spread wide and laid over the picture as light
    (screen), as diffusion filters on a lens do."""
    from layerpath.tools.adjust import wide_blur

    y = _luma(v)[..., None]
    bright = v * _smoothstep(0.45, 0.95, y)
    spread = wide_blur(np.ascontiguousarray(bright), max(2.0, GLOW_SHARE * _frame_side(v, step)))
    return 1.0 - (1.0 - v) * (1.0 - np.clip(amount * spread, 0.0, 1.0))


def clarity(v: np.ndarray, amount: float, step: Mapping[str, Any]) -> np.ndarray:
    """Local contrast in the mid-tones (a raw developer's clarity): the difference from a
    wide blur added back, least in the deepest shadows and brightest highlights."""
    from layerpath.tools.adjust import wide_blur

    y = _luma(v)
    local = y - wide_blur(y, max(2.0, CLARITY_SHARE * _frame_side(v, step)))
    mid = 4.0 * y * (1.0 - y)
    return np.clip(v + (amount * 1.2 * local * mid)[..., None], 0.0, 1.0)


def fade(v: np.ndarray, amount: float) -> np.ndarray:
    """A faded black point: blacks lifted to a matte grey, whites eased."""
    lift = 0.1 * amount
    return lift + v * (1.0 - 1.5 * lift)


def medium(v: np.ndarray, step: Mapping[str, Any]) -> np.ndarray:
    """The picture made as if in another medium (8-bit OpenCV filters: the look is a
    painter's, not a sensor's, so 8 bits are enough)."""
    style = str(step["style"])
    eight = np.clip(np.rint(v * 255.0), 0, 255).astype(np.uint8)
    if style == "pencil":
        return np.repeat(_pencil(eight)[..., None], 3, axis=2)
    if style == "colour_pencil":
        paper = _pencil(eight)[..., None]
        tint = 0.55 + 0.45 * (eight.astype(np.float32) / 255.0)  # the colour, lightened
        return np.clip(paper * tint, 0.0, 1.0)
    h, w = eight.shape[:2]
    scale = min(1.0, float(np.sqrt(MEDIUM_PIXELS / (h * w))))
    small = (
        eight
        if scale >= 1.0
        else cv2.resize(
            eight,
            (max(1, round(w * scale)), max(1, round(h * scale))),
            interpolation=cv2.INTER_AREA,
        )
    )
    bgr = cv2.cvtColor(small, cv2.COLOR_RGB2BGR)
    # the filters' widths in pixels, for a picture of this size (tuned at 1000 px high)
    size = min(small.shape[:2]) / 1000.0
    if style == "watercolor":
        painted = cv2.stylization(bgr, sigma_s=float(np.clip(50 * size, 5, 200)), sigma_r=0.4)
    elif style == "oil":
        painted = _oil(bgr, size)
    elif style == "cartoon":
        painted = _flat_colours(bgr)
    else:
        raise BadInput(f"'{style}' is not a medium layerpath paints in.")
    out = cv2.cvtColor(painted, cv2.COLOR_BGR2RGB)
    if scale < 1.0:
        out = cv2.resize(out, (w, h), interpolation=cv2.INTER_CUBIC)
    result = out.astype(np.float32) / 255.0
    if style == "cartoon":  # the ink lines at the photo's own size, crisp
        result *= _ink_lines(eight)[..., None]
    return result


def _oil(bgr: np.ndarray, size: float) -> np.ndarray:
    """Paint in patches: a Kuwahara filter (each pixel takes the mean colour of the
    calmest of the four squares it is a corner of), so edges stay sharp and what lies
    between them turns to flat dabs of colour, twice, at two brush sizes."""
    painted = bgr.astype(np.float32)
    for radius in (max(2, round(6 * size)), max(1, round(3 * size))):
        painted = _kuwahara(painted, radius)
    return np.clip(painted, 0, 255).astype(np.uint8)


def _kuwahara(img: np.ndarray, radius: int) -> np.ndarray:
    side = radius + 1
    mean = cv2.blur(img, (side, side), borderType=cv2.BORDER_REFLECT)
    grey = img.mean(axis=2)
    spread = (
        cv2.blur(grey * grey, (side, side), borderType=cv2.BORDER_REFLECT)
        - cv2.blur(grey, (side, side), borderType=cv2.BORDER_REFLECT) ** 2
    )
    half = side // 2
    pad = ((half, half), (half, half))
    means = np.pad(mean, (*pad, (0, 0)), mode="edge")
    spreads = np.pad(spread, pad, mode="edge")
    h, w = grey.shape
    best = np.full((h, w), np.inf, np.float32)
    out = np.empty_like(img)
    for dy in (0, 2 * half):  # the square above-left, above-right, below-left, below-right
        for dx in (0, 2 * half):
            here = spreads[dy : dy + h, dx : dx + w]
            calmer = here < best
            best[calmer] = here[calmer]
            out[calmer] = means[dy : dy + h, dx : dx + w][calmer]
    return out


def _pencil(eight: np.ndarray) -> np.ndarray:
    """A graphite drawing (colour dodge of the grey by its blurred negative), on a paper
    a little off white; 0..1."""
    grey = cv2.cvtColor(eight, cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
    sigma = max(1.5, 0.004 * min(grey.shape))
    blurred = cv2.GaussianBlur(1.0 - grey, (0, 0), sigma)
    dodge = np.clip(grey / np.maximum(1.0 - blurred, 1e-3), 0.0, 1.0)
    return (0.96 * dodge**2.2).astype(np.float32)  # darker strokes, a paper's white


def _flat_colours(bgr: np.ndarray) -> np.ndarray:
    smooth = bgr
    for _ in range(2):
        smooth = cv2.bilateralFilter(smooth, 9, 60, 9)
    levels = 6.0  # colours posterised to a few flat steps per channel
    return (np.floor(smooth.astype(np.float32) / 256.0 * levels) + 0.5) * (256.0 / levels)


def _ink_lines(eight: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(eight, cv2.COLOR_RGB2GRAY)
    grey = cv2.medianBlur(grey, 5 if min(grey.shape) < 2000 else 7)
    block = max(3, (int(0.01 * min(grey.shape)) // 2) * 2 + 1)
    edges = cv2.adaptiveThreshold(
        grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, 6
    )
    return 0.15 + 0.85 * (edges.astype(np.float32) / 255.0)


# --- a look ---------------------------------------------------------------------------------

#: steps that are one curve per colour channel: a run of them is made as one table
PER_CHANNEL = {"exposure", "contrast", "temperature", "tint", "curve", "fade"}
TABLE_STEPS = 1 << 16


def _runs(recipe: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The recipe's steps, consecutive per-channel ones grouped."""
    runs: list[list[dict[str, Any]]] = []
    for step in recipe:
        if runs and step["op"] in PER_CHANNEL and runs[-1][0]["op"] in PER_CHANNEL:
            runs[-1].append(step)
        else:
            runs.append([step])
    return runs


def _key(step: Mapping[str, Any]) -> str:
    return json.dumps(step, sort_keys=True)


@lru_cache(maxsize=64)
def _tables(steps: tuple[str, ...]) -> np.ndarray:
    """The run of per-channel steps worked out on every level once: (levels, 3)."""
    from layerpath.tools.adjust import apply

    ramp = np.repeat(np.linspace(0.0, 1.0, TABLE_STEPS + 1, dtype=np.float32)[:, None, None], 3, 2)
    for text in steps:
        step = json.loads(text)
        op, amount = str(step["op"]), float(step.get("amount", 1.0))
        ramp = fade(ramp, amount) if op == "fade" else apply(op, amount, ramp, step)
    return np.clip(ramp[:, 0, :], 0.0, 1.0).astype(np.float32)


def _through_tables(v: np.ndarray, tables: np.ndarray) -> np.ndarray:
    index = np.clip(v, 0.0, 1.0) * np.float32(TABLE_STEPS) + np.float32(0.5)
    index = index.astype(np.int32)
    return np.stack([np.take(tables[:, c], index[..., c]) for c in range(3)], axis=-1)


def render(look: Look, strength: float, v: np.ndarray, extra: Mapping[str, Any]) -> np.ndarray:
    """The look at `strength` (0..1: the look laid over the picture at that opacity) on
    float RGB `v` (0..1); `extra` carries where a band of rows lies in the frame."""
    from layerpath.tools.adjust import ADJUSTMENTS, apply

    styled = v
    for steps in _runs(look.recipe):
        if steps[0]["op"] in PER_CHANNEL:  # one table per channel for the whole run
            styled = _through_tables(styled, _tables(tuple(_key(step) for step in steps)))
            continue
        step = steps[0]
        op, amount = str(step["op"]), float(step.get("amount", 1.0))
        here = {**step, **{k: extra[k] for k in ("rows",) if k in extra}}
        if op == "split_tone":
            styled = split_tone(styled, amount, step)
        elif op == "hue_shift":
            styled = hue_shift(styled, amount, here)
        elif op == "haze":
            styled = haze(styled, amount, here)
        elif op == "glow":
            styled = glow(styled, amount, here)
        elif op == "clarity":
            styled = clarity(styled, amount, here)
        elif op == "fade":
            styled = fade(styled, amount)
        elif op == "medium":
            styled = medium(styled, step)
        elif op in ADJUSTMENTS:
            styled = apply(op, amount, styled, here)
        else:
            raise BadInput(f"look {look.name}: '{op}' is not a step layerpath knows.")
    return np.clip(v + strength * (styled - v), 0.0, 1.0).astype(np.float32)
