"""Probe: context features of a subtask's target, the inputs of rule activation.

Features come from the user's masks and the pixels around them (size bucket, mask
ratio, instances, background complexity, overlap with other subtasks' targets,
colour transition) and, for text subtasks, from the detected text boxes (text height,
background behind the text). OCR text itself is never a feature: it is data only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import cv2
import numpy as np

from layerpath.engine.kinds import kind_spec
from layerpath.engine.types import Box, Snapshot, Subtask, SubtaskKind, TextBox
from layerpath.errors import LayerpathError
from layerpath.kit.colours import ColourNames, color_lab, colours_in, parse_color, to_lab
from layerpath.kit.imaging import component_boxes, dilate, mask_box, rgb, ring
from layerpath.kit.names import coco_class, resolve_mask, select_text_boxes
from layerpath.kit.regions import analysis_copy, crop, grow_box

K = SubtaskKind


#: the most pixels a 'tiny' region holds however large the photo: a speck a diffusion
#: fill (Telea) closes cleanly; on a camera file half a percent of the picture is a
#: 460 x 300 hole, where such a fill leaves a lighter wedge
TINY_PIXELS = 80 * 80


def size_bucket(ratio: float, pixels: int | None = None) -> str:
    """tiny / small / medium / large: the region's share of the picture, a 'tiny' one
    also small in pixels (TINY_PIXELS)."""
    if ratio < 0.005 and (pixels is None or pixels <= TINY_PIXELS):
        return "tiny"
    if ratio < 0.005:
        return "small"
    if ratio < 0.03:
        return "small"
    if ratio < 0.2:
        return "medium"
    return "large"


#: pixels a probe looks at: a larger window is analysed on a scaled-down copy
PROBE_PIXELS = 1_000_000


def background_complexity(image: np.ndarray, region: np.ndarray) -> str:
    """flat / textured / busy from grey-level spread and edge density around a region,
    measured on the region's window (scaled down to PROBE_PIXELS on a large photo)."""
    bounds = mask_box(region)
    if bounds is None:
        return "flat"
    width = max(6, int(np.sqrt(region.sum()) * 0.25))
    window = grow_box(bounds, width + 1, image.shape)
    pixels, scale = analysis_copy(rgb(crop(image, window)), PROBE_PIXELS)
    inside, _ = analysis_copy(crop(region, window), PROBE_PIXELS)
    around = ring(inside, max(2, round(width * scale)))
    if not around.any():
        return "flat"
    gray = cv2.cvtColor(np.ascontiguousarray(pixels), cv2.COLOR_RGB2GRAY)
    edges = cv2.Canny(gray, 60, 160) > 0
    spread, density = float(gray[around].std()), float(edges[around].mean())
    if spread < 10 and density < 0.03:
        return "flat"
    if density < 0.12:
        return "textured"
    return "busy"


def color_transition(
    image: np.ndarray, mask: np.ndarray, to: str, colours: ColourNames = parse_color
) -> str:
    """How far the recolour travels: to/from neutral, lighter/darker, or a hue shift."""
    try:
        target = color_lab(colours(to))
    except LayerpathError:
        return "unknown"
    window = mask_box(mask)
    if window is None:
        return "unknown"
    pixels, _ = analysis_copy(rgb(crop(image, window)), PROBE_PIXELS)
    inside, _ = analysis_copy(crop(mask, window), PROBE_PIXELS)
    if not inside.any():
        inside = np.ones(inside.shape, dtype=bool)
    source = to_lab(pixels)[inside].mean(axis=0)
    chroma = lambda lab: float(np.hypot(lab[1], lab[2]))  # noqa: E731
    if chroma(target) < 12:
        return "to_neutral"
    if chroma(source) < 12:
        return "from_neutral"
    if target[0] - source[0] > 30:
        return "lighter"
    if source[0] - target[0] > 30:
        return "darker"
    return "hue_shift"


