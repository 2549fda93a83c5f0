"""Whole-image deblurring: an unsharp mask (fast, no model) and Richardson-Lucy
deconvolution (scikit-image; slower, restores detail a Gaussian-like blur took away
instead of only raising the contrast of edges). Deconvolution works on the brightness
(Y of YCrCb) only, so colours do not fringe, with a mirrored border so the picture's
edge does not ring."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import Cancelled
from layerpath.kit.imaging import rgb, with_rgb
from layerpath.kit.regions import full_box
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.base import Tool


class UnsharpDeblur(Tool):
    """Sharpen mild blur with an unsharp mask (fast; no model)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        amount, sigma = float(params["amount"]), float(params["sigma"])
        # pixels * (1 + amount) - blurred * amount, in 8 bits (no float copy of the photo)
        blurred = cv2.GaussianBlur(rgb(image), (0, 0), sigma)
        sharp = cv2.addWeighted(rgb(image), 1 + amount, blurred, -amount, 0)
        return ToolResult(
            {ArtifactKind.IMAGE: with_rgb(image, sharp)}, window=full_box(image.shape)
        )


def gaussian_psf(sigma: float) -> np.ndarray:
    """A normalised Gaussian point-spread function reaching 3 sigma."""
    radius = max(1, int(np.ceil(3 * sigma)))
    line = cv2.getGaussianKernel(2 * radius + 1, sigma).astype(np.float64)
    psf: np.ndarray = line @ line.T
    return psf / psf.sum()


class RichardsonLucyDeblur(Tool):
    """Undo a Gaussian-like blur of `sigma` pixels by Richardson-Lucy deconvolution of
    the brightness, band by band (bounded memory on a 24-megapixel photo; progress and
    the cancel flag between bands). Bands overlap by `margin` rows on each side, whose
    result is dropped, so their seams do not show."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        from skimage.restoration import richardson_lucy

        image = inputs[ArtifactKind.IMAGE]
        ycrcb = cv2.cvtColor(rgb(image), cv2.COLOR_RGB2YCrCb)
        psf = gaussian_psf(float(params["sigma"]))
        margin = 4 * psf.shape[0]
        luma = cv2.copyMakeBorder(
            ycrcb[..., 0], margin, margin, margin, margin, cv2.BORDER_REFLECT_101
        ).astype(np.float32)
        h, w = ycrcb.shape[:2]
        band = max(64, int(params["band"]))
        for top in range(0, h, band):
            if ctx.cancelled():
                raise Cancelled("The deblurring was cancelled.")
            bottom = min(h, top + band)
            window = luma[top : bottom + 2 * margin] / 255.0
            sharp = richardson_lucy(window, psf, num_iter=int(params["iterations"]))
            kept = sharp[margin : margin + bottom - top, margin : margin + w]
            ycrcb[top:bottom, :, 0] = np.clip(np.rint(kept * 255.0), 0, 255).astype(np.uint8)
            ctx.progress(bottom / h)
        sharp_rgb = cv2.cvtColor(ycrcb, cv2.COLOR_YCrCb2RGB)
        return ToolResult(
            {ArtifactKind.IMAGE: with_rgb(image, sharp_rgb)}, window=full_box(image.shape)
        )
