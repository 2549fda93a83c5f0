"""Background removal: the photo with its background made transparent (the subject's
matte as alpha); nothing else changes. The step becomes a cut-out layer over the user's
layer (engine/execute/layers.py), which itself is never touched.

Two tools: OpenCV's GrabCut from a frame just inside the picture's border (offline, no
weights; good on a plain or distinct background), and IS-Net (DIS, the rembg
'isnet-general-use' ONNX export) through ONNX Runtime, a learned salient-object matte.
Both work on a copy at most `resolution` pixels on its long side; the matte is scaled
up, so a large photo is never resized as a whole.
"""

from __future__ import annotations

import contextlib
import io
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import Cancelled, ToolFailed
from layerpath.kit.imaging import main_pieces, rgb, small_copy
from layerpath.kit.regions import full_box
from layerpath.kit.segments import border_saliency
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.base import OnnxModelTool, Tool

log = logging.getLogger(__name__)


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
        small = small_copy(image, int(params["resolution"]))
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
        cv2.setRNGSeed(0)  # GrabCut's colour models start from OpenCV's RNG: same photo, same cut
        for done in range(rounds):  # one iteration at a time: progress, and a cancel point
            if ctx.cancelled():
                raise Cancelled("Finding the subject was cancelled.")
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


def guided_matte(
    guide_rgb: np.ndarray, matte: np.ndarray, radius: int, eps: float = 1e-3
) -> np.ndarray:
    """The matte refined by a guided filter (He, Sun and Tang): its edges follow the
    picture's own edges (fur, hair, a rim), its inside stays solid."""
    guide = (
        cv2.cvtColor(np.ascontiguousarray(guide_rgb), cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
    )
    size = (2 * radius + 1, 2 * radius + 1)
    mean = lambda x: cv2.boxFilter(x, -1, size)  # noqa: E731
    mean_i, mean_p = mean(guide), mean(matte)
    variance = mean(guide * guide) - mean_i * mean_i
    covariance = mean(guide * matte) - mean_i * mean_p
    a = covariance / (variance + eps)
    b = mean_p - a * mean_i
    return np.clip(mean(a) * guide + mean(b), 0.0, 1.0)


def closed_form() -> tuple[Callable[..., np.ndarray] | None, float]:
    """pymatting's closed-form matting, or None where the `matting` extra is not
    installed; and the seconds importing it took now. numba compiles pymatting on its
    first import after an install (about half a minute): preparing the library once,
    not the tool's work, so a cut-out does not report it as its cost."""
    started = time.perf_counter()
    try:
        from pymatting import estimate_alpha_cf
    except ImportError:
        return None, 0.0
    return estimate_alpha_cf, time.perf_counter() - started


def edge_matte(guide_rgb: np.ndarray, subject: np.ndarray, radius: int) -> np.ndarray:
    """The subject's matte with an edge that follows the photo: closed-form matting
    (Levin, Lischinski and Weiss, through pymatting) in a band 1.5 `radius` wide either
    side of the cut, the inside solid, the outside clear; where pymatting is not
    installed (the `matting` extra), a guided filter (guided_matte). On the photos
    suite's placed subjects the matting halves the guided filter's alpha error along
    the outline (0.11 -> 0.07 on average)."""
    estimate_alpha_cf, _ = closed_form()
    if estimate_alpha_cf is None:
        return guided_matte(guide_rgb, subject, radius)
    band = np.ones((2 * round(1.5 * radius) + 1,) * 2, np.uint8)
    inside = subject.astype(np.uint8)
    trimap = np.full(subject.shape, 0.5)
    trimap[cv2.erode(inside, band) > 0] = 1.0
    trimap[cv2.dilate(inside, band) == 0] = 0.0
    if not (trimap == 1.0).any() or not (trimap == 0.0).any():
        return guided_matte(guide_rgb, subject, radius)
    matte = quietly(estimate_alpha_cf, guide_rgb.astype(np.float64) / 255.0, trimap)
    return np.clip(matte, 0.0, 1.0).astype(np.float32)


def quietly(
    estimate: Callable[..., np.ndarray], image: np.ndarray, trimap: np.ndarray
) -> np.ndarray:
    """pymatting's matte of `image` (float 0..1) by `trimap` (1 sure, 0 sure not, 0.5
    to solve). It prints its solver's "PERFORMANCE WARNING"s to stdout, into a CLI's or
    a benchmark's output: they go to the log instead."""
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        matte = estimate(image, trimap)
    if said.getvalue().strip():
        log.debug("pymatting: %s", said.getvalue().strip())
    return np.asarray(matte)


def salient_subject(small: np.ndarray, params: Mapping[str, Any], ctx: ToolContext) -> np.ndarray:
    """The subject of a small RGB copy (0/1 float): what is unlike the picture's border
    (border_saliency), cut with GrabCut started from it (sure subject, sure background,
    a band of maybe between), its small stray pieces dropped. `params`: sure, maybe,
    iterations."""
    h, w = small.shape[:2]
    saliency = border_saliency(small)
    sure, maybe = float(params["sure"]), float(params["maybe"])
    labels = np.full((h, w), cv2.GC_PR_BGD, np.uint8)
    labels[saliency > maybe] = cv2.GC_PR_FGD
    labels[saliency > sure] = cv2.GC_FGD
    labels[saliency < maybe / 3] = cv2.GC_BGD
    if not (labels == cv2.GC_FGD).any() and not (labels == cv2.GC_PR_FGD).any():
        raise ToolFailed("No subject stands out from the picture's border.")
    background, foreground = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    bgr = np.ascontiguousarray(small[..., ::-1])
    rounds = int(params["iterations"])
    cv2.setRNGSeed(0)  # (as in GrabCutBackground)
    for done in range(rounds):
        if ctx.cancelled():
            raise Cancelled("Background removal was cancelled.")
        mode = cv2.GC_INIT_WITH_MASK if done == 0 else cv2.GC_EVAL
        cv2.grabCut(bgr, labels, (0, 0, 0, 0), background, foreground, 1, mode)  # rect unused
        ctx.progress((done + 1) / (rounds + 1))
    # the subject's pieces that hold most of it (specks of sure background go)
    return main_pieces(np.isin(labels, (cv2.GC_FGD, cv2.GC_PR_FGD))).astype(np.float32)


class SalientCutout(Tool):
    """Background removal: the subject found as what is unlike the picture's border
    (a saliency map), cut with GrabCut started from it (sure subject, sure background,
    and a band of maybe between), the matte's edge matted (edge_matte) so fur and ears
    keep their outline. Offline, no weights."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        started = time.perf_counter()
        _, preparing = closed_form()  # (imported once here: see closed_form)
        image = inputs[ArtifactKind.IMAGE]
        small = small_copy(image, int(params["resolution"]))
        h, w = small.shape[:2]
        subject = salient_subject(small, params, ctx)
        radius = max(2, round(min(h, w) * float(params["edge"])))
        matte = edge_matte(small, subject, radius)
        matte = np.where(matte > 0.97, 1.0, np.where(matte < 0.03, 0.0, matte))
        ctx.progress(1.0)
        cutout = with_matte(image, matte)
        return ToolResult(
            {ArtifactKind.IMAGE: cutout},
            cost=max(0.0, time.perf_counter() - started - preparing),
            window=full_box(image.shape),
        )
