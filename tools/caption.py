"""Image captioning with BLIP (transformers, PyTorch): one sentence about the photo.

The model sees a copy scaled to its square input; preprocessing (resize + CLIP
normalisation, as BLIP's processor does) is done here, so nothing imports torchvision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.tools.base import Tool
from layerpath.tools.device import RESIDENT, resolve_device, with_memory_fallback
from layerpath.tools.imaging import rgb
from layerpath.tools.types import ArtifactKind, ToolContext, ToolResult

MEAN = np.array([0.48145466, 0.4578275, 0.40821073], np.float32)
STD = np.array([0.26862954, 0.26130258, 0.27577711], np.float32)


def load_model(folder: str, device: str) -> tuple[Any, Any]:
    from transformers import AutoTokenizer, BlipForConditionalGeneration

    model = BlipForConditionalGeneration.from_pretrained(
        folder, local_files_only=True, use_safetensors=True
    )
    return model.to(device).eval(), AutoTokenizer.from_pretrained(folder, local_files_only=True)


def caption(model: Any, tokenizer: Any, image_rgb: np.ndarray, words: int, beams: int) -> str:
    import torch

    side = int(model.config.vision_config.image_size)
    square = cv2.resize(image_rgb, (side, side), interpolation=cv2.INTER_AREA)
    pixels = (square.astype(np.float32) / 255.0 - MEAN) / STD
    parameter = next(model.parameters())
    tensor = torch.from_numpy(pixels.transpose(2, 0, 1)[None]).to(parameter.device)
    with torch.inference_mode():
        ids = model.generate(pixel_values=tensor, max_new_tokens=words, num_beams=beams)
    return str(tokenizer.decode(ids[0], skip_special_tokens=True)).strip()


class BlipCaption(Tool):
    """A one-sentence caption of the photo from BLIP."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        assert self.spec.model is not None
        folder = str(self.models.require(self.spec.model))
        image = rgb(inputs[ArtifactKind.IMAGE])

        def attempt(device: str, scale: float) -> str:
            model, tokenizer = RESIDENT.get(
                (self.name, folder, device), lambda: load_model(folder, device)
            )
            return caption(model, tokenizer, image, int(params["max_words"]), int(params["beams"]))

        device = resolve_device(str(params.get("device", "auto")))
        text = with_memory_fallback(attempt, device, scales=(1.0,))
        if not text:
            raise ToolFailed("The captioning model returned no words for this photo.")
        return ToolResult({ArtifactKind.CAPTION: text})
