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
from layerpath.kit.imaging import rgb
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.hf import CLIP, TorchModelTool, load_pretrained, normalized


def load_model(folder: str, device: str) -> tuple[Any, Any]:
    from transformers import AutoTokenizer, BlipForConditionalGeneration

    model = load_pretrained(BlipForConditionalGeneration, folder, device, half=False)
    return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)


def caption(model: Any, tokenizer: Any, image_rgb: np.ndarray, words: int, beams: int) -> str:
    import torch

    side = int(model.config.vision_config.image_size)
    square = cv2.resize(image_rgb, (side, side), interpolation=cv2.INTER_AREA)
    parameter = next(model.parameters())
    tensor = torch.from_numpy(normalized(square, CLIP)).to(parameter.device)
    with torch.inference_mode():
        ids = model.generate(pixel_values=tensor, max_new_tokens=words, num_beams=beams)
    return str(tokenizer.decode(ids[0], skip_special_tokens=True)).strip()


class BlipCaption(TorchModelTool):
    """A one-sentence caption of the photo from BLIP."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = rgb(inputs[ArtifactKind.IMAGE])
        words, beams = int(params["max_words"]), int(params["beams"])
        text = self.on_device(
            params, load_model, lambda pair, _: caption(pair[0], pair[1], image, words, beams)
        )
        if not text:
            raise ToolFailed("The captioning model returned no words for this photo.")
        return ToolResult({ArtifactKind.CAPTION: text})
