"""Background removal: the photo with its background made transparent (the subject's
matte as alpha); nothing else changes. The step becomes a cut-out layer over the user's
layer (engine/layers.py), which itself is never touched.

Two tools: OpenCV's GrabCut from a frame just inside the picture's border (offline, no
weights; good on a plain or distinct background), and IS-Net (DIS, the rembg
'isnet-general-use' ONNX export) through ONNX Runtime, a learned salient-object matte.
Both work on a copy at most `resolution` pixels on its long side; the matte is scaled
up, so a large photo is never resized as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import Cancelled, ToolFailed
from layerpath.tools.base import OnnxModelTool, Tool
from layerpath.tools.imaging import rgb
from layerpath.tools.regions import full_box
from layerpath.tools.types import ArtifactKind, ToolContext, ToolResult


def small_copy(image_rgb: np.ndarray, resolution: int) -> np.ndarray:
    h, w = image_rgb.shape[:2]
    scale = min(1.0, resolution / max(h, w))
    if scale == 1.0:
        return image_rgb
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    return cv2.resize(image_rgb, size, interpolation=cv2.INTER_AREA)


def with_matte(image: np.ndarray, matte: np.ndarray) -> np.ndarray:
    """The RGBA image with its alpha multiplied by `matte` (0..1 at any size)."""
    h, w = image.shape[:2]
    if matte.shape != (h, w):
        matte = cv2.resize(matte.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    out = image.copy()
    out[..., 3] = np.rint(image[..., 3] * np.clip(matte, 0.0, 1.0)).astype(np.uint8)
    if not out[..., 3].any():
        raise ToolFailed("No subject was found: the whole picture looked like background.")
    return out


class GrabCutBackground(Tool):
    """Background removal with GrabCut, the subject assumed inside a frame `margin` of
    the picture's size in from its border."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        small = small_copy(rgb(image), int(params["resolution"]))
        h, w = small.shape[:2]
        margin = float(params["margin"])
        frame = (
            int(w * margin),
            int(h * margin),
            int(w * (1 - 2 * margin)),
            int(h * (1 - 2 * margin)),
        )
        labels = np.zeros((h, w), np.uint8)
        background, foreground = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
        bgr = np.ascontiguousarray(small[..., ::-1])
        rounds = int(params["iterations"])
        for done in range(rounds):  # one iteration at a time: progress, and a cancel point
            if ctx.cancelled():
                raise Cancelled("Background removal was cancelled.")
            mode = cv2.GC_INIT_WITH_RECT if done == 0 else cv2.GC_EVAL
            cv2.grabCut(bgr, labels, frame, background, foreground, 1, mode)
            ctx.progress((done + 1) / rounds)
        subject = np.isin(labels, (cv2.GC_FGD, cv2.GC_PR_FGD)).astype(np.float32)
        soft = max(0.5, float(params["feather"]) * w / max(image.shape[1], 1))
        matte = cv2.GaussianBlur(subject, (0, 0), soft)
        return ToolResult(
            {ArtifactKind.IMAGE: with_matte(image, matte)}, window=full_box(image.shape)
        )


class IsNetBackground(OnnxModelTool):
    """Background removal with IS-Net's salient-object matte (ONNX Runtime)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        session = self.session(params)
        port = session.get_inputs()[0]
        side = port.shape[-1] if isinstance(port.shape[-1], int) else int(params["resolution"])
        image = inputs[ArtifactKind.IMAGE]
        square = cv2.resize(rgb(image), (side, side), interpolation=cv2.INTER_AREA)
        feed = ((square.astype(np.float32) / 255.0 - 0.5) / 1.0).transpose(2, 0, 1)[None]
        found = np.asarray(session.run(None, {port.name: feed})[0], dtype=np.float32)
        saliency = found.reshape(found.shape[-2:])
        low, high = float(saliency.min()), float(saliency.max())
        if high - low < 1e-6:
            raise ToolFailed("The background model saw no subject in this photo.")
        matte = (saliency - low) / (high - low)
        return ToolResult(
            {ArtifactKind.IMAGE: with_matte(image, matte)}, window=full_box(image.shape)
        )
