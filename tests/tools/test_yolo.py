"""YOLO through ONNX Runtime with a tiny ONNX model this test builds: the input port and
raw output layout of an ultralytics export ('images' 1x3xSxS -> 1 x (4 + classes) x
anchors, class names in the metadata), its output a constant the test writes from the
ball's real position (plus the input times zero, so the graph reads the photo). ONNX
Runtime runs it for real; what is tested is everything around the network:
letterboxing, decoding, class choice, NMS and the mapping back to photo pixels. The
ultralytics backend needs torchvision and runs on the GPU machine only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import EditRequest, Mode, Snapshot
from layerpath.errors import ToolFailed
from layerpath.kit.imaging import mask_box
from layerpath.kit.names import coco_class
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry
from layerpath.tools.yolo import letterbox
from tests.conftest import Scene
from tests.tools.installed import install_built

onnx = pytest.importorskip("onnx")
SIDE = 64
NAMES = {0: "person", 1: "cat", 2: "sports ball"}


def tiny_yolo(path: Path, rows: list[tuple[float, float, float, float, int, float]]) -> None:
    """An export whose output lists `rows` (cx, cy, w, h in model pixels, class, score)."""
    from onnx import TensorProto, helper, numpy_helper

    table = np.zeros((1, 4 + len(NAMES), len(rows)), np.float32)
    for anchor, (cx, cy, w, h, cls, score) in enumerate(rows):
        table[0, :4, anchor] = (cx, cy, w, h)
        table[0, 4 + cls, anchor] = score
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["mean"], keepdims=0),
        helper.make_node("Mul", ["mean", "zero"], ["nothing"]),
        helper.make_node("Add", ["table", "nothing"], ["output0"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-yolo",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIDE, SIDE])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(table.shape))],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.float32(0), "zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what ONNX Runtime 1.17 and later read (newer onnx writes more)
    helper.set_model_props(model, {"names": repr(NAMES), "task": "detect"})
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def model_rows(scene: Scene) -> list[tuple[float, float, float, float, int, float]]:
    """The ball (twice, NMS keeps one), a cat elsewhere, a faint ball below threshold."""
    ball = mask_box(scene.masks["ball"])
    assert ball is not None
    _, scale, (left, top) = letterbox(scene.image[..., :3], SIDE)
    cx, cy = (ball.x0 + ball.x1) / 2 * scale + left, (ball.y0 + ball.y1) / 2 * scale + top
    w, h = ball.width * scale, ball.height * scale
    return [
        (cx, cy, w, h, 2, 0.9),
        (cx + 0.5, cy, w, h, 2, 0.7),  # the same ball again, lower score
        (48.0, 20.0, 8.0, 8.0, 1, 0.8),
        (10.0, 40.0, 6.0, 6.0, 2, 0.05),
    ]


@pytest.fixture
def models(tmp_path: Path, scene: Scene) -> ModelManager:
    tiny_yolo(tmp_path / "models" / "yolov8n-onnx" / "onnx" / "yolov8n.onnx", model_rows(scene))
    return install_built(tmp_path / "models", "yolov8n-onnx")


def test_yolo_finds_the_ball_where_it_is(models: ModelManager, scene: Scene) -> None:
    tool = Registry.from_catalogue(models=models).get("yolo_detector")
    assert tool.availability().ok
    params = tool.spec.param_schedule()[0]
    out = tool.run(
        ToolContext(SubtaskKind.OBJECT_DETECTION, target="balls"),
        {ArtifactKind.IMAGE: scene.image},
        params,
    )
    (box,) = out.outputs[ArtifactKind.BOXES]  # the duplicate suppressed, the faint one dropped
    ball = mask_box(scene.masks["ball"])
    assert ball is not None
    step = max(scene.image.shape[:2]) / SIDE  # one model pixel in the photo
    for got, want in zip(
        (box.x0, box.y0, box.x1, box.y1), (ball.x0, ball.y0, ball.x1, ball.y1), strict=True
    ):
        assert abs(got - want) <= step
    assert box.label == "sports ball" and box.score == pytest.approx(0.9)

    cat = tool.run(
        ToolContext(SubtaskKind.OBJECT_DETECTION, target="cat"),
        {ArtifactKind.IMAGE: scene.image},
        params,
    )
    (found,) = cat.outputs[ArtifactKind.BOXES]
    assert found.label == "cat" and found.x0 > ball.x1  # the other anchor, not the ball

    with pytest.raises(ToolFailed, match="not one of them"):
        tool.run(
            ToolContext(SubtaskKind.OBJECT_DETECTION, target="sign"),
            {ArtifactKind.IMAGE: scene.image},
            params,
        )
    with pytest.raises(ToolFailed, match="No person"):
        tool.run(
            ToolContext(SubtaskKind.OBJECT_DETECTION, target="person"),
            {ArtifactKind.IMAGE: scene.image},
            params,
        )


def test_everyday_words_name_coco_classes() -> None:
    assert coco_class("Dogs") == "dog" and coco_class("ball") == "sports ball"
    assert coco_class("woman") == "person" and coco_class("buses") == "bus"
    assert coco_class("sign") is None and coco_class("wall") is None


def test_detect_the_ball_without_a_mask_uses_yolo(models: ModelManager, scene: Scene) -> None:
    no_masks = Snapshot(scene.image.copy(), {})
    result = Engine(Registry.from_catalogue(models=models)).run(
        EditRequest("detect the ball", no_masks, mode=Mode.FAST_SLOW)
    )
    assert result.ok, result.outcomes[0].error
    assert "yolo_detector" in [c.tool for c in result.calls]
    (outcome,) = result.outcomes
    assert outcome.steps[-1].kind.value == "boxes"
    assert np.array_equal(no_masks.image, scene.image)  # the user's pixels untouched
