"""Segment Anything (transformers, PyTorch): a precise mask from a box — the user's
rough selection, a named mask's box, or a detector's.

Each box is segmented on a window around it at the model's resolution (the long side
scaled to the model's input, padded to its square), so a large photo is never resized;
the mask is scaled back into the window. Preprocessing is done here (ImageNet
normalisation as SAM's processor does), so nothing imports torchvision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.imaging import rgb
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.base import Tool
from layerpath.tools.crops import crop_for_model, crop_window
from layerpath.tools.device import RESIDENT, tool_device
from layerpath.tools.hf import IMAGENET, TorchModelTool, load_pretrained, normalized


def load_model(folder: str, device: str) -> Any:
    from transformers import SamModel

    return load_pretrained(SamModel, folder, device)


def segment_box(model: Any, image_rgb: np.ndarray, box: Box, padding: float) -> tuple[Box, Any]:
    """The window around `box` and SAM's mask for it (bool, the window's size)."""
    import torch

    side = int(model.config.vision_config.image_size)
    crop = crop_for_model(image_rgb, box, side, padding=padding, multiple=1)
    h, w = crop.pixels.shape[:2]
    square = np.zeros((1, 3, side, side), np.float32)
    square[..., :h, :w] = normalized(crop.pixels, IMAGENET)
    window = crop.window
    prompt = [
        (box.x0 - window.x0) * crop.scale,
        (box.y0 - window.y0) * crop.scale,
        (box.x1 - window.x0) * crop.scale,
        (box.y1 - window.y0) * crop.scale,
    ]
    parameter = next(model.parameters())
    pixels = torch.from_numpy(square).to(parameter.device, parameter.dtype)
    boxes = torch.tensor([[prompt]], device=parameter.device, dtype=parameter.dtype)
    with torch.inference_mode():
        logits = model(pixel_values=pixels, input_boxes=boxes, multimask_output=False).pred_masks
    low = np.asarray(logits[0, 0, 0].float().cpu().numpy(), dtype=np.float32)
    full = cv2.resize(low, (side, side), interpolation=cv2.INTER_LINEAR)[:h, :w]
    mask = cv2.resize(full, (window.width, window.height), interpolation=cv2.INTER_LINEAR) > 0
    return window, mask


def boxes_and_picture(inputs: Mapping[ArtifactKind, Any]) -> tuple[tuple[Box, ...], np.ndarray]:
    """The boxes to segment (a clear error when there are none) and the RGB picture."""
    boxes: tuple[Box, ...] = tuple(inputs[ArtifactKind.BOXES])
    if not boxes:
        raise ToolFailed("There is no box to segment; select the object first.")
    return boxes, rgb(inputs[ArtifactKind.IMAGE])


def union_of_windows(
    shape: tuple[int, ...], boxes: tuple[Box, ...], segment: Callable[[Box], tuple[Box, Any]]
) -> np.ndarray:
    """The union of each box's mask, `segment(box)` giving its window and the mask in it."""
    mask = np.zeros(shape[:2], dtype=bool)
    for box in boxes:
        window, found = segment(box)
        mask[window.y0 : window.y1, window.x0 : window.x1] |= found
    return mask


class SamSegment(TorchModelTool):
    """A mask for each box from Segment Anything (their union)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        boxes, image = boxes_and_picture(inputs)
        padding = float(params["padding"])

        def use(model: Any, scale: float) -> np.ndarray:
            return union_of_windows(
                image.shape, boxes, lambda box: segment_box(model, image, box, padding)
            )

        mask = self.on_device(params, lambda f, d: load_model(f, d), use)  # fixed input size
        return ToolResult({ArtifactKind.MASK: mask})


class SegmentAnythingSegment(Tool):
    """A mask for each box from Meta's segment-anything package, the reference
    implementation (PyTorch + torchvision: GPU machines), on the same windows."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        boxes, image = boxes_and_picture(inputs)
        path, device = str(self.model_file()), tool_device(params)

        def load() -> Any:
            import torch
            from segment_anything import SamPredictor, sam_model_registry

            model = sam_model_registry["vit_b"]()
            checkpoint = str(self.checked_model_file())
            model.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=True))
            return SamPredictor(model.to(device).eval())

        predictor = RESIDENT.get((self.name, path, device), load)

        def segment(box: Box) -> tuple[Box, np.ndarray]:
            window = crop_window(image.shape, box, padding=float(params["padding"]))
            predictor.set_image(
                np.ascontiguousarray(image[window.y0 : window.y1, window.x0 : window.x1])
            )
            corners = np.array(
                [box.x0 - window.x0, box.y0 - window.y0, box.x1 - window.x0, box.y1 - window.y0]
            )
            found, _, _ = predictor.predict(box=corners, multimask_output=False)
            return window, found[0].astype(bool)

        mask = union_of_windows(image.shape, boxes, segment)
        return ToolResult({ArtifactKind.MASK: mask})
