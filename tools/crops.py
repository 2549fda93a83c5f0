"""Model tools work on a crop around their target, never on a whole large photo.

`crop_for_model` cuts a padded window around a mask or box (square-ish, at least the
model's context), scales it to the model's resolution, and remembers how to go back;
`paste_back` scales the model's output to the window and blends it in with a feathered
edge, so pixels outside the window (and, with a mask, outside the grown mask) are
exactly the input's. A 24-megapixel photo is never resized as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from layerpath.kit.imaging import mask_box
from layerpath.kit.types import Box


@dataclass(frozen=True)
class ModelCrop:
    """The window cut from the photo, scaled to the model's input size."""

    window: Box  # in photo pixels
    pixels: np.ndarray  # RGB(A) at model resolution (h, w, c)
    mask: np.ndarray | None  # bool at model resolution, when a mask was given
    scale: float  # model pixels per photo pixel


def crop_window(
    shape: tuple[int, ...],
    target: Box,
    *,
    padding: float = 0.5,
    min_side: int = 256,
) -> Box:
    """A square-ish window around `target`: grown by `padding` of its size on each side
    and to at least `min_side`, then clipped to the photo."""
    h, w = shape[:2]
    side = max(target.width, target.height)
    grow = int(round(side * padding))
    x0, y0 = target.x0 - grow, target.y0 - grow
    x1, y1 = target.x1 + grow, target.y1 + grow
    for lo, hi, limit, axis in ((x0, x1, w, 0), (y0, y1, h, 1)):
        short = min(min_side, limit) - (hi - lo)
        if short > 0:
            lo -= short // 2
            hi += short - short // 2
        if lo < 0:  # slide the window back inside before clipping
            hi, lo = hi - lo, 0
        if hi > limit:
            lo, hi = lo - (hi - limit), limit
        lo, hi = max(0, lo), min(limit, hi)
        if axis == 0:
            x0, x1 = lo, hi
        else:
            y0, y1 = lo, hi
    return Box(x0, y0, x1, y1)


def crop_for_model(
    image: np.ndarray,
    target: Box | np.ndarray,
    resolution: int,
    *,
    padding: float = 0.5,
    multiple: int = 8,
) -> ModelCrop:
    """Cut the window around `target` (a Box or a bool mask) and scale it so its long side
    is `resolution` (sides rounded up to `multiple`, as most models want)."""
    mask = target if isinstance(target, np.ndarray) else None
    box = mask_box(mask) if mask is not None else target
    if box is None:
        raise ValueError("the mask is empty")
    assert isinstance(box, Box)
    window = crop_window(image.shape, box, padding=padding, min_side=min(resolution, 512))
    scale = resolution / max(window.width, window.height)
    size_w = _round_up(max(1, round(window.width * scale)), multiple)
    size_h = _round_up(max(1, round(window.height * scale)), multiple)
    region = image[window.y0 : window.y1, window.x0 : window.x1]
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    pixels = cv2.resize(region, (size_w, size_h), interpolation=interpolation)
    small_mask = None
    if mask is not None:
        cut = mask[window.y0 : window.y1, window.x0 : window.x1].astype(np.uint8)
        small_mask = cv2.resize(cut, (size_w, size_h), interpolation=cv2.INTER_NEAREST) > 0
    return ModelCrop(window, pixels, small_mask, scale)


def paste_back(
    image: np.ndarray,
    crop: ModelCrop,
    output: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    feather: int = 8,
) -> np.ndarray:
    """The photo with the model's output (at model resolution) blended into the crop's
    window. With `mask` (photo-sized), only the mask grown by `feather` changes, with a
    soft edge; without, the whole window, feathered towards its inner border."""
    window = crop.window
    wh = (window.width, window.height)
    interpolation = cv2.INTER_CUBIC if crop.scale < 1 else cv2.INTER_AREA
    patch = cv2.resize(output, wh, interpolation=interpolation)
    channels = min(patch.shape[2] if patch.ndim == 3 else 1, 3)
    region = image[window.y0 : window.y1, window.x0 : window.x1]
    if mask is not None:
        inside = mask[window.y0 : window.y1, window.x0 : window.x1].astype(np.uint8)
        grown = cv2.dilate(inside, np.ones((2 * feather + 1,) * 2, np.uint8))
        weight = cv2.GaussianBlur(grown.astype(np.float32), (0, 0), max(feather / 2, 0.5))
        weight = np.where(grown > 0, np.maximum(weight, inside), 0.0)
    else:
        weight = np.ones((window.height, window.width), np.float32)
        edge = min(feather, window.width // 4, window.height // 4)
        for i in range(edge):  # ramp down towards the border the photo continues past
            value = (i + 1) / (edge + 1)
            h, w = weight.shape
            if window.x0 > 0:
                weight[:, i] = np.minimum(weight[:, i], value)
            if window.y0 > 0:
                weight[i, :] = np.minimum(weight[i, :], value)
            if window.x1 < image.shape[1]:
                weight[:, w - 1 - i] = np.minimum(weight[:, w - 1 - i], value)
            if window.y1 < image.shape[0]:
                weight[h - 1 - i, :] = np.minimum(weight[h - 1 - i, :], value)
    out = image.copy()
    blend = weight[..., None]
    mixed = region[..., :channels] * (1 - blend) + patch[..., :channels].astype(np.float32) * blend
    out[window.y0 : window.y1, window.x0 : window.x1, :channels] = np.clip(
        np.rint(mixed), 0, 255
    ).astype(image.dtype)
    return out


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple
