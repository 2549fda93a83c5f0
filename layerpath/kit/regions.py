"""Windows: the part of a photo a step may change, and working on that part alone.

A camera file is 24-60 megapixels; an edit usually touches a few percent of it. Tools
cut the window around what they change (the mask's bounds plus the context they need),
work on that crop, and paste the result back into one copy of the photo; they report
the window (`ToolResult.window`) so the checks, the step layers and the file writers
look only there. Analysis that needs no exactness (texture statistics, probes) runs on
a copy of the window scaled down to a pixel budget. And the ratios a crop may be
asked for ('4:5', 'square').
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import cv2
import numpy as np

from layerpath.errors import BadInput
from layerpath.kit.imaging import differs
from layerpath.kit.types import Box

#: rows compared at a time when looking for what changed (bounds the temporary memory)
BAND_ROWS = 512


def full_box(shape: tuple[int, ...]) -> Box:
    """The whole picture as a Box."""
    return Box(0, 0, int(shape[1]), int(shape[0]))


def grow_box(box: Box, pad: int, shape: tuple[int, ...]) -> Box:
    """The box grown by `pad` pixels on every side, clipped to the picture."""
    h, w = shape[:2]
    return Box(
        max(0, box.x0 - pad), max(0, box.y0 - pad), min(w, box.x1 + pad), min(h, box.y1 + pad)
    )


def overlap(a: Box, b: Box) -> float:
    """How much two boxes overlap: their intersection over the smaller one (0..1)."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    if w <= 0 or h <= 0:
        return 0.0
    return w * h / max(1, min(a.width * a.height, b.width * b.height))


def union_box(boxes: Iterable[Box | None]) -> Box | None:
    """The smallest box holding all the given ones (None when there are none)."""
    present = [b for b in boxes if b is not None and b.width > 0 and b.height > 0]
    if not present:
        return None
    return Box(
        min(b.x0 for b in present),
        min(b.y0 for b in present),
        max(b.x1 for b in present),
        max(b.y1 for b in present),
    )


def crop(array: np.ndarray, box: Box) -> np.ndarray:
    """The box's part of an image or mask (a view, no copy)."""
    return array[box.y0 : box.y1, box.x0 : box.x1]


def changed_window(before: np.ndarray, after: np.ndarray) -> Box | None:
    """The bounds of the pixels that differ, compared a band of rows at a time (no
    whole-photo temporaries); None when nothing changed."""
    if before.shape != after.shape:
        return full_box(after.shape)
    rows: list[int] = []
    columns = np.zeros(before.shape[1], dtype=bool)
    for y in range(0, before.shape[0], BAND_ROWS):
        if before.ndim == 3 and before.shape[2] == 4:
            band = differs(before[y : y + BAND_ROWS], after[y : y + BAND_ROWS])
        else:
            band = before[y : y + BAND_ROWS] != after[y : y + BAND_ROWS]
            band = band.any(axis=2) if band.ndim == 3 else band
        hit = band.any(axis=1)
        if hit.any():
            found = np.flatnonzero(hit)
            rows += [y + int(found[0]), y + int(found[-1])]
            columns |= band.any(axis=0)
    if not rows:
        return None
    xs = np.flatnonzero(columns)
    return Box(int(xs[0]), min(rows), int(xs[-1]) + 1, max(rows) + 1)


def paste(image: np.ndarray, window: Box, patch: np.ndarray) -> np.ndarray:
    """A copy of the RGBA image with the window's colour channels (a 3-channel patch)
    or all channels (a 4-channel one) replaced: the one full-size copy a tool makes."""
    out = image.copy()
    channels = patch.shape[2] if patch.ndim == 3 else 1
    out[window.y0 : window.y1, window.x0 : window.x1, :channels] = patch.reshape(
        window.height, window.width, channels
    )
    return out


#: how far inside a removal's mask its fill is blended with the photo (pixels): none.
#: A mask drawn tight has the object's own edge in its outer pixels, which a feather
#: would keep as a faint outline (the demo scene's ball: refused at 3, clean at 0); the
#: fills meet the photo without a seam by themselves (patch_fill fuses its pieces with
#: the photo around them)
FEATHER = 0


