"""Outpainting with the offline edge fill: the canvas grows on the asked side, the old
picture lies unchanged where the tool says, and in the ORA the user's layer (and the
earlier steps) keep their pixels and move with the grown left edge."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.files.io import GroupLayer, PixelLayer, composite, read_layered
from layerpath.engine.judge.checks.picture import check_outpainted
from layerpath.engine.types import SubtaskKind
from layerpath.kit.types import ArtifactKind, ToolContext
from layerpath.plugin.cli import main
from layerpath.tools.registry import Registry
from tests.conftest import Scene, made_by

A = ArtifactKind


def test_the_margin_is_filled_and_the_picture_kept(scene: Scene) -> None:
    tool = Registry.from_catalogue().get("edge_outpaint")
    params = tool.spec.param_schedule()[0]
    h, w = scene.image.shape[:2]
    for side, shape, place in (
        ("left", (h, w + w // 4), (w // 4, 0)),
        ("bottom", (h + h // 4, w), (0, 0)),
        (None, (h + 2 * (h // 4), w + 2 * (w // 4)), (w // 4, h // 4)),
    ):
        context = ToolContext(
            SubtaskKind.OUTPAINTING, subtask_params={"side": side} if side else {}
        )
        out = tool.run(context, {A.IMAGE: scene.image}, params).outputs
        grown, (x, y) = out[A.IMAGE], out[A.PLACEMENT]
        assert grown.shape[:2] == shape and (x, y) == place
        assert np.array_equal(grown[y : y + h, x : x + w], scene.image)
        assert (grown[..., 3] == 255).all()
        assert check_outpainted(scene.image, grown, (x, y)) >= 0.8
    broken = grown.copy()
    broken[: y or 1, :] = 0  # a black margin: a hard seam
    assert check_outpainted(scene.image, broken, (x, y)) < 0.8


def test_extending_left_moves_the_other_layers_with_the_edge(scene: Scene, tmp_path: Path) -> None:
    photo, wall = tmp_path / "photo.png", tmp_path / "wall.png"
    Image.fromarray(scene.image).save(photo)
    Image.fromarray(scene.masks["wall"].astype(np.uint8) * 255).save(wall)
    out = tmp_path / "out.ora"
    instruction = "extend the image to the left and recolor the wall to navy"
    assert main(["edit", str(photo), instruction, "--mask", f"wall={wall}", "-o", str(out)]) == 0
    doc = read_layered(out)
    h, w = scene.image.shape[:2]
    pad = w // 4
    assert (doc.width, doc.height) == (w + pad, h)
    original, group = doc.layers
    assert isinstance(original, PixelLayer) and isinstance(group, GroupLayer)
    assert original.offset == (pad, 0) and np.array_equal(original.pixels, scene.image)
    *edits, grown = group.children
    assert made_by(doc, "edge_outpaint") == [grown] and grown.offset == (0, 0)
    recolour = edits[-1]
    assert recolour.offset[0] >= pad  # the earlier step moved with the picture
    picture = composite(doc)
    assert np.array_equal(picture, grown.pixels)
    navy = picture[:, pad:][scene.masks["wall"]][:, :3].astype(int).mean(axis=0)
    assert navy[2] > navy[0] + 20  # the recolour is in the extended picture


def test_lama_paints_the_margin_only(scene: Scene, tmp_path: Path) -> None:
    """LaMa through ONNX Runtime with the tiny random-weight model tests/tools/test_lama
    builds: the margin is its (scaled-up) fill, the picture is kept to the pixel."""
    pytest.importorskip("onnx")
    from tests.tools.installed import install_built
    from tests.tools.test_lama import tiny_lama

    folder = tmp_path / "models" / "lama-onnx"
    folder.mkdir(parents=True)
    tiny_lama(folder / "lama_fp32.onnx")
    models = install_built(tmp_path / "models", "lama-onnx")
    tool = Registry.from_catalogue(models=models).get("lama_outpaint")
    assert tool.availability().ok
    context = ToolContext(SubtaskKind.OUTPAINTING, subtask_params={"side": "right"})
    out = tool.run(context, {A.IMAGE: scene.image}, tool.spec.param_schedule()[0]).outputs
    grown, (x, y) = out[A.IMAGE], out[A.PLACEMENT]
    h, w = scene.image.shape[:2]
    assert grown.shape[:2] == (h, w + w // 4) and (x, y) == (0, 0)
    assert np.array_equal(grown[:, :w], scene.image) and (grown[..., 3] == 255).all()
    mirrored = scene.image[:, ::-1][:, 1 : w // 4 + 1, :3]  # what a plain mirror would give
    assert not np.array_equal(grown[:, w:, :3], mirrored)  # the model painted the margin
