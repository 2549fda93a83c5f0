"""OpenCV inpainting (Telea, Navier-Stokes) as removal and erase tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.tools.base import Tool
from layerpath.tools.imaging import dilate, mask_box, rgb, with_rgb
from layerpath.tools.types import ArtifactKind, ToolContext, ToolResult

_FLAGS = {"telea": cv2.INPAINT_TELEA, "ns": cv2.INPAINT_NS}


def inpaint_region(
    image: np.ndarray, mask: np.ndarray, method: str, radius: float, grow: int
) -> np.ndarray:
    """Inpaint the (grown) mask, working on a padded crop so big photos stay fast."""
    region = dilate(mask, grow)
    box = mask_box(region, pad=max(8, int(radius) * 4))
    if box is None:
        raise ToolFailed("The mask to fill is empty; nothing to remove.")
    crop = np.ascontiguousarray(rgb(image)[box.y0 : box.y1, box.x0 : box.x1])
    crop_mask = region[box.y0 : box.y1, box.x0 : box.x1].astype(np.uint8) * 255
    filled = cv2.inpaint(crop, crop_mask, float(radius), _FLAGS[method])
    out_rgb = rgb(image).copy()
    sub = out_rgb[box.y0 : box.y1, box.x0 : box.x1]
    inside = crop_mask > 0
    sub[inside] = filled[inside]
    return with_rgb(image, out_rgb)


class OpenCvInpaint(Tool):
    """Fill a masked object from its surroundings (classical, CPU, no model)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        out = inpaint_region(
            inputs[ArtifactKind.IMAGE],
            inputs[ArtifactKind.MASK],
            str(params["method"]),
            float(params["radius"]),
            int(params["grow"]),
        )
        return ToolResult({ArtifactKind.IMAGE: out})
