"""Mask source: the user's named masks and selection as segmentation and detection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from layerpath.errors import TargetNotFound, shown
from layerpath.tools.base import Tool
from layerpath.tools.imaging import component_boxes
from layerpath.tools.types import ArtifactKind, Box, ToolContext, ToolResult

_ARTICLES = {"the", "a", "an", "this", "that", "these", "those", "all", "my", "its", "his", "her"}
_SELECTION_WORDS = {"", "this", "it", "here", "selection", "the selection", "selected area"}


def normalize_name(name: str) -> str:
    """'The Cats ' -> 'cats': lower case, no articles, single spaces."""
    words = [w for w in name.lower().replace("_", " ").split() if w not in _ARTICLES]
    return " ".join(words)


def _singular(word: str) -> str:
    for suffix, repl in (("ies", "y"), ("ses", "s"), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return word[: -len(suffix)] + repl
    return word


def resolve_mask(
    target: str | None, masks: Mapping[str, np.ndarray], selection: np.ndarray | None
) -> tuple[str, np.ndarray]:
    """Find the mask a target names: exact, singular/plural, head noun, then any word.

    "the cat" -> mask "cat"; "the red car" -> "car"; "this" -> the selection.
    """
    wanted = normalize_name(target or "")
    if wanted in _SELECTION_WORDS:
        if selection is not None and selection.any():
            return "selection", selection
        raise TargetNotFound(
            "The instruction refers to 'this' but nothing is selected. Select the region "
            "first, or name the object and give its mask."
        )
    by_name = {normalize_name(name): (name, mask) for name, mask in masks.items()}
    singular = {_singular(k): v for k, v in by_name.items()}
    words = wanted.split()
    for found in (
        by_name.get(wanted),
        singular.get(_singular(wanted)),
        singular.get(_singular(words[-1])),
        next((v for k, v in singular.items() if k in {_singular(w) for w in words}), None),
    ):
        if found is not None and found[1].any():
            return found
    if selection is not None and selection.any():  # the user selected what they name
        return "selection", selection
    known = shown(", ".join(sorted(masks)) or "none", 400)
    raise TargetNotFound(
        f"No mask for '{shown(target or '')}'. Masks in this request: {known}. Select it, or "
        "name a mask or layer after it."
    )


def user_region(
    target: str | None, masks: Mapping[str, np.ndarray], selection: np.ndarray | None
) -> str | None:
    """The name of the user's own region for a target (a mask named after it, or the
    selection), None when they gave none: then, and only then, may a finder look."""
    try:
        label, _ = resolve_mask(target, masks, selection)
    except TargetNotFound:
        return None
    return label


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
            and normalize_name(ctx.target) not in _SELECTION_WORDS
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
    from layerpath.tools.background import small_copy
    from layerpath.tools.finders import WORK_SIDE, full_size_mask, refine_box
    from layerpath.tools.imaging import mask_box, rgb

    bounds = mask_box(selection)
    if bounds is None or selection[bounds.y0 : bounds.y1, bounds.x0 : bounds.x1].mean() < BOXLIKE:
        return selection
    small = small_copy(rgb(image), WORK_SIDE)
    scale = small.shape[1] / image.shape[1]
    box = Box(
        int(bounds.x0 * scale), int(bounds.y0 * scale),
        int(np.ceil(bounds.x1 * scale)), int(np.ceil(bounds.y1 * scale)), label,
    )  # fmt: skip
    inside = refine_box(small, box)
    if inside.mean() * small.size / 3 < 16:  # GrabCut kept nothing: the box as given
        return selection
    return full_size_mask(inside, image.shape) & selection
