"""Recolouring inside a mask as a retoucher does it (Lab and HSV variants), on the mask's
window.

- The object's coverage, not the mask: a mask drawn a little loose takes in some of the
  ground along its edge. Closed-form matting (pymatting, the `matting` extra) solves the
  band between the mask's core (the object) and the ground just outside the mask for
  how much of each pixel is the object; without the extra, GrabCut trims the mask to
  the object and a guided filter gives its edge the photo's softness (a ring of ground
  a pixel or two wide stays in along parts of the edge: on the tuning photos' things
  with a 2 px loose mask, 13 % of that ground's pixels took a sixth or more of the new
  colour; matted, 4 %, with as few of the object's own pixels short of it). The matte
  decides where it is sure; where it hesitates, GrabCut's cut weighs in (a rim the
  ground's colour). The new colour is laid on by that coverage, so the ground the mask
  took in keeps its colour and a soft edge blends. Nothing outside the mask changes.
- The object's shading and material kept: the colour is changed in OKLab, where the hue
  and the chroma move and the lightness keeps its structure (shifted part-way towards
  the new colour's own lightness, 'lightness'), and is brought into sRGB's gamut pixel
  by pixel by lowering its chroma, never by clipping a channel (which flattens a lit
  side to one value). 'deep blue', 'pale green' arrive as darker or lighter colours
  (kit/colours.py), so the lightness shift honours them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import BadInput, ToolFailed
from layerpath.kit.colours import from_oklab, oklab, srgb_decoded, srgb_encoded
from layerpath.kit.imaging import guided_filter, mask_box, rgb
from layerpath.kit.regions import crop, paste
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.background import closed_form, quietly
from layerpath.tools.base import AnyDepth

#: how much of the object's own colour variation (around its mean, in OKLab a/b) the new
#: colour keeps: the material's hue changes (wood grain, a printed pattern) stay visible
VARIATION = 0.35
#: the pixels the object's coverage is worked out on where GrabCut alone trims the mask
#: (on a copy; the edge is then settled at full size)
COVERAGE_PIXELS = 1_000_000
#: the pixels the object's coverage is worked out on where the band is matted (the
#: matte and GrabCut: about a second, as GrabCut alone on 1 MP)
MATTE_PIXELS = 200_000
#: a matte's share this close to 0 or 1 is taken as sure
SNAPPED = 0.05
#: the matte's shares, on what GrabCut keeps, read as none and as all of the object: on
#: the tuning photos' things with a loose mask, where GrabCut kept the ring of ground
#: the matte gave it 0.17 (the median; 0.57 at the 90th percentile), the object's own
#: edge 0.91 (0.77 at the 10th)
HESITANT = (0.2, 0.7)
#: how deep into the mask (px of the copy) the sure object starts where the mask is
#: matted: past a loose mask's margin and the object's own soft edge, on a small thing
#: too (chosen on the tuning photos' things, the matte alone: 3 px left 10 % of the
#: ground's pixels recoloured, 5 px 3 % with 5 % of the object's pixels short of full
#: coverage, 6 px 2 % and 7 %)
MATTED_CORE = 5.0
#: the share of the mask GrabCut may trim away as ground; past it the mask is taken as
#: drawn (a trim that large is GrabCut losing the object, not a loose mask; a matte
#: keeps the mask's core whatever it trims)
MOST_TRIMMED = 0.35


def _target_color(ctx: ToolContext) -> tuple[int, int, int]:
    if not ctx.to:
        raise BadInput("Recolouring needs a colour: say e.g. 'recolor the wall to yellow'.")
    return ctx.colour(ctx.to)


def _mask_window(image: np.ndarray, mask: np.ndarray) -> Box:
    """The mask's bounds with the context the coverage's ground model reads."""
    bounds = mask_box(mask)
    if bounds is None:
        raise ToolFailed("The mask to recolour is empty; select the object first.")
    pad = max(4, round(0.08 * max(bounds.width, bounds.height)))
    window = mask_box(mask, pad=pad)
    assert window is not None
    return window


def _eight_bit(pixels: np.ndarray) -> np.ndarray:
    """RGB at 8 bits (a 16-bit picture rounded as the run's 8-bit copy is), so both
    depths get the same coverage."""
    if pixels.dtype == np.uint16:
        return ((rgb(pixels).astype(np.uint32) + 128) // 257).astype(np.uint8)
    return np.ascontiguousarray(rgb(pixels))


def _core(mask: np.ndarray, floor: float) -> np.ndarray:
    """The mask's sure object: deeper than a loose mask's margin (at least `floor` px),
    and no deeper than a third of how thick the object is (a pole, a thin frame keep
    a core)."""
    inside = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 3)
    thickness = 2.0 * float(np.percentile(inside[mask], 95))
    return inside > min(max(floor, 0.04 * float(np.sqrt(mask.sum()))), thickness / 3.0)


def coverage(pixels: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """How much of each pixel of the window is the object (float32 0..1): 1 in the
    mask's core, 0 outside the mask, and along its edge what is left of the mask once
    the ground it took in is trimmed (the matte where it is sure, GrabCut elsewhere),
    softened onto the photo's own edge by a guided filter."""
    h, w = mask.shape
    if not mask.any():
        return np.zeros((h, w), np.float32)
    matte, _ = closed_form()
    core = _core(mask, 2.0)
    if core.sum() < 16 or (mask & ~core).sum() < 16:
        return mask.astype(np.float32)
    scale = min(1.0, float(np.sqrt((COVERAGE_PIXELS if matte is None else MATTE_PIXELS) / (h * w))))
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    eight = _eight_bit(pixels)  # (a copy of the window for a 16-bit photo: made once)
    small = cv2.resize(eight, size, interpolation=cv2.INTER_AREA)
    shrink = lambda m: cv2.resize(m.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0  # noqa: E731
    small_mask = shrink(mask)
    trimmed = _grabcut(small, small_mask, shrink(core))
    if trimmed is None:  # (a window of one colour: nothing to tell apart)
        return mask.astype(np.float32)
    if float((trimmed > 0.5)[small_mask].mean()) < 1.0 - MOST_TRIMMED:
        trimmed = small_mask.astype(np.float32)
    matted = None if matte is None else _matted(matte, small, small_mask)
    if matted is not None:
        # the matte decides where it is sure (the ground GrabCut keeps in a thin ring
        # round a small thing); where it hesitates on what GrabCut keeps, it is read
        # leaning GrabCut's way (a rim whose colour is the ground's: a red saucer's on
        # red wood, matted about 0.6)
        leaning = np.clip((matted - HESITANT[0]) / (HESITANT[1] - HESITANT[0]), 0.0, 1.0)
        trimmed = np.where(trimmed > 0.5, leaning, matted)
    kept = np.asarray(
        cv2.resize(trimmed.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    )
    grey = cv2.cvtColor(eight, cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
    soft = np.clip(guided_filter(grey, kept, max(1, round(1.0 / scale)), 1e-3), 0.0, 1.0)
    if matted is not None:  # (the filter would spread the object onto sure ground)
        decided = ((matted <= 0.0) | (matted >= 1.0)).astype(np.float32)
        sure = cv2.resize(decided, (w, h), interpolation=cv2.INTER_LINEAR) > 0.99
        soft = np.where(sure, np.clip(kept, 0.0, 1.0), soft)
    soft[core] = 1.0
    return (soft * mask).astype(np.float32)


def _matted(matte: Any, small: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
    """The closed-form matte of the band between the mask's sure core and the ground
    outside it, each pixel within SNAPPED of 0 or 1 taken as wholly one or the other;
    None where the mask has no core to start from."""
    sure = _core(mask, MATTED_CORE)
    if sure.sum() < 16:
        return None
    trimap = np.where(sure, 1.0, np.where(mask, 0.5, 0.0))
    found = np.clip(quietly(matte, small.astype(np.float64) / 255.0, trimap), 0.0, 1.0)
    # (the solver leaves a few hundredths on pixels wholly one or the other)
    return np.where(found > 1.0 - SNAPPED, 1.0, np.where(found < SNAPPED, 0.0, found))


def _grabcut(small: np.ndarray, mask: np.ndarray, core: np.ndarray) -> np.ndarray | None:
    """The mask trimmed to the object by GrabCut (the core sure object, the ground
    around the mask sure not): 1 kept, 0 trimmed; None where it cannot tell them apart."""
    labels = np.full(mask.shape, cv2.GC_BGD, np.uint8)
    labels[mask] = cv2.GC_PR_FGD
    labels[core] = cv2.GC_FGD
    background, foreground = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)  # (the same photo, the same edge)
    try:
        cv2.grabCut(
            np.ascontiguousarray(small[..., ::-1]),
            labels,
            (0, 0, 0, 0),
            background,
            foreground,
            3,
            cv2.GC_INIT_WITH_MASK,
        )
    except cv2.error:
        return None
    return np.isin(labels, (cv2.GC_FGD, cv2.GC_PR_FGD)).astype(np.float32)


def recoloured_oklab(
    lab: np.ndarray, weight: np.ndarray, color: tuple[int, int, int], lightness: float
) -> np.ndarray:
    """The object's new OKLab values: a/b moved to the target's (VARIATION of its own
    variation kept), L shifted by `lightness` of the way from its mean to the target's
    (its structure kept), softly held inside 0..1 so no tone reaches the clip.
    `weight`: the object's coverage, for its means."""
    target = oklab(srgb_decoded(np.array(color, np.float64) / 255.0))
    share = weight / max(float(weight.sum()), 1e-6)
    mean = (lab * share[..., None]).reshape(-1, 3).sum(axis=0)
    new = lab.copy()
    new[..., 1:] = target[1:] + (lab[..., 1:] - mean[1:]) * VARIATION
    shifted = lab[..., 0] + lightness * (target[0] - mean[0])
    # (compressed about the new mean when the shift would take tones past black or white)
    centre = mean[0] + lightness * (target[0] - mean[0])
    inside = weight > 0.5
    low = float(np.percentile(shifted[inside], 0.5)) if inside.any() else centre
    high = float(np.percentile(shifted[inside], 99.5)) if inside.any() else centre
    room = min(
        1.0,
        (0.97 - centre) / max(high - centre, 1e-6),
        (centre - 0.03) / max(centre - low, 1e-6),
    )
    new[..., 0] = np.clip(centre + (shifted - centre) * max(room, 0.1), 0.0, 1.0)
    return new


def in_gamut(lab: np.ndarray) -> np.ndarray:
    """OKLab values brought into sRGB's gamut by lowering their chroma (hue and
    lightness kept), as linear sRGB (0..1)."""
    linear = from_oklab(lab)
    outside = ((linear < -1e-4) | (linear > 1 + 1e-4)).any(axis=-1)
    if outside.any():
        low, high = np.zeros(outside.sum()), np.ones(outside.sum())
        picked = lab[outside]
        for _ in range(12):  # bisect the chroma's scale
            middle = (low + high) / 2
            trial = from_oklab(np.concatenate([picked[:, :1], picked[:, 1:] * middle[:, None]], 1))
            fits = ((trial >= -1e-4) & (trial <= 1 + 1e-4)).all(axis=-1)
            low, high = np.where(fits, middle, low), np.where(fits, high, middle)
        picked = np.concatenate([picked[:, :1], picked[:, 1:] * low[:, None]], 1)
        linear[outside] = from_oklab(picked)
    return np.clip(linear, 0.0, 1.0)


def recolor_lab(
    pixels: np.ndarray,
    mask: np.ndarray,
    color: tuple[int, int, int],
    lightness: float,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """The window's RGB recoloured everywhere (the caller lays it on by the object's
    coverage `weight`, the mask when none is given): OKLab, texture kept, in gamut.
    8- or 16-bit pixels, computed in float at their depth."""
    top = 65535.0 if pixels.dtype == np.uint16 else 255.0
    linear = srgb_decoded(rgb(pixels).astype(np.float64) / top)
    lab = oklab(linear)
    share = mask.astype(np.float64) if weight is None else weight.astype(np.float64)
    new = srgb_encoded(in_gamut(recoloured_oklab(lab, share, color, lightness)))
    return np.clip(np.rint(new * top), 0, top).astype(pixels.dtype)


def recolor_hsv(pixels: np.ndarray, color: tuple[int, int, int], saturation: float) -> np.ndarray:
    """Set hue to the target's, pull saturation towards it; value (shading) is kept.
    16-bit pixels are worked in float HSV at their depth."""
    if pixels.dtype == np.uint16:
        hsv = cv2.cvtColor(rgb(pixels).astype(np.float32) / 65535.0, cv2.COLOR_RGB2HSV)
        goal = cv2.cvtColor(np.array([[color]], np.float32) / 255.0, cv2.COLOR_RGB2HSV)[0, 0]
        hsv[..., 0] = goal[0]  # (degrees)
        hsv[..., 1] = hsv[..., 1] * (1 - saturation) + goal[1] * saturation
        back = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
        return np.clip(np.rint(back * 65535.0), 0, 65535).astype(np.uint16)
    hsv = cv2.cvtColor(np.ascontiguousarray(rgb(pixels)), cv2.COLOR_RGB2HSV).astype(np.float32)
    target = cv2.cvtColor(np.array([[color]], dtype=np.uint8), cv2.COLOR_RGB2HSV)[0, 0]
    hsv[..., 0] = float(target[0])
    hsv[..., 1] = hsv[..., 1] * (1 - saturation) + float(target[1]) * saturation
    return cv2.cvtColor(np.clip(hsv, 0, 255).astype(np.uint8), cv2.COLOR_HSV2RGB)


def laid_on(image: np.ndarray, weight: np.ndarray, new_rgb: np.ndarray, window: Box) -> np.ndarray:
    """New colours (of the window) laid on by the object's coverage; only the window is
    worked on, the photo copied once. 8- or 16-bit."""
    top = 65535 if image.dtype == np.uint16 else 255
    old = crop(image, window)[..., :3].astype(np.float32)
    share = weight[..., None]
    mixed = old * (1 - share) + new_rgb.astype(np.float32) * share
    return paste(image, window, np.clip(np.rint(mixed), 0, top).astype(image.dtype))


class _Recolour(AnyDepth):
    """A recolour computes in float: on a 16-bit photo its accepted step is worked out
    again at 16 bits (the same inputs with the 16-bit picture)."""

    def _prepared(
        self, inputs: Mapping[ArtifactKind, Any]
    ) -> tuple[np.ndarray, Box, np.ndarray, np.ndarray]:
        """The picture, the window, the window's mask and the object's coverage there."""
        image, mask = inputs[ArtifactKind.IMAGE], inputs[ArtifactKind.MASK].astype(bool)
        window = _mask_window(image, mask)
        inside = crop(mask, window)
        return image, window, inside, coverage(crop(image, window), inside)


def _result(image: np.ndarray, window: Box, started: float, preparing: float) -> ToolResult:
    """The recoloured picture; its cost the work's, not pymatting's first import."""
    spent = time.perf_counter() - started - preparing
    return ToolResult({ArtifactKind.IMAGE: image}, cost=max(0.0, spent), window=window)


class LabRecolor(_Recolour):
    """Recolour in OKLab: best for any target colour, including greys and pastels."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        started = time.perf_counter()
        _, preparing = closed_form()  # (imported once here: see closed_form)
        image, window, inside, weight = self._prepared(inputs)
        new = recolor_lab(
            crop(image, window), inside, _target_color(ctx), float(params["lightness"]), weight
        )
        return _result(laid_on(image, weight, new, window), window, started, preparing)


class HsvRecolor(_Recolour):
    """Recolour in HSV: fast, good for saturated targets, poor for greys and big
    lightness changes."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        started = time.perf_counter()
        _, preparing = closed_form()
        image, window, _, weight = self._prepared(inputs)
        new = recolor_hsv(crop(image, window), _target_color(ctx), float(params["saturation"]))
        return _result(laid_on(image, weight, new, window), window, started, preparing)
