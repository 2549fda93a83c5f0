"""Layers that hold only their own change. A step that scales each pixel's channels (a
vignette darkens by where a pixel lies, a shadow lift brightens the dark parts) is a
layer of gains in a blend mode every layered format shares, so that it works on
whatever lies beneath it, as the host computes it, with no layerpath running:

- multiply (darker): beneath x layer;
- colour dodge (lighter): beneath / (1 - layer).

Krita, Photoshop (and psd-tools), GIMP and OpenRaster compute both alike. Names are
Krita's ids ("multiply", "dodge"); io.BLENDS gives OpenRaster's.

Whether a step's change is such a layer is measured, not assumed: the gains are worked
out from the picture before and after the step and must make the step's picture again
(`own_change`); engine/files/live.py also puts them to the test on another picture
beneath.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import cv2
import numpy as np

#: the blend modes a change can be held in (Krita's ids)
MODES = ("multiply", "dodge")
#: how close a layer made to stand for a step (a change here, a LUT's table in cube.py,
#: curves in live.py) must come to the step's own picture: mean and 99th percentile,
#: in levels
CLOSE, NEAR = 1.0, 3.0
#: rows worked at a time, so a camera-size picture is not copied whole as floats
BAND = 256


@dataclass(eq=False)
class Change:
    """A step as only its own change: the layer (RGBA, opaque, the picture's size, 8
    bits) in a blend mode of MODES."""

    mode: str
    pixels: np.ndarray


def _formula(mode: str, b: np.ndarray, s: np.ndarray, top: int) -> np.ndarray:
    """The blend of layer values `s` over `b` (floats), before rounding."""
    if mode == "multiply":
        return b * s / top
    if mode == "dodge":  # (a white layer makes any colour but black white)
        return np.where(s >= top, np.where(b > 0, top, 0), b * top / np.maximum(top - s, 1))
    raise ValueError(f"not a blend mode of a change: {mode}")


@functools.cache
def _tables(mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For 8 bits: the blend of every layer value s over every level b ([b, s]), and
    for every level b and wanted level a the layer values that make a from b, low and
    high ([b, a]; unbounded where any value does)."""
    b = np.arange(256, dtype=np.float32)[:, None]
    a = np.arange(256, dtype=np.float32)[None, :]
    made = np.clip(np.rint(_formula(mode, b, a, 255)), 0, 255).astype(np.uint8)
    with np.errstate(divide="ignore", invalid="ignore"):
        if mode == "multiply":  # b * s / 255 within half a level of a
            low = np.where(b > 0, (a - 0.5) * 255.0 / b, -np.inf)
            high = np.where(b > 0, (a + 0.5) * 255.0 / b, np.inf)
        else:  # b * 255 / (255 - s) within half a level of a
            low = np.where(a > 0.5, 255.0 - b * 255.0 / np.maximum(a - 0.5, 1e-6), -np.inf)
            high = np.where(a < 255, 255.0 - b * 255.0 / (a + 0.5), np.inf)
            low = np.where(b > 0, low, -np.inf)
            high = np.where(b > 0, high, np.inf)
    return made, low.astype(np.float32), high.astype(np.float32)


