"""CLIP (transformers, PyTorch): how well a phrase describes a picture. The CLIP critic
scores edits with it; the caption check tool says whether a caption fits the photo, and
the landmark tool which known landmark (tools/data/landmarks.json) the photo shows.

Preprocessing is done here (short side to the model's input, centre square, CLIP
normalisation, as CLIP's processor does), so nothing imports torchvision.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.device import RESIDENT
from layerpath.tools.hf import CLIP, TorchModelTool, load_pretrained, normalized

CLIP_MODEL = "clip-vit-base-patch32"


def load_clip(folder: str, device: str) -> tuple[Any, Any]:
    from transformers import AutoTokenizer, CLIPModel

    model = load_pretrained(CLIPModel, folder, device, half=False)
    return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)


def centre_square(image: np.ndarray, side: int) -> np.ndarray:
    """The RGB picture with its short side scaled to `side`, the centre square cut."""
    h, w = image.shape[:2]
    scale = side / min(h, w)
    resized = cv2.resize(
        image[..., :3],
        (max(side, round(w * scale)), max(side, round(h * scale))),
        interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC,
    )
    y0, x0 = (resized.shape[0] - side) // 2, (resized.shape[1] - side) // 2
    return resized[y0 : y0 + side, x0 : x0 + side]


def _unit(features: Any) -> Any:
    features = getattr(features, "pooler_output", features)
    return features / features.norm(dim=-1, keepdim=True)


def cosines(model: Any, tokenizer: Any, phrases: list[str], images: list[np.ndarray]) -> Any:
    """CLIP's cosine similarities, images x phrases (a numpy array)."""
    import torch

    device = next(model.parameters()).device
    side = int(model.config.vision_config.image_size)
    tokens = tokenizer(phrases, return_tensors="pt", padding=True).to(device)
    pixels = torch.cat(
        [torch.from_numpy(normalized(centre_square(i, side), CLIP)) for i in images]
    ).to(device)
    with torch.inference_mode():
        text = _unit(model.get_text_features(**tokens))
        picture = _unit(model.get_image_features(pixel_values=pixels))
    return (picture @ text.T).float().cpu().numpy()


def similarities(model: Any, tokenizer: Any, phrase: str, *images: np.ndarray) -> list[float]:
    """CLIP's cosine similarity of `phrase` with each picture."""
    return [float(v) for v in cosines(model, tokenizer, [phrase], list(images))[:, 0]]


def loaded_clip(folder: str, device: str) -> tuple[Any, Any]:
    """CLIP from `folder` on `device`, loaded once (shared residency)."""
    return RESIDENT.get(("clip", folder, device), lambda: load_clip(folder, device))


def folder_similarities(folder: str, device: str, phrase: str, *images: np.ndarray) -> list[float]:
    """The CLIP in `folder` (loaded once, on `device`): its similarity of `phrase` with
    each picture (the critic's service, catalogue "picture_similarity")."""
    return similarities(*loaded_clip(folder, device), phrase, *images)


class ClipCaptionCheck(TorchModelTool):
    """Whether the quoted caption fits the photo, by CLIP similarity against a threshold."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        caption = str(ctx.subtask_params.get("caption") or "").strip()
        if not caption:
            raise ToolFailed(
                'Quote the caption to check, e.g. check the caption "a cat on a sofa".'
            )
        image = inputs[ArtifactKind.IMAGE]
        (score,) = self.on_device(
            params,
            load_clip,
            lambda pair, _: similarities(pair[0], pair[1], caption, image),
            shared_as="clip",  # the CLIP critic's copy
        )
        verdict = "fits" if score >= float(params["threshold"]) else "does not fit"
        return ToolResult(
            {
                ArtifactKind.ANSWER: f"the caption {verdict} the photo (CLIP {score:.2f}): “{caption}”"
            }
        )


def landmarks() -> list[tuple[str, str]]:
    """The landmarks the landmark tool knows: (name, place)."""
    from importlib import resources

    rows = json.loads(
        resources.files("layerpath.tools.data").joinpath("landmarks.json").read_text()
    )
    return [(row["name"], row["place"]) for row in rows["landmarks"]]


class ClipLandmark(TorchModelTool):
    """The famous landmark the photo shows, by CLIP against a list of landmarks (zero-shot),
    or that none of them is recognised."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        known = landmarks()
        phrases = [f"a photo of the {name}, {place}" for name, place in known]
        phrases.append("a photo")  # the baseline a landmark must beat
        image = inputs[ArtifactKind.IMAGE]
        scores = self.on_device(
            params,
            load_clip,
            lambda pair, _: cosines(pair[0], pair[1], phrases, [image])[0],
            shared_as="clip",
        )
        best = int(np.argmax(scores[:-1]))
        margin = float(scores[best] - scores[-1])
        if scores[best] < float(params["threshold"]) or margin < float(params["margin"]):
            text = f"no landmark recognised (best guess {known[best][0]}, CLIP {scores[best]:.2f})"
        else:
            text = f"{known[best][0]}, {known[best][1]} (CLIP {scores[best]:.2f})"
        return ToolResult({ArtifactKind.ANSWER: text})
