"""Open-vocabulary detection with Grounding DINO (transformers, PyTorch): boxes for the
object an instruction names ("the cat"), with no mask drawn by the user.

Preprocessing (resize + ImageNet normalisation) and post-processing (per-query score =
the best token's probability, boxes scaled to the photo, overlapping boxes merged) are
done here, so nothing imports torchvision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.imaging import rgb
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.hf import IMAGENET, TorchModelTool, load_pretrained, normalized


def load_model(folder: str, device: str) -> tuple[Any, Any]:
    from transformers import AutoTokenizer, GroundingDinoForObjectDetection

    model = load_pretrained(GroundingDinoForObjectDetection, folder, device, half=False)
    return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)


def iou(a: Box, b: Box) -> float:
    x0, y0, x1, y1 = max(a.x0, b.x0), max(a.y0, b.y0), min(a.x1, b.x1), min(a.y1, b.y1)
    inter = max(0, x1 - x0) * max(0, y1 - y0)
    union = a.width * a.height + b.width * b.height - inter
    return inter / union if union else 0.0


def detect(
    model: Any,
    tokenizer: Any,
    image_rgb: np.ndarray,
    phrase: str,
    short_side: int,
    threshold: float,
    max_boxes: int,
) -> list[Box]:
    """Up to `max_boxes` boxes (best first) whose best text-token probability passes
    `threshold`, overlapping ones dropped."""
    import torch

    h, w = image_rgb.shape[:2]
    scale = short_side / min(h, w)
    small = cv2.resize(
        image_rgb,
        (max(32, round(w * scale)), max(32, round(h * scale))),
        interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC,
    )
    tokens = tokenizer([f"{phrase.lower().strip()}."], return_tensors="pt")
    parameter = next(model.parameters())
    pixels = torch.from_numpy(normalized(small, IMAGENET)).to(parameter.device)
    with torch.inference_mode():
        out = model(
            pixel_values=pixels,
            input_ids=tokens["input_ids"].to(parameter.device),
            attention_mask=tokens["attention_mask"].to(parameter.device),
        )
    length = int(tokens["input_ids"].shape[1])
    probs = out.logits[0, :, :length].sigmoid().max(dim=-1).values.float().cpu().numpy()
    centres = out.pred_boxes[0].float().cpu().numpy()  # cx, cy, w, h in 0..1
    found: list[Box] = []
    for query in np.argsort(-probs):
        if probs[query] < threshold or len(found) >= max_boxes:
            break
        cx, cy, bw, bh = centres[query]
        box = Box(
            int(np.clip((cx - bw / 2) * w, 0, w - 1)),
            int(np.clip((cy - bh / 2) * h, 0, h - 1)),
            int(np.clip(np.ceil((cx + bw / 2) * w), 1, w)),
            int(np.clip(np.ceil((cy + bh / 2) * h), 1, h)),
            label=phrase,
            score=float(probs[query]),
        )
        if box.width > 1 and box.height > 1 and all(iou(box, b) < 0.7 for b in found):
            found.append(box)
    return found


class GroundingDinoDetect(TorchModelTool):
    """Boxes for the named object from Grounding DINO."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        if not ctx.target:
            raise ToolFailed("Say what to look for, e.g. 'detect the bench'.")
        image = rgb(inputs[ArtifactKind.IMAGE])
        phrase = ctx.target

        def use(loaded: tuple[Any, Any], scale: float) -> list[Box]:
            side = max(64, int(int(params["resolution"]) * scale))
            threshold, most = float(params["threshold"]), int(params["max_boxes"])
            return detect(*loaded, image, phrase, side, threshold, most)

        boxes = self.on_device(params, load_model, use, scales=(1.0, 0.5))
        if not boxes:
            raise ToolFailed(f"No {phrase} was found in the photo.")
        return ToolResult({ArtifactKind.BOXES: tuple(boxes)})
