"""Mask source: the user's named masks and selection as segmentation and detection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from layerpath.errors import TargetNotFound, shown
from layerpath.kit.imaging import component_boxes
from layerpath.kit.names import SELECTION_WORDS, normalize_name, resolve_mask
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.base import Tool


class NamedMaskSource(Tool):
    """Segmentation/detection from the request's own masks (no model)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        label, mask = resolve_mask(ctx.target, ctx.masks, ctx.selection)
        if mask.shape != image.shape[:2]:
            raise TargetNotFound(
                f"The mask '{shown(label)}' is {mask.shape[1]}x{mask.shape[0]} but the image is "
                f"{image.shape[1]}x{image.shape[0]}; export the mask at the image size."
            )
        if (
            label == "selection"
            and ctx.target
            and normalize_name(ctx.target) not in SELECTION_WORDS
        ):
            mask = refined_selection(image, mask, label)
        boxes = component_boxes(mask, label)
        return ToolResult({ArtifactKind.MASK: mask.copy(), ArtifactKind.BOXES: boxes})


#: a selection filling this much of its bounds is a rough box around the object
BOXLIKE = 0.9


def refined_selection(image: np.ndarray, selection: np.ndarray, label: str) -> np.ndarray:
    """A rough rectangle selected around a named object, refined to the object inside
    it (GrabCut from the rectangle, on a copy at most WORK_SIDE pixels across); any
    other selection's shape is the user's own and is kept."""
    from layerpath.kit.imaging import mask_box, small_copy
    from layerpath.kit.regions import full_size_mask
    from layerpath.tools.finders import WORK_SIDE, refine_box

    bounds = mask_box(selection)
    if bounds is None or selection[bounds.y0 : bounds.y1, bounds.x0 : bounds.x1].mean() < BOXLIKE:
        return selection
    small = small_copy(image, WORK_SIDE)
    scale = small.shape[1] / image.shape[1]
    box = Box(
        int(bounds.x0 * scale), int(bounds.y0 * scale),
        int(np.ceil(bounds.x1 * scale)), int(np.ceil(bounds.y1 * scale)), label,
    )  # fmt: skip
    inside = refine_box(small, box)
    if inside.mean() * small.size / 3 < 16:  # GrabCut kept nothing: the box as given
        return selection
    return full_size_mask(inside, image.shape) & selection
