"""Deblurring: Richardson-Lucy deconvolution (scikit-image) against the unsharp mask on a
scene blurred by a known Gaussian; no model weights are involved."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from layerpath.errors import Cancelled
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.registry import Registry
from tests.conftest import Scene

pytest.importorskip("skimage")
A = ArtifactKind
K = SubtaskKind


def error(image: np.ndarray, truth: np.ndarray) -> float:
    return float(np.abs(image[..., :3].astype(np.float32) - truth[..., :3]).mean())


def test_deconvolution_restores_a_known_blur_better_than_sharpening(scene: Scene) -> None:
    registry = Registry.from_catalogue()
    sharp = scene.image
    blurred = sharp.copy()
    blurred[..., :3] = cv2.GaussianBlur(sharp[..., :3], (0, 0), 1.0)  # the slight blur it is for
    context = ToolContext(K.IMAGE_DEBLURRING)
    tool = registry.get("richardson_lucy_deblur")
    params = tool.spec.param_schedule()[0]
    restored = tool.run(context, {A.IMAGE: blurred}, params).outputs[A.IMAGE]
    unsharp = registry.get("unsharp_deblur")
    sharpened = unsharp.run(context, {A.IMAGE: blurred}, unsharp.spec.param_schedule()[0])
    assert restored.shape == sharp.shape and restored.dtype == np.uint8
    assert error(restored, sharp) < 0.93 * error(blurred, sharp)  # its grain stays lost
    assert error(restored, sharp) < error(sharpened.outputs[A.IMAGE], sharp)
    if sharp.shape[2] == 4:
        assert np.array_equal(restored[..., 3], blurred[..., 3])  # alpha kept


def test_bands_do_not_show_and_the_run_can_be_watched_and_cancelled(scene: Scene) -> None:
    tool = Registry.from_catalogue().get("richardson_lucy_deblur")
    blurred = cv2.GaussianBlur(scene.image, (0, 0), 1.5)
    params = {**tool.spec.param_schedule()[0], "iterations": 10}
    h = blurred.shape[0]
    whole = tool.run(ToolContext(K.IMAGE_DEBLURRING), {A.IMAGE: blurred}, {**params, "band": h})
    shares: list[float] = []
    watched = ToolContext(K.IMAGE_DEBLURRING, progress=shares.append)
    banded = tool.run(watched, {A.IMAGE: blurred}, {**params, "band": 64})
    assert len(shares) == -(-h // 64) and shares[-1] == 1.0
    seams = np.abs(whole.outputs[A.IMAGE].astype(int) - banded.outputs[A.IMAGE]).max()
    assert seams <= 3  # the overlap hides the bands' edges
    stop = ToolContext(K.IMAGE_DEBLURRING, cancelled=lambda: True)
    with pytest.raises(Cancelled):
        tool.run(stop, {A.IMAGE: blurred}, params)
