"""Removal by filling: OpenCV's diffusion inpainting (Telea, Navier-Stokes: fast, for
scratches and small objects on plain ground) and exemplar-based completion by
PatchMatch (tools/patchmatch.py: real texture copied from around the object)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.imaging import dilate, mask_box, rgb
from layerpath.kit.regions import crop, grow_box, paste
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.base import Tool
from layerpath.tools.lines import carry_lines, fill_along
from layerpath.tools.patchmatch import fill_window, ring_texture, smooth_fill

_FLAGS = {"telea": cv2.INPAINT_TELEA, "ns": cv2.INPAINT_NS}


def inpaint_region(
    image: np.ndarray, mask: np.ndarray, method: str, radius: float, grow: int
) -> tuple[np.ndarray, Box]:
    """Inpaint the (grown) mask, working on a padded crop so big photos stay fast; the
    result and the window it changed."""
    outer = mask_box(mask, pad=grow + max(8, int(radius) * 4))
    if outer is None:
        raise ToolFailed("The mask to fill is empty; nothing to remove.")
    region = dilate(crop(mask, outer), grow)
    box = mask_box(region, pad=max(8, int(radius) * 4))
    assert box is not None
    window = Box(outer.x0 + box.x0, outer.y0 + box.y0, outer.x0 + box.x1, outer.y0 + box.y1)
    pixels = np.ascontiguousarray(rgb(crop(image, window)))
    inside = crop(region, box)
    filled = cv2.inpaint(pixels, inside.astype(np.uint8) * 255, float(radius), _FLAGS[method])
    pixels[inside] = filled[inside]
    return paste(image, window, pixels), window


class OpenCvInpaint(Tool):
    """Fill a masked object from its surroundings (classical, CPU, no model)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        out, window = inpaint_region(
            inputs[ArtifactKind.IMAGE],
            inputs[ArtifactKind.MASK],
            str(params["method"]),
            float(params["radius"]),
            int(params["grow"]),
        )
        return ToolResult({ArtifactKind.IMAGE: out}, window=window)


#: a smooth_below no ground reaches: the fill is smooth wherever it is tried
ALWAYS_SMOOTH = 1e9


class PatchMatchFill(Tool):
    """Fill a masked object with texture copied from around it (exemplar-based
    completion by PatchMatch, coarse to fine): grain, grass and glaze continue through
    the hole instead of a smear."""

    @staticmethod
    def _window(
        image: np.ndarray, mask: np.ndarray, params: Mapping[str, Any]
    ) -> tuple[Box, np.ndarray]:
        """Where the fill works (the object and context to copy from: the object's own
        size around it, at least 64 pixels) and the hole in it."""
        grow = int(params["grow"])
        bounds = mask_box(mask)
        if bounds is None:
            raise ToolFailed("The mask to fill is empty; nothing to remove.")
        context = max(64, int(float(params["context"]) * max(bounds.width, bounds.height)))
        window = grow_box(bounds, context + grow, image.shape)
        return window, dilate(crop(mask, window), grow)

    @staticmethod
    def _fill(
        picture: np.ndarray,
        hole: np.ndarray,
        params: Mapping[str, Any],
        progress: Callable[[float], None] = lambda share: None,
        deep: np.ndarray | None = None,
    ) -> tuple[np.ndarray, bool]:
        """The window filled, and whether smoothly: the straight lines crossing the hole
        carried across it first (tools/lines.py), then smoothly where the ground is soft
        (a sky, bokeh), else with copied texture; with `deep` (the window at 16 bits) the
        same fill at 16."""
        if params.get("lines", True):
            picture, rest, deep = carry_lines(picture, hole, deep)
            carried = hole & ~rest
            if carried.any():
                again = {**params, "lines": False, "smooth_below": 0.0}  # (no glow spread)
                filled, _ = PatchMatchFill._fill(picture, rest, again, progress, deep)
                drawn = picture if deep is None else deep
                filled[carried] = drawn[carried]  # (a smooth fill blends over its border)
                return filled, False
        if ring_texture(picture, hole) < float(params.get("smooth_below", 0.0)):
            along = fill_along(picture, hole, deep) if params.get("lines", True) else None
            if along is not None:  # soft ground whose shapes run one way: along them
                return (along[0] if deep is None or along[1] is None else along[1]), True
            drawn = picture if deep is None else deep
            return smooth_fill(drawn, hole, seed=int(params["seed"])), True
        patches = fill_window(
            picture,
            hole,
            seed=int(params["seed"]),
            iterations=int(params["iterations"]),
            guided=bool(params["guided"]),
            progress=progress,
            deep=deep,
        )
        return patches, False

    def run_deep(
        self,
        ctx: ToolContext,
        inputs: Mapping[ArtifactKind, Any],
        params: Mapping[str, Any],
        deep: np.ndarray,
    ) -> np.ndarray:
        """On a 16-bit photo the accepted fill worked out at 16 bits: a smooth fill
        computed at 16 bits (where 8 bits band), a patch fill made again from the picture
        the step saw (the same matches: it is seeded) with each copied pixel its
        source's 16-bit value."""
        image, mask = inputs[ArtifactKind.IMAGE], inputs[ArtifactKind.MASK]
        window, hole = self._window(image, mask, params)
        picture = np.ascontiguousarray(rgb(crop(image, window)))
        filled, _ = self._fill(
            picture, hole, params, deep=np.ascontiguousarray(rgb(crop(deep, window)))
        )
        return paste(deep, window, filled)

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image, mask = inputs[ArtifactKind.IMAGE], inputs[ArtifactKind.MASK]
        window, hole = self._window(image, mask, params)
        picture = np.ascontiguousarray(rgb(crop(image, window)))
        filled, smooth = self._fill(picture, hole, params, ctx.progress)
        # a fill vouched for by trials nearby is tried there the same way (smooth or
        # copied patches), whatever the ground there would choose
        settled = {"smooth_below": ALWAYS_SMOOTH if smooth else 0.0}
        return ToolResult(
            {ArtifactKind.IMAGE: paste(image, window, filled)}, window=window, settled=settled
        )