def _object_features(
    subtask: Subtask, snapshot: Snapshot, others: Sequence[Subtask]
) -> dict[str, Any]:
    features: dict[str, Any] = {}
    target = (subtask.target or "").lower()
    features["detector_class"] = "coco" if coco_class(target) else "open"
    try:
        _, mask = resolve_mask(subtask.target, snapshot.masks, snapshot.selection)
    except LayerpathError:
        features["mask_available"] = False
        return features
    if mask.shape != snapshot.image.shape[:2]:
        features["mask_available"] = False
        return features
    ratio = float(np.count_nonzero(mask)) / mask.size
    bounds = mask_box(mask)
    features.update(
        mask_available=True,
        mask_ratio=round(ratio, 5),
        size=size_bucket(ratio, int(np.count_nonzero(mask))),
        instances=len(component_boxes(crop(mask, bounds), target)) if bounds else 0,
        background=background_complexity(snapshot.image, mask),
    )
    overlap = False
    for other in others:
        if other is subtask or not other.target:
            continue
        try:
            _, other_mask = resolve_mask(other.target, snapshot.masks, None)
        except LayerpathError:
            continue
        overlap = overlap or masks_touch(mask, other_mask)
    features["overlap"] = overlap
    if subtask.kind == K.OBJECT_RECOLORATION and subtask.to:
        features["color_transition"] = color_transition(
            snapshot.image, mask, subtask.to, colours_in(snapshot.icc_profile)
        )
    return features


def masks_touch(a: np.ndarray, b: np.ndarray, gap: int = 5) -> bool:
    """Whether two masks of one picture come within `gap` pixels of each other (looked
    at where their bounds meet, not over the whole photo)."""
    if a.shape != b.shape:
        return False
    box_a, box_b = mask_box(a, pad=gap), mask_box(b)
    if box_a is None or box_b is None:
        return False
    meet = Box(
        max(box_a.x0, box_b.x0),
        max(box_a.y0, box_b.y0),
        min(box_a.x1, box_b.x1),
        min(box_a.y1, box_b.y1),
    )
    if meet.width <= 0 or meet.height <= 0:
        return False
    near = grow_box(meet, gap, a.shape)
    grown = dilate(crop(a, near), gap)
    inner = Box(meet.x0 - near.x0, meet.y0 - near.y0, meet.x1 - near.x0, meet.y1 - near.y0)
    return bool((crop(grown, inner) & crop(b, meet)).any())


def regions_touch(a: Subtask, b: Subtask, snapshot: Snapshot) -> bool:
    """Whether two subtasks' target masks touch (False when either is unknown)."""
    try:
        _, mask_a = resolve_mask(a.target, snapshot.masks, snapshot.selection)
        _, mask_b = resolve_mask(b.target, snapshot.masks, snapshot.selection)
    except LayerpathError:
        return False
    return masks_touch(mask_a, mask_b)


def _text_features(
    subtask: Subtask,
    image: np.ndarray,
    boxes: Sequence[TextBox],
    selection: np.ndarray | None = None,
) -> dict[str, Any]:
    chosen = select_text_boxes(
        boxes, subtask.params, subtask.kind == SubtaskKind.TEXT_REPLACEMENT, selection
    )
    if not chosen:
        return {"text_found": False}
    height = float(np.median([(b.ink or b.box).height for b in chosen]))
    flat_shares = []
    for b in chosen:
        crop = rgb(image)[b.box.y0 : b.box.y1, b.box.x0 : b.box.x1].astype(np.int16)
        border = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
        near = np.abs(border - np.median(border, axis=0)).sum(axis=1) < 40
        flat_shares.append(float(near.mean()))
    return {
        "text_found": True,
        "text_boxes": len(chosen),
        "text_height": "small" if height < 16 else "medium" if height < 48 else "large",
        # flat when nearly all the border is one colour (a thin sign outline is allowed)
        "text_background": "flat" if min(flat_shares) >= 0.85 else "busy",
    }


def probe(
    subtask: Subtask,
    snapshot: Snapshot,
    image: np.ndarray,
    others: Sequence[Subtask],
    read_text: Callable[[], Sequence[TextBox]] | None = None,
) -> Mapping[str, Any]:
    """The features of one subtask. `image` is the current image (after earlier
    subtasks); `read_text` gives its text boxes (memoised OCR) for text subtasks."""
    if kind_spec(subtask.kind).on_text_boxes and read_text is not None:
        return _text_features(subtask, image, read_text(), snapshot.selection)
    if subtask.target and not kind_spec(subtask.kind).on_text_boxes:
        current = Snapshot(image, snapshot.masks, snapshot.selection)
        return {"target_named": True, **_object_features(subtask, current, others)}
    # the whole picture (or the selection): 'crop to 16:9', 'make it warmer'
    return {"target_named": False}
