"""Windows: what changed is found band by band, a paste copies the photo once, analysis
copies keep masks' shapes, and every offline image tool reports a window that holds all
it changed (the checks, step layers and files look only there)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from layerpath.kit.regions import (
    BAND_ROWS,
    analysis_copy,
    block_copy,
    changed_window,
    grow_box,
    paste,
    union_box,
)
from layerpath.kit.types import ArtifactKind, Box, SubtaskKind, TextBox, ToolContext
from layerpath.tools.registry import Registry
from tests.conftest import Scene

K = SubtaskKind


def test_changed_window_finds_changes_across_bands() -> None:
    before = np.zeros((3 * BAND_ROWS + 7, 40, 4), np.uint8)
    after = before.copy()
    assert changed_window(before, after) is None
    after[5, 30, 2] = 1  # first band
    after[2 * BAND_ROWS + 3, 4, 0] = 9  # third band
    assert changed_window(before, after) == Box(4, 5, 31, 2 * BAND_ROWS + 4)


def test_paste_copies_the_photo_once_and_keeps_alpha() -> None:
    image = np.full((20, 30, 4), 7, np.uint8)
    image[..., 3] = 200
    window = Box(5, 6, 15, 10)
    out = paste(image, window, np.full((4, 10, 3), 99, np.uint8))
    assert out is not image and (image[..., :3] == 7).all()  # the input is untouched
    assert (out[6:10, 5:15, :3] == 99).all() and (out[..., 3] == 200).all()
    assert changed_window(image, out) == window


def test_boxes_grow_and_join_within_the_picture() -> None:
    assert grow_box(Box(2, 3, 10, 12), 5, (15, 20)) == Box(0, 0, 15, 15)
    assert union_box([None, Box(1, 1, 2, 2), Box(5, 0, 9, 3)]) == Box(1, 0, 9, 3)
    assert union_box([]) is None


def test_analysis_copy_scales_to_its_budget_and_keeps_a_masks_share() -> None:
    mask = np.zeros((2000, 3000), bool)
    mask[500:1500, 1000:2000] = True
    small, scale = analysis_copy(mask, budget=60_000)
    assert small.size <= 60_000 * 1.05 and scale == pytest.approx((60_000 / 6e6) ** 0.5)
    assert small.mean() == pytest.approx(mask.mean(), abs=0.01)
    same, unscaled = analysis_copy(mask[:100, :100], budget=60_000)
    assert unscaled == 1.0 and same.shape == (100, 100)


def test_block_copy_averages_whole_blocks_within_its_budget() -> None:
    rng = np.random.default_rng(3)
    picture = rng.integers(0, 256, (1003, 1502, 4), dtype=np.uint8)  # not whole blocks
    small = block_copy(picture, budget=60_000)
    f = 6  # the smallest whole block that brings 1.5 MP within 60,000 pixels (5 would not)
    assert small.shape == (1003 // f, 1502 // f, 4) and small.shape[0] * small.shape[1] <= 60_000
    means = picture[: 1003 // f * f, : 1502 // f * f].astype(np.float64)
    means = means.reshape(1003 // f, f, 1502 // f, f, 4).mean(axis=(1, 3))
    assert np.abs(small.astype(np.float64) - means).max() <= 0.5 + 1e-9
    assert block_copy(picture[:100, :100], budget=60_000).shape == (100, 100, 4)


def tool_inputs(scene: Scene, kind: SubtaskKind) -> tuple[ToolContext, dict[ArtifactKind, Any]]:
    words = {
        K.OBJECT_REMOVAL: ("ball", None),
        K.OBJECT_RECOLORATION: ("wall", "navy"),
        K.TEXT_REPLACEMENT: ("text", "OPEN"),
        K.TEXT_ADDITION: (None, "SALE"),
        K.KEYWORD_HIGHLIGHTING: ("CLOSED", None),
    }
    target, to = words.get(kind, (None, None))
    sign = TextBox(Box(196, 40, 274, 66), "CLOSED", 0.99, Box(198, 44, 272, 63))
    values = {
        ArtifactKind.IMAGE: scene.image,
        ArtifactKind.MASK: scene.masks["wall" if kind == K.OBJECT_RECOLORATION else "ball"],
        ArtifactKind.TEXT_BOXES: (sign,),
    }
    return ToolContext(kind, target, to), values


@pytest.mark.parametrize(
    "name",
    [
        "opencv_telea",
        "opencv_ns",
        "patch_fill",
        "lab_recolor",
        "hsv_recolor",
        "text_inpaint_erase",
        "text_fill_erase",
        "pillow_text_write",
        "pillow_text_add",
        "box_redact",
        "pixelate_redact",
        "keyword_highlight",
        "unsharp_deblur",
    ],
)
def test_an_image_tools_window_holds_everything_it_changed(scene: Scene, name: str) -> None:
    tool = Registry.from_catalogue().get(name)
    kind = tool.spec.subtasks[0]
    ctx, inputs = tool_inputs(scene, kind)
    result = tool.run(ctx, {k: inputs[k] for k in tool.spec.inputs}, tool.spec.param_schedule()[0])
    after = result.outputs[ArtifactKind.IMAGE]
    changed = changed_window(scene.image, after)
    assert changed is not None and result.window is not None, name
    w = result.window
    assert w.x0 <= changed.x0 and w.y0 <= changed.y0, name
    assert changed.x1 <= w.x1 and changed.y1 <= w.y1, name
