"""The looks' own steps (split toning, a hue band turned, haze, glow, clarity, a faded
black point, an artistic medium), on float RGB display values in 0..1. The catalogue of
looks is kit/looks.py; tools/adjust.py renders a look's recipe, these steps among its
adjustments. The paper's Changing Scenery ('make it night') gets the same looks through
`SceneryLook` where no diffusion model can run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from layerpath.errors import BadInput
from layerpath.kit.imaging import luma, smoothstep
from layerpath.kit.looks import CLARITY_SHARE, GLOW_SHARE, HUE_SOFTENING

#: the side of a working copy an artistic medium is painted on (then scaled back):
#: OpenCV's stylization takes 40 s on a 24 MP photo, 1 s at this size
MEDIUM_PIXELS = 2_000_000
# --- the looks' own steps, on float RGB display values in 0..1 -----------------------------


def _chroma_of(colour: Sequence[float]) -> np.ndarray:
    """A colour's offset from the grey of its own brightness (what it adds as a tint)."""
    c = np.asarray(colour, np.float32) / 255.0
    return c - float(luma(c[None, None])[0, 0])


def split_tone(v: np.ndarray, amount: float, step: Mapping[str, Any]) -> np.ndarray:
    """The shadows tinted towards one colour and the highlights towards another, the
    brightness kept (a colourist's split toning): each pixel's tint read from a table of
    its luma's steps (one gather, not the two ramps worked per pixel)."""
    tints = _tone_table(0.5 * amount, tuple(step["shadows"]), tuple(step["highlights"]))
    index = np.asarray(luma(v))  # (a single colour's: an array to work in place)
    index *= np.float32(TONE_STEPS)
    index += np.float32(0.5)
    np.clip(index, 0, TONE_STEPS, out=index)
    out = np.take(tints, index.astype(np.int32), axis=0)
    out += v
    return np.clip(out, 0.0, 1.0, out=out)


#: the steps of luma a split toning's table holds (its tint moves by a hundred-thousandth
#: of a level from one step to the next)
TONE_STEPS = 1 << 16


@lru_cache(maxsize=16)
def _tone_table(
    share: float, shadows: tuple[float, ...], highlights: tuple[float, ...]
) -> np.ndarray:
    """The tint split toning adds at each step of luma: the shadows' colour fading out
    over 0.05-0.55, the highlights' fading in over 0.45-0.95, `share` of each."""
    y = np.linspace(0.0, 1.0, TONE_STEPS + 1, dtype=np.float64)
    low = 1.0 - smoothstep(0.05, 0.55, y)
    high = smoothstep(0.45, 0.95, y)
    tint = low[:, None] * _chroma_of(shadows) + high[:, None] * _chroma_of(highlights)
    return (share * tint).astype(np.float32)


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
    weight = (1.0 - smoothstep(0.5 * width, width, distance)) * smoothstep(0.08, 0.3, soft[..., 1])
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


def _frame_side(v: np.ndarray, step: Mapping[str, Any]) -> float:
    """The shorter side of the whole frame (a band of rows knows its frame)."""
    _, h, w = step.get("rows", (0, v.shape[0], v.shape[1]))
    return float(min(h, w))


# --- glow and clarity: a wide blur of the picture, as a field -----------------------------
#
# Their blur is wide (a fiftieth of the frame): it is worked out on the picture scaled down
# by whole blocks of pixels (a band of rows whose height is a multiple of the block gives
# the whole picture's blocks), blurred there, and read back a band of rows at a time. So a
# camera file's look is made in small bands with no margin, and the picture made whole is
# the picture made in bands.

#: the steps read through a field, and the width of their blur (a share of the shorter side)
FIELD_STEPS = {"glow": GLOW_SHARE, "clarity": CLARITY_SHARE}