def _pairs(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Indices into a 256 x 256 table, [first, second], for two 8-bit arrays."""
    return first.astype(np.intp) * 256 + second


def blended(mode: str, below: np.ndarray, layer: np.ndarray, top: int = 255) -> np.ndarray:
    """`layer`'s channels blended over `below`'s in `mode` (both unsigned integers,
    opaque, `top` their white): as the hosts compute it, rounded. A new array of
    below's type."""
    if top == 255 and below.dtype == np.uint8 and layer.dtype == np.uint8:
        return _tables(mode)[0].ravel()[_pairs(below, layer)]
    out = _formula(mode, below.astype(np.float32), layer.astype(np.float32), top)
    return np.clip(np.rint(out), 0, top).astype(below.dtype)


#: how many levels of a pixel's own brightness (its three channels together) outweigh
#: the gain its neighbourhood has, when its own are few (a dark pixel)
SURE = 24.0
#: the side of the grid the neighbourhood's gains are worked out on
GRID = 64


def _neighbourhood(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """The gain by neighbourhood (a GRID-a-side field of after / before, brightness
    summed over channels and area): what a dark pixel, whose own levels say little,
    most likely has. Where a whole cell is black, its neighbours' gain; where the
    picture is, 1."""
    h, w = before.shape[:2]
    scale = min(1.0, GRID / max(h, w))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    sums = [
        cv2.resize(p, size, interpolation=cv2.INTER_AREA)[..., :3].sum(axis=2, dtype=np.float32)
        for p in (before, after)
    ]
    spread = [cv2.GaussianBlur(s, (0, 0), 1.5) for s in sums]  # (over black cells)
    with np.errstate(divide="ignore", invalid="ignore"):
        field = np.where(sums[0] > SURE, sums[1] / sums[0], spread[1] / spread[0])
    return np.where(np.isfinite(field), field, 1.0).astype(np.float32)


def _rows(field: np.ndarray, top: int, count: int, h: int, w: int) -> np.ndarray:
    """Rows top..top+count of `field` stretched to an h x w picture (bilinear)."""
    fh, fw = field.shape
    ys = np.clip((np.arange(top, top + count) + 0.5) * fh / h - 0.5, 0, fh - 1)
    y0 = np.floor(ys).astype(int)
    y1 = np.minimum(y0 + 1, fh - 1)
    t = (ys - y0)[:, None].astype(np.float32)
    lines = field[y0] * (1 - t) + field[y1] * t
    return np.asarray(cv2.resize(lines, (w, count), interpolation=cv2.INTER_LINEAR))


def gains(mode: str, before: np.ndarray, after: np.ndarray, near: np.ndarray) -> np.ndarray:
    """The layer (RGB, uint8) that makes `after` from `before` (RGB) in `mode`. Each
    channel's value is the one closest to the pixel's likely gain (its own channels'
    brightness ratio, leaning on `near`, the gain around it, as far as it is dark)
    among those that make its level exactly: a dark channel, which many gains make,
    takes its neighbourhood's gain, so the layer does to another picture beneath what
    the step would."""
    own = [p[..., 0].astype(np.float32) + p[..., 1] + p[..., 2] for p in (before, after)]
    likely = (own[1] + SURE * near) / (own[0] + SURE)
    likely = np.maximum(likely, 1e-3)[..., None]
    if mode == "multiply":
        wished = 255.0 * likely
    else:
        wished = 255.0 * (1.0 - 1.0 / likely)
    _, low, high = _tables(mode)
    pairs = _pairs(before, after)
    s = np.clip(wished, low.ravel()[pairs], high.ravel()[pairs])
    return np.clip(np.rint(s), 0, 255).astype(np.uint8)


def misses(mode: str, before: np.ndarray, after: np.ndarray, layer: np.ndarray) -> np.ndarray:
    """How far the layer over `before` lands from `after`, a level count per channel."""
    made = blended(mode, before, layer).astype(np.int16)
    return np.abs(made - after.astype(np.int16)).astype(np.uint8)


def _fits(hist: np.ndarray) -> tuple[float, float]:
    """Mean and 99th percentile of the differences counted in `hist` (0..255 levels)."""
    total = hist.sum()
    mean = float((hist * np.arange(hist.size)).sum() / max(total, 1))
    p99 = float(np.searchsorted(np.cumsum(hist), 0.99 * total))
    return mean, p99


def change_layer(
    mode: str, before: np.ndarray, after: np.ndarray
) -> tuple[np.ndarray, tuple[float, float]]:
    """The layer of gains (RGBA, opaque) that makes `after` from `before` in `mode`, a
    band of rows at a time, and how far it misses: mean and 99th percentile."""
    h, w = after.shape[:2]
    near = _neighbourhood(before, after)
    layer = np.empty((h, w, 4), np.uint8)
    layer[..., 3] = 255
    hist = np.zeros(256, np.int64)
    for y in range(0, h, BAND):
        b, a = before[y : y + BAND, :, :3], after[y : y + BAND, :, :3]
        part = gains(mode, b, a, _rows(near, y, b.shape[0], h, w))
        layer[y : y + BAND, :, :3] = part
        hist += np.bincount(misses(mode, b, a, part).ravel(), minlength=256)
    return layer, _fits(hist)


def _mode_of(before: np.ndarray, after: np.ndarray) -> str | None:
    """The mode that can hold the change, judged on every fourth pixel each way: the one
    whose layer misses least, when it comes within CLOSE and NEAR."""
    b, a = before[::4, ::4], after[::4, ::4]
    best: tuple[float, str] | None = None
    for mode in MODES:
        mean, p99 = change_layer(mode, b, a)[1]
        if mean <= CLOSE and p99 <= NEAR and (best is None or mean < best[0]):
            best = (mean, mode)
    return None if best is None else best[1]


def own_change(before: np.ndarray, after: np.ndarray) -> Change | None:
    """The step from `before` to `after` (RGBA, 8 bits, the same size, both opaque) as a
    change layer, when one in a mode of MODES makes `after` again within CLOSE levels on
    average and NEAR at the 99th percentile; None otherwise (a step that both lightens
    and darkens, or that changes the transparency)."""
    if before.shape != after.shape or before.dtype != np.uint8 or after.dtype != np.uint8:
        return None
    if not (before[..., 3] == 255).all() or not (after[..., 3] == 255).all():
        return None
    mode = _mode_of(before, after)
    if mode is None:
        return None
    layer, (mean, p99) = change_layer(mode, before, after)
    return Change(mode, layer) if mean <= CLOSE and p99 <= NEAR else None


def over(mode: str, src: np.ndarray, dst: np.ndarray, top: int = 255) -> np.ndarray:
    """`src` (RGBA) blended in `mode` over `dst` (RGBA) where either is not opaque, as
    the W3C compositing spec (and OpenRaster) put it: the blend where both are, the
    layer's colour where only it is, and the colour beneath where only that is."""
    s = src.astype(np.float32) / top
    d = dst.astype(np.float32) / top
    a_s, a_d = s[..., 3:], d[..., 3:]
    mixed = blended(mode, dst[..., :3], src[..., :3], top).astype(np.float32) / top
    alpha = a_s + a_d * (1 - a_s)
    colour = a_s * (1 - a_d) * s[..., :3] + a_s * a_d * mixed + (1 - a_s) * a_d * d[..., :3]
    with np.errstate(divide="ignore", invalid="ignore"):
        colour = np.where(alpha > 0, colour / alpha, 0)
    out = np.concatenate([colour, alpha], axis=-1)
    return np.clip(np.rint(out * top), 0, top).astype(dst.dtype)
