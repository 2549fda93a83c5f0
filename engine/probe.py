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

from layerpath.engine.types import Snapshot, Subtask, SubtaskKind, TextBox
from layerpath.errors import LayerpathError
from layerpath.tools.imaging import (
    color_lab,
    component_boxes,
    dilate,
    parse_color,
    rgb,
    ring,
    to_lab,
)
from layerpath.tools.masks import resolve_mask
from layerpath.tools.text import select_text_boxes
from layerpath.tools.yolo import coco_class

K = SubtaskKind
TEXT_KINDS = {
    K.TEXT_REPLACEMENT,
    K.TEXT_REMOVAL,
    K.TEXT_REDACTION,
    K.KEYWORD_HIGHLIGHTING,
    K.TEXT_DETECTION,
    K.TEXT_EXTRACTION,
}


def size_bucket(ratio: float) -> str:
    if ratio < 0.005:
        return "tiny"
    if ratio < 0.03:
        return "small"
    if ratio < 0.2:
        return "medium"
    return "large"


def background_complexity(image: np.ndarray, region: np.ndarray) -> str:
    """flat / textured / busy from grey-level spread and edge density around a region."""
    around = ring(region, max(6, int(np.sqrt(region.sum()) * 0.25)))
    if not around.any():
        return "flat"
    gray = cv2.cvtColor(np.ascontiguousarray(rgb(image)), cv2.COLOR_RGB2GRAY)
    edges = cv2.Canny(gray, 60, 160) > 0
    spread, density = float(gray[around].std()), float(edges[around].mean())
    if spread < 10 and density < 0.03:
        return "flat"
    if density < 0.12:
        return "textured"
    return "busy"


def color_transition(image: np.ndarray, mask: np.ndarray, to: str) -> str:
    """How far the recolour travels: to/from neutral, lighter/darker, or a hue shift."""
    try:
        target = color_lab(parse_color(to))
    except LayerpathError:
        return "unknown"
    source = to_lab(rgb(image))[mask].mean(axis=0)
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
    ratio = float(mask.mean())
    features.update(
        mask_available=True,
        mask_ratio=round(ratio, 5),
        size=size_bucket(ratio),
        instances=len(component_boxes(mask, target)),
        background=background_complexity(snapshot.image, mask),
    )
    grown = dilate(mask, 5)
    overlap = False
    for other in others:
        if other is subtask or not other.target:
            continue
        try:
            _, other_mask = resolve_mask(other.target, snapshot.masks, None)
        except LayerpathError:
            continue
        overlap = overlap or (other_mask.shape == mask.shape and bool((grown & other_mask).any()))
    features["overlap"] = overlap
    if subtask.kind == K.OBJECT_RECOLORATION and subtask.to:
        features["color_transition"] = color_transition(snapshot.image, mask, subtask.to)
    return features


def regions_touch(a: Subtask, b: Subtask, snapshot: Snapshot) -> bool:
    """Whether two subtasks' target masks touch (False when either is unknown)."""
    try:
        _, mask_a = resolve_mask(a.target, snapshot.masks, snapshot.selection)
        _, mask_b = resolve_mask(b.target, snapshot.masks, snapshot.selection)
    except LayerpathError:
        return False
    return mask_a.shape == mask_b.shape and bool((dilate(mask_a, 5) & mask_b).any())


def _text_features(subtask: Subtask, image: np.ndarray, boxes: Sequence[TextBox]) -> dict[str, Any]:
    chosen = select_text_boxes(boxes, subtask.params)
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
    if subtask.kind in TEXT_KINDS and read_text is not None:
        return _text_features(subtask, image, read_text())
    if subtask.target and subtask.kind not in TEXT_KINDS:
        current = Snapshot(image, snapshot.masks, snapshot.selection)
        return _object_features(subtask, current, others)
    return {}
