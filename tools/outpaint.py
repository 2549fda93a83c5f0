"""Outpainting: the canvas grows on the asked sides (a quarter of the picture's size by
default) and the new margin is filled from the picture's edge, which is not changed.

`edge_outpaint` (offline) mirrors the edge into the margin, then lets it dissolve into
an ever blurrier version of itself, so the extension carries the edge's colours and
coarse texture without repeating its details sharply. It suits skies, walls, grass and
water. `lama_outpaint` lets LaMa, a learned inpainter, paint the margin from the whole
picture (at its 512-pixel resolution: a soft but plausible continuation), and
`sd_outpaint` lets Stable Diffusion's inpainting model do it (GPU; sharper, invents more).
Each tool reports where the old picture now lies (PLACEMENT), so a step that grew the
canvas on the left or top moves the other layers with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import BadInput, ToolFailed
from layerpath.kit.imaging import model_size
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.base import OnnxModelTool, Tool

SIDES = ("left", "right", "top", "bottom")


def margins(ctx: ToolContext, shape: tuple[int, ...], share: float) -> dict[str, int]:
    """Pixels to add on each side: the asked number of pixels ('pixels'), else `share`
    of the width (left, right) or height (top, bottom), on the sides asked for ('all
    sides' when none was named)."""
    side = str(ctx.subtask_params.get("side") or "all sides")
    chosen = SIDES if side == "all sides" else (side,)
    if any(s not in SIDES for s in chosen):
        raise ToolFailed(f"Outpainting extends left, right, top, bottom or all sides, not {side}.")
    h, w = shape[:2]
    sizes = {"left": w, "right": w, "top": h, "bottom": h}
    asked = ctx.subtask_params.get("pixels")
    if asked is not None:
        pixels = int(asked)
        if not 0 < pixels <= 4 * max(h, w):
            raise BadInput(f"Extend the canvas by 1 to {4 * max(h, w)} pixels, not {asked}.")
        return {s: pixels if s in chosen else 0 for s in SIDES}
    return {s: int(round(sizes[s] * share)) if s in chosen else 0 for s in SIDES}


def mirrored_canvas(
    ctx: ToolContext, image: np.ndarray, share: float
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The grown picture to paint on (opaque, the edge mirrored into the margin), the
    margin as a mask, and the pixels added on each side."""
    pad = margins(ctx, image.shape, share)
    if not any(pad.values()):
        raise ToolFailed("There is nothing to extend.")
    h, w = image.shape[:2]
    grown = cv2.copyMakeBorder(
        image, pad["top"], pad["bottom"], pad["left"], pad["right"], cv2.BORDER_REFLECT_101
    )
    grown[..., 3] = 255
    margin = np.ones(grown.shape[:2], bool)
    margin[pad["top"] : pad["top"] + h, pad["left"] : pad["left"] + w] = False
    return grown, margin, pad


class EdgeOutpaint(Tool):
    """Extend the canvas and fill the margin from the mirrored, dissolving edge."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        grown, margin, pad = mirrored_canvas(ctx, image, float(params["share"]))
        h, w = image.shape[:2]
        # distance into the margin, 0 at the old edge: the further, the blurrier
        distance = cv2.distanceTransform(margin.astype(np.uint8), cv2.DIST_L2, 5)
        colour = grown[..., :3].astype(np.float32)
        reach = float(max(pad.values()))
        for level in (0.25, 0.5, 1.0):  # blend towards blurrier copies, step by step
            sigma = max(1.0, reach * level * float(params["blur"]))
            blurred = cv2.GaussianBlur(colour, (0, 0), sigma)
            weight = np.clip(distance / (reach * level), 0.0, 1.0)[..., None]
            colour = colour * (1 - weight) + blurred * weight
        out = grown.copy()
        out[..., :3] = np.clip(np.rint(colour), 0, 255).astype(np.uint8)
        out[pad["top"] : pad["top"] + h, pad["left"] : pad["left"] + w] = image  # untouched
        return ToolResult(
            {ArtifactKind.IMAGE: out, ArtifactKind.PLACEMENT: (pad["left"], pad["top"])}
        )


def painted_margin(
    ctx: ToolContext,
    image: np.ndarray,
    params: Mapping[str, Any],
    paint: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> ToolResult:
    """Grow the canvas and fill its margin with what a model paints: `paint` gets the
    grown picture at the model's resolution (RGB) and the margin there (bool), and
    returns its RGB picture of that size; scaled up, only its margin is used."""
    grown, margin, pad = mirrored_canvas(ctx, image, float(params["share"]))
    size = model_size(grown.shape, int(params["resolution"]))
    small = cv2.resize(np.ascontiguousarray(grown[..., :3]), size, interpolation=cv2.INTER_AREA)
    small_margin = cv2.resize(margin.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST)
    filled = paint(small, small_margin > 0)
    big = cv2.resize(filled, (grown.shape[1], grown.shape[0]), interpolation=cv2.INTER_CUBIC)
    out = grown.copy()
    out[..., :3][margin] = big[margin]
    return ToolResult({ArtifactKind.IMAGE: out, ArtifactKind.PLACEMENT: (pad["left"], pad["top"])})


class LamaOutpaint(OnnxModelTool):
    """Extend the canvas and let LaMa fill the margin: it sees the grown picture at its
    resolution (the margin as its mask) and paints what continues the scene; its fill,
    scaled up, goes into the margin only."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        from layerpath.tools.lama import inpaint

        session = self.session(params)
        return painted_margin(
            ctx,
            inputs[ArtifactKind.IMAGE],
            params,
            lambda small, margin: inpaint(session, small, margin),
        )
