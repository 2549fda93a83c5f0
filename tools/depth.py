"""Depth estimation with Depth Anything (transformers, PyTorch): a relative depth map of
the whole photo, near = 1, far = 0.

The model sees a copy scaled to its resolution (sides multiples of its 14-pixel
patches); its prediction is scaled back to the photo's size. Preprocessing is done here
(resize + ImageNet normalisation, as the model's image processor does), so nothing
imports torchvision. Out of GPU memory, it tries a smaller input, then the CPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.imaging import rgb
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.hf import IMAGENET, TorchModelTool, load_pretrained, normalized


def load_model(folder: str, device: str) -> Any:
    from transformers import AutoModelForDepthEstimation

    return load_pretrained(AutoModelForDepthEstimation, folder, device)


def model_input(image_rgb: np.ndarray, short_side: int, patch: int) -> np.ndarray:
    """1x3xHxW float32: short side ~`short_side`, both sides multiples of `patch`."""
    h, w = image_rgb.shape[:2]
    scale = short_side / min(h, w)
    size_h = max(patch, int(round(h * scale / patch)) * patch)
    size_w = max(patch, int(round(w * scale / patch)) * patch)
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    small = cv2.resize(image_rgb, (size_w, size_h), interpolation=interpolation)
    return normalized(small, IMAGENET)


def predict(model: Any, pixels: np.ndarray) -> np.ndarray:
    import torch

    parameter = next(model.parameters())
    tensor = torch.from_numpy(pixels).to(parameter.device, parameter.dtype)
    with torch.inference_mode():
        depth = model(pixel_values=tensor).predicted_depth
    return np.asarray(depth[0].float().cpu().numpy(), dtype=np.float32)


class DepthAnything(TorchModelTool):
    """A relative depth map (near = bright) from Depth Anything."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = rgb(inputs[ArtifactKind.IMAGE])
        resolution = int(params["resolution"])

        def use(model: Any, scale: float) -> np.ndarray:
            patch = int(getattr(model.config, "patch_size", 14))
            return predict(model, model_input(image, max(patch, int(resolution * scale)), patch))

        raw = self.on_device(params, lambda f, d: load_model(f, d), use, scales=(1.0, 0.5))
        if not np.isfinite(raw).all():
            raise ToolFailed("The depth model returned invalid values for this photo.")
        h, w = image.shape[:2]
        depth = cv2.resize(raw, (w, h), interpolation=cv2.INTER_LINEAR)
        low, high = float(depth.min()), float(depth.max())
        depth = (depth - low) / (high - low) if high > low else np.zeros_like(depth)
        return ToolResult({ArtifactKind.DEPTH: depth.astype(np.float32)})
