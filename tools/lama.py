"""LaMa (large-mask inpainting) through ONNX Runtime: object removal that fills large
regions with plausible texture, on the GPU when ONNX Runtime has CUDA, else the CPU.

The model sees a square window around the mask at its own resolution (512 for the
big-lama export), never the whole photo; the fill is pasted back with a feathered edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.imaging import paint_region, rgb, with_rgb
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.base import OnnxModelTool
from layerpath.tools.crops import crop_for_model, paste_back


def _port(session: Any, word: str) -> Any:
    for port in session.get_inputs():
        if word in port.name.lower():
            return port
    raise ToolFailed(f"The LaMa model has no input named like '{word}'.")


def inpaint(session: Any, image_rgb: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Run the model on one RGB window and its mask, both at model resolution (padded to
    the model's square input by reflection); RGB uint8 back, the window's size."""
    image_port, mask_port = _port(session, "image"), _port(session, "mask")
    side = image_port.shape[-1] if isinstance(image_port.shape[-1], int) else None
    h, w = mask.shape
    side = side or max(h, w)
    if max(h, w) > side:
        raise ToolFailed(f"The window ({w}x{h}) is larger than the model's input ({side}).")
    padded = cv2.copyMakeBorder(image_rgb, 0, side - h, 0, side - w, cv2.BORDER_REFLECT_101)
    mask_pad = np.zeros((side, side), np.float32)
    mask_pad[:h, :w] = mask
    feed = {
        image_port.name: padded.transpose(2, 0, 1)[None].astype(np.float32) / 255.0,
        mask_port.name: mask_pad[None, None],
    }
    out = session.run(None, feed)[0][0].transpose(1, 2, 0)
    if out.max() <= 1.5:  # exports differ: [0, 1] or [0, 255]
        out = out * 255.0
    return np.clip(np.rint(out[:h, :w]), 0, 255).astype(np.uint8)


class LamaInpaint(OnnxModelTool):
    """Fill a masked object with LaMa (a learned, texture-aware fill)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        region = paint_region(inputs[ArtifactKind.MASK], int(params["grow"]))
        # ONNX Runtime picks CUDA itself (no torch needed to know it is there)
        session = self.session(params)
        crop = crop_for_model(
            rgb(image), region, int(params["resolution"]), padding=float(params["padding"])
        )
        assert crop.mask is not None
        filled = inpaint(session, crop.pixels, crop.mask)
        out = paste_back(rgb(image), crop, filled, region, feather=int(params["feather"]))
        return ToolResult({ArtifactKind.IMAGE: with_rgb(image, out)}, window=crop.window)
