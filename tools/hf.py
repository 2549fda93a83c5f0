"""What the PyTorch model tools share: loading a transformers model from its folder onto
a device, the normalisations their processors use, and running on the device with the
shared model residency and the out-of-memory fallback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from layerpath.tools.base import Tool
from layerpath.tools.device import RESIDENT, tool_device, with_memory_fallback

IMAGENET = (
    np.array([0.485, 0.456, 0.406], np.float32),
    np.array([0.229, 0.224, 0.225], np.float32),
)
CLIP = (
    np.array([0.48145466, 0.4578275, 0.40821073], np.float32),
    np.array([0.26862954, 0.26130258, 0.27577711], np.float32),
)
T = TypeVar("T")


def load_pretrained(model_class: Any, folder: str, device: str, half: bool = True) -> Any:
    """model_class.from_pretrained from the local folder only (safetensors), in fp16 on
    CUDA when `half`, moved to the device, in eval mode."""
    import torch

    dtype = torch.float16 if half and device == "cuda" else torch.float32
    model = model_class.from_pretrained(
        folder, local_files_only=True, dtype=dtype, use_safetensors=True
    )
    return model.to(device).eval()


def normalized(image_rgb: np.ndarray, stats: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """HxWx3 uint8 -> 1x3xHxW float32, scaled to [0, 1] and normalised."""
    mean, std = stats
    pixels = (image_rgb.astype(np.float32) / 255.0 - mean) / std
    return pixels.transpose(2, 0, 1)[None]


class TorchModelTool(Tool):
    """A tool whose model is loaded from its model folder with PyTorch."""

    def on_device(
        self,
        params: Any,
        load: Callable[[str, str], Any],
        use: Callable[[Any, float], T],
        scales: tuple[float, ...] = (1.0,),
        shared_as: str | None = None,
    ) -> T:
        """use(model, scale) with the model loaded once (shared residency, under
        `shared_as` when other code loads the same model) on the settings' device; out of
        memory retries at the smaller `scales`, then the CPU."""
        assert self.spec.model is not None
        folder = str(self.models.require(self.spec.model))

        def attempt(device: str, scale: float) -> T:
            key = (shared_as or self.name, folder, device)
            model = RESIDENT.get(key, lambda: load(folder, device))
            return use(model, scale)

        device = tool_device(params)
        return with_memory_fallback(attempt, device, scales)
