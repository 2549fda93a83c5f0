"""Whole-image enhancement without models: unsharp-mask deblurring."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.tools.base import Tool
from layerpath.tools.imaging import rgb, with_rgb
from layerpath.tools.types import ArtifactKind, ToolContext, ToolResult


class UnsharpDeblur(Tool):
    """Sharpen mild blur with an unsharp mask (fast; no model)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        pixels = rgb(image).astype(np.float32)
        blurred = cv2.GaussianBlur(pixels, (0, 0), float(params["sigma"]))
        amount = float(params["amount"])
        sharp = np.clip(pixels * (1 + amount) - blurred * amount, 0, 255).astype(np.uint8)
        return ToolResult({ArtifactKind.IMAGE: with_rgb(image, sharp)})
