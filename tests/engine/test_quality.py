"""Checkers tell good edits from broken ones, from the pixels alone."""

from __future__ import annotations

import numpy as np

from layerpath.engine.quality import (
    check_recolor,
    check_removal,
    check_text_gone,
    check_text_replacement,
)
from layerpath.engine.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.imaging import dilate
from layerpath.tools.inpaint import inpaint_region
from layerpath.tools.ocr import read_text
from layerpath.tools.registry import Registry
from layerpath.tools.text import draw_text
from tests.conftest import Scene

REGISTRY = Registry.from_catalogue()


def recolored(scene: Scene, tool: str, color: str) -> np.ndarray:
    t = REGISTRY.get(tool)
    ctx = ToolContext(SubtaskKind.OBJECT_RECOLORATION, "wall", to=color)
    out = t.run(
        ctx,
        {ArtifactKind.IMAGE: scene.image, ArtifactKind.MASK: scene.masks["wall"]},
        t.spec.params,
    )
    return out.outputs[ArtifactKind.IMAGE]


def test_recolour_check_rewards_the_colour_and_punishes_spill(scene: Scene) -> None:
    wall = scene.masks["wall"]
    good = recolored(scene, "lab_recolor", "yellow")
    assert check_recolor(scene.image, good, wall, "yellow") > 0.8
    assert check_recolor(scene.image, good, wall, "blue") < 0.2  # wrong colour
    assert check_recolor(scene.image, scene.image, wall, "blue") < 0.2  # nothing done
    spilled = good.copy()
    spilled[~dilate(wall, 10)] = (255, 255, 0, 255)
    assert check_recolor(scene.image, spilled, wall, "yellow") < 0.1


def test_recolour_check_prefers_lab_for_neutral_targets(scene: Scene) -> None:
    wall = scene.masks["wall"]
    lab = check_recolor(scene.image, recolored(scene, "lab_recolor", "black"), wall, "black")
    hsv = check_recolor(scene.image, recolored(scene, "hsv_recolor", "black"), wall, "black")
    assert lab > 0.5 > hsv


def test_removal_check(scene: Scene) -> None:
    ball = scene.masks["ball"]
    filled, _ = inpaint_region(scene.image, ball, "telea", 5, 4)
    assert check_removal(scene.image, filled, ball) > 0.6
    assert check_removal(scene.image, scene.image, ball) == 0.0  # unchanged
    blotch = scene.image.copy()
    blotch[ball] = (0, 255, 0, 255)  # changed, but nothing like its surroundings
    assert check_removal(scene.image, blotch, ball) < 0.2


def test_text_checks_read_the_result(scene: Scene) -> None:
    boxes = list(read_text(scene.image))
    blank = scene.image.copy()
    sign = scene.masks["sign"]
    blank[sign] = (250, 250, 246, 255)
    assert check_text_gone(scene.image, blank, boxes) == 1.0
    assert check_text_gone(scene.image, scene.image, boxes) == 0.0
    ink = boxes[0].ink
    assert ink is not None
    opened, _ = draw_text(blank, "OPEN", ink, (25, 25, 30), 200)
    assert check_text_replacement(scene.image, opened, boxes, "OPEN") > 0.9
    # writing over the old text without erasing it leaves CLOSED legible: punished
    overwritten, _ = draw_text(scene.image, "OPEN", ink, (25, 25, 30), 200)
    assert check_text_replacement(scene.image, overwritten, boxes, "OPEN") < 0.5
