"""Mask source: the user's named masks and selection as segmentation and detection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from layerpath.errors import TargetNotFound, shown
from layerpath.tools.base import Tool
from layerpath.tools.imaging import component_boxes
from layerpath.tools.types import ArtifactKind, ToolContext, ToolResult

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
    known = shown(", ".join(sorted(masks)) or "none", 400)
    raise TargetNotFound(
        f"No mask for '{shown(target or '')}'. Masks in this request: {known}. Give one with "
        f"--mask {shown(words[-1]) if words else 'name'}=mask.png, name a layer or Krita mask "
        "after the object, or select it."
    )


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
        boxes = component_boxes(mask, label)
        return ToolResult({ArtifactKind.MASK: mask.copy(), ArtifactKind.BOXES: boxes})