def field_blur(op: str, frame: tuple[int, int]) -> tuple[float, int]:
    """The step's blur sigma for a frame (h, w) and the block its field is scaled down by:
    a pixel per 8 of the sigma, so a wide blur is still 8 blocks wide there."""
    sigma = max(2.0, FIELD_STEPS[op] * min(frame))
    return sigma, max(1, int(sigma // 8))


def field_source(op: str, v: np.ndarray) -> np.ndarray:
    """What the step blurs: a glow the picture's bright parts, clarity its luma."""
    y = luma(v)[..., None]
    return v * smoothstep(0.45, 0.95, y) if op == "glow" else y


def block_means(a: np.ndarray, block: int) -> np.ndarray:
    """Each `block` x `block` square's mean (the bottom and right edges' partial squares
    filled out with their edge pixels): a picture scaled down by whole blocks."""
    h, w = a.shape[:2]
    tall, wide = -(-h // block) * block, -(-w // block) * block
    if block == 1:
        return a.astype(np.float32)
    if h % block or w % block:  # the edges' squares: the padding is a few rows or columns
        kept_h, kept_w = h - h % block, w - w % block
        if kept_h and kept_w:
            # the whole squares by OpenCV, the edge's few by padding them alone
            means = np.empty((tall // block, wide // block, a.shape[2]), np.float32)
            means[: kept_h // block, : kept_w // block] = block_means(a[:kept_h, :kept_w], block)
            if w % block:
                means[: kept_h // block, -1:] = block_means(a[:kept_h, kept_w:], block)
            if h % block:
                means[-1:] = block_means(a[kept_h:], block)
            return means
        a = np.pad(a, ((0, tall - h), (0, wide - w), (0, 0)), mode="edge")
        shape = (tall // block, block, wide // block, block, a.shape[2])
        return a.reshape(shape).mean(axis=(1, 3), dtype=np.float32)
    # whole squares: OpenCV's whole-ratio area average (a tenth of numpy's time)
    small = cv2.resize(
        np.ascontiguousarray(a, np.float32), (w // block, h // block), interpolation=cv2.INTER_AREA
    )
    return small.reshape(h // block, w // block, a.shape[2])


def blurred(small: np.ndarray, sigma: float, block: int) -> np.ndarray:
    """The scaled-down source blurred (its sigma in blocks): the field."""
    out = cv2.GaussianBlur(np.ascontiguousarray(small, np.float32), (0, 0), sigma / block)
    return out.reshape(small.shape)


def field_rows(field: np.ndarray, block: int, top: int, rows: int, width: int) -> np.ndarray:
    """The field at full size for `rows` rows from `top` (bilinear between the blocks'
    centres, the edges held): what scaling it back up gives there."""
    hs, ws = field.shape[:2]
    at = np.clip((np.arange(top, top + rows) + 0.5) / block - 0.5, 0.0, hs - 1)
    y0 = np.floor(at).astype(np.intp)
    y1 = np.minimum(y0 + 1, hs - 1)
    wy = (at - y0).astype(np.float32)
    across = field[y0] + (field[y1] - field[y0]) * wy[:, None, None]
    # along the rows, OpenCV's bilinear scaling by the whole block (the same taps: a
    # pixel's centre, the edges held) to a width of whole blocks, cut to the picture's
    wide = cv2.resize(
        np.ascontiguousarray(across, np.float32), (ws * block, rows), interpolation=cv2.INTER_LINEAR
    )
    return wide.reshape(rows, ws * block, field.shape[2])[:, :width]


def field_of(op: str, v: np.ndarray, step: Mapping[str, Any]) -> np.ndarray:
    """The step's blurred field at full size for `v`: read from the field the step was
    given (a band's: "field", its rows from "rows"), else worked out from `v` whole."""
    _, h, w = step.get("rows", (0, v.shape[0], v.shape[1]))
    sigma, block = field_blur(op, (h, w))
    field = step.get("field")
    if field is None:
        field, top = blurred(block_means(field_source(op, v), block), sigma, block), 0
    else:
        top = int(step["rows"][0])
    return field_rows(field, block, top, v.shape[0], v.shape[1])


def glow(v: np.ndarray, amount: float, step: Mapping[str, Any]) -> np.ndarray:
    """A soft bloom: the bright parts spread wide and laid over the picture as light
    (screen), as diffusion filters on a lens do."""
    light = field_of("glow", v, step) * np.float32(amount)
    np.clip(light, 0.0, 1.0, out=light)
    out = 1.0 - v  # screen: 1 - (1 - v)(1 - light) = v + light (1 - v)
    out *= light
    out += v
    return out


def clarity(v: np.ndarray, amount: float, step: Mapping[str, Any]) -> np.ndarray:
    """Local contrast in the mid-tones (a raw developer's clarity): the difference from a
    wide blur added back, least in the deepest shadows and brightest highlights."""
    y = luma(v)
    local = y - field_of("clarity", v, step)[..., 0]
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
