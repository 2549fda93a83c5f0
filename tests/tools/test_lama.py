"""LaMa through ONNX Runtime, run for real on a tiny model this test builds (random
weights, the real export's ports: image 1x3x512x512 in [0, 1], mask 1x1x512x512 ->
1x3x512x512 in [0, 255]), installed through the model manager like downloaded weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import EditRequest, Mode
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.tools.installed import install_built

onnx = pytest.importorskip("onnx")
SIDE = 512


def tiny_lama(path: Path) -> None:
    """concat(image, mask) -> 3x3 conv (random weights) -> sigmoid -> x255."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(
        rng.normal(0, 0.3, (3, 4, 3, 3)).astype(np.float32), name="weight"
    )
    scale = numpy_helper.from_array(np.array(255.0, np.float32), name="scale")
    nodes = [
        helper.make_node("Concat", ["image", "mask"], ["both"], axis=1),
        helper.make_node("Conv", ["both", "weight"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["conv"], ["unit"]),
        helper.make_node("Mul", ["unit", "scale"], ["output"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_lama",
        [
            helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, SIDE, SIDE]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, SIDE, SIDE]),
        ],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, SIDE, SIDE])],
        initializer=[weight, scale],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


@pytest.fixture
def models(tmp_path: Path) -> ModelManager:
    folder = tmp_path / "models" / "lama-onnx"
    folder.mkdir(parents=True)
    tiny_lama(folder / "lama_fp32.onnx")
    return install_built(tmp_path / "models", "lama-onnx")


def test_lama_fills_only_around_the_mask_on_a_window(models: ModelManager, scene: Scene) -> None:
    registry = Registry.from_catalogue(models=models)
    tool = registry.get("lama_inpaint")
    assert tool.availability().ok
    ball = scene.masks["ball"]
    ctx = ToolContext(SubtaskKind.OBJECT_REMOVAL, target="ball")
    params = tool.spec.param_schedule()[0]
    inputs = {ArtifactKind.IMAGE: scene.image, ArtifactKind.MASK: ball}
    out = tool.run(ctx, inputs, params).outputs[ArtifactKind.IMAGE]
    assert out.shape == scene.image.shape and out.dtype == np.uint8
    changed = np.any(out != scene.image, axis=2)
    ys, xs = np.nonzero(ball)
    reach = int(params["grow"]) + int(params["feather"]) + 1
    assert changed[ball].mean() > 0.9  # the object is replaced
    assert not changed[: ys.min() - reach].any() and not changed[ys.max() + reach :].any()
    assert not changed[:, : xs.min() - reach].any() and not changed[:, xs.max() + reach :].any()
    assert np.array_equal(out[..., 3], scene.image[..., 3])


def test_without_its_model_lama_is_unavailable_and_never_chosen(
    tmp_path: Path, scene: Scene
) -> None:
    registry = Registry.from_catalogue(models=ModelManager(tmp_path / "empty"))
    found = registry.get("lama_inpaint").availability()
    assert not found.ok and found.fix == "layerpath models download lama-onnx"
    result = Engine(registry).run(
        EditRequest("remove the ball", scene.snapshot(), alpha=0.0, mode=Mode.SLOW)
    )
    assert result.ok and "lama_inpaint" not in {c.tool for c in result.calls}


def test_with_its_model_the_search_runs_lama(models: ModelManager, scene: Scene) -> None:
    registry = Registry.from_catalogue(models=models)
    result = Engine(registry).run(
        EditRequest("remove the ball", scene.snapshot(), alpha=0.0, mode=Mode.SLOW)
    )
    assert "lama_inpaint" in {c.tool for c in result.calls}