def confined(
    before: np.ndarray,
    after: np.ndarray,
    mask: np.ndarray,
    feather: int = FEATHER,
    within: Box | None = None,
) -> np.ndarray:
    """`after` kept inside `mask` only: outside it every pixel is `before`'s (not one
    pixel outside the mask changes), and over the mask's outer `feather` pixels, if
    any, the two are blended inwards. Any depth, RGB or RGBA; `after` itself where
    nothing outside the mask changed. `within`: the box outside which the two are
    known to be equal (the window a tool reported): only it is compared."""
    if within is None:
        box = changed_window(before, after)
    else:
        found = changed_window(crop(before, within), crop(after, within))
        box = (
            None
            if found is None
            else Box(
                found.x0 + within.x0,
                found.y0 + within.y0,
                found.x1 + within.x0,
                found.y1 + within.y0,
            )
        )
    if box is None:
        return after
    reach = crop(mask, box)
    if feather <= 0:
        if reach.all():
            return after
        weight = reach.astype(np.float32)
    else:
        inside = cv2.distanceTransform(reach.astype(np.uint8), cv2.DIST_L2, 3)
        weight = np.clip(inside / (feather + 1), 0.0, 1.0).astype(np.float32)
    old, new = crop(before, box).astype(np.float32), crop(after, box).astype(np.float32)
    if old.ndim == 3:
        weight = weight[..., None]
    mixed = np.rint(old + (new - old) * weight)
    out = after.copy()
    out[box.y0 : box.y1, box.x0 : box.x1] = mixed.astype(after.dtype)
    return out


def analysis_copies(
    window: Box, budget: int, *pictures: np.ndarray
) -> tuple[list[np.ndarray], float]:
    """Each picture (or mask) cropped to `window` and scaled down to at most `budget`
    pixels, all alike (pictures of one size: the same scale), and the scale."""
    copies = [analysis_copy(crop(picture, window), budget) for picture in pictures]
    return [copy for copy, _ in copies], copies[0][1]


def analysis_copy(
    pixels: np.ndarray, budget: int = 1_000_000, interpolation: int = cv2.INTER_AREA
) -> tuple[np.ndarray, float]:
    """The pixels scaled down to at most `budget` pixels (unchanged when smaller), and
    the scale used: for statistics that do not need every pixel of a camera file."""
    h, w = pixels.shape[:2]
    scale = min(1.0, (budget / max(1, h * w)) ** 0.5)
    if scale >= 1.0:
        return pixels, 1.0
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    if pixels.dtype == bool:
        small = cv2.resize(pixels.astype(np.uint8) * 255, size, interpolation=cv2.INTER_AREA)
        return small > 127, scale
    return cv2.resize(pixels, size, interpolation=interpolation), scale


def block_copy(pixels: np.ndarray, budget: int = 1_000_000) -> np.ndarray:
    """The picture averaged over whole f x f blocks, f the smallest that brings it within
    `budget` pixels (its last rows and columns short of a block left out): statistics of
    a whole picture, at three times the speed of an arbitrary scale (OpenCV's whole-ratio
    path: 0.02 s at 24 MP)."""
    h, w = pixels.shape[:2]
    f = math.ceil(math.sqrt(h * w / budget))
    if f <= 1:
        return pixels
    whole = pixels[: h - h % f, : w - w % f]
    return cv2.resize(whole, (w // f, h // f), interpolation=cv2.INTER_AREA)


#: the ratios a crop's words may name (w:h)
ASPECTS = {
    "square": (1, 1),
    "portrait": (4, 5),
    "landscape": (3, 2),
    "panorama": (3, 1),
    "wide": (16, 9),
}


def aspect_of(words: object) -> tuple[int, int] | None:
    """'16:9', '4x5', 'square' -> (16, 9), (4, 5), (1, 1); None when none is named."""
    text = str(words or "").lower()
    found = re.search(r"(\d+(?:\.\d+)?)\s*[:x/]\s*(\d+(?:\.\d+)?)", text)
    if found:
        a, b = float(found.group(1)), float(found.group(2))
        if a <= 0 or b <= 0 or max(a / b, b / a) > 10:
            raise BadInput(f"Crop to a ratio between 1:10 and 10:1, not {found.group(0)}.")
        return int(a * 100), int(b * 100)
    return next((ratio for word, ratio in ASPECTS.items() if word in text), None)


def full_size_mask(mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A mask found on a small copy, at the picture's size."""
    h, w = shape[:2]
    if mask.shape == (h, w):
        return mask.astype(bool)
    big = cv2.resize(mask.astype(np.uint8) * 255, (w, h), interpolation=cv2.INTER_LINEAR)
    return big > 127
