"""Rule activation on probed features, cheapest-rule choice, availability, probing."""

from __future__ import annotations

import numpy as np

from layerpath.engine.execute.probe import probe
from layerpath.engine.execute.subroutines import RuleTable
from layerpath.engine.learn.knowledge import BenchmarkTable, dependency_edges, subtask_tools
from layerpath.engine.types import Subtask, SubtaskKind
from layerpath.tools.ocr import read_text
from layerpath.tools.registry import Registry
from tests.conftest import Scene

REGISTRY = Registry.from_catalogue()
K = SubtaskKind


def test_seed_table_has_sr1_to_sr16_with_missing_tools_marked() -> None:
    rules = RuleTable.load(REGISTRY)
    ids = {r.id for r in rules.rules}
    assert {f"SR{i}" for i in range(1, 17)} <= ids
    sr3 = next(r for r in rules.rules if r.id == "SR3")
    assert "sd_search_replace is not installed" in (
        rules.unavailable_reason(next(r for r in rules.rules if r.id == "SR8")) or ""
    )
    # a tool whose model is not downloaded says so, with the fix
    assert "layerpath models download yolov8n-onnx" in (rules.unavailable_reason(sr3) or "")
    assert rules.unavailable_reason(next(r for r in rules.rules if r.id == "SR4")) is None


def test_selection_follows_features_and_alpha() -> None:
    rules, table = RuleTable.load(REGISTRY), BenchmarkTable.from_tools(REGISTRY)
    hue_shift = {"color_transition": "hue_shift", "size": "small"}
    # both SR1 (Lab) and SR2 (HSV) hold; cost-only picks the cheaper HSV, quality-only Lab
    assert rules.select(K.OBJECT_RECOLORATION, hue_shift, table, 2.0).id == "SR2"  # type: ignore[union-attr]
    assert rules.select(K.OBJECT_RECOLORATION, hue_shift, table, 0.0).id == "SR1"  # type: ignore[union-attr]
    # a neutral target deactivates SR2
    assert (
        rules.select(
            K.OBJECT_RECOLORATION, {"color_transition": "to_neutral", "size": "small"}, table, 2.0
        ).id
        == "SR1"
    )  # type: ignore[union-attr]
    # no rule for deblurring: the executor must search
    assert rules.select(K.IMAGE_DEBLURRING, {}, table, 1.0) is None


def test_probe_features_of_an_object_and_of_text(scene: Scene) -> None:
    snapshot = scene.snapshot()
    plan = [
        Subtask(K.OBJECT_REMOVAL, "ball", id="s1"),
        Subtask(K.OBJECT_RECOLORATION, "wall", "navy", id="s2"),
    ]
    ball = probe(plan[0], snapshot, snapshot.image, plan)
    assert ball["size"] == "medium" and ball["instances"] == 1 and ball["overlap"] is True
    assert ball["detector_class"] == "coco" and ball["mask_available"] is True  # sports ball
    wall = probe(plan[1], snapshot, snapshot.image, plan)
    assert wall["size"] == "large" and wall["color_transition"] == "darker"
    text = probe(
        Subtask(K.TEXT_REPLACEMENT, "text", "OPEN", id="s3"),
        snapshot,
        snapshot.image,
        plan,
        lambda: read_text(snapshot.image),
    )
    assert text == {
        "text_found": True,
        "text_boxes": 1,
        "text_height": "medium",
        "text_background": "flat",
    }
    assert "CLOSED" not in str(text)  # OCR text is data, never a feature


def test_tool_graph_is_derived_from_ports() -> None:
    edges = dependency_edges(REGISTRY)
    assert "opencv_telea" in edges["named_masks"] and "pillow_text_write" in edges["rapidocr"]
    assert "named_masks" not in edges["rapidocr"]
    removal = {t.name for t in subtask_tools(REGISTRY, K.OBJECT_REMOVAL)}
    assert removal == {
        "opencv_telea",
        "opencv_ns",
        "patch_fill",
        "lama_inpaint",
        "named_masks",
        "sam_segment",
        "segment_anything_sam",
        "grounding_dino",
        "yolo_detector",
        "yolo_ultralytics",
        "offline_finder",
        "sd_inpaint",
        "cloud_inpaint",
    }
    replacement = {t.name for t in subtask_tools(REGISTRY, K.TEXT_REPLACEMENT)}
    assert replacement == {"pillow_text_write", "text_inpaint_erase", "text_fill_erase", "rapidocr"}


def test_benchmark_table_moves_towards_observations() -> None:
    table = BenchmarkTable.from_tools(REGISTRY)
    tool = REGISTRY.get("opencv_telea")
    prior = table.prior(tool, K.OBJECT_REMOVAL)
    for _ in range(7):
        table.observe("opencv_telea", K.OBJECT_REMOVAL, 2.0, 0.5)
    moved = table.prior(tool, K.OBJECT_REMOVAL)
    assert np.isclose(moved.cost, (prior.cost * 3 + 14.0) / 10)
    assert moved.quality < prior.quality


def test_everyday_edits_on_a_real_photo_go_by_the_shipped_rules() -> None:
    """The adjustments, crops and rotations photographers ask for most take the fast
    path: the whole picture, a region the user masked or the offline finder found, a
    ratio crop against a crop around a region (the `target_named` feature tells them
    apart). scikit-image's astronaut photo; the real engine and offline tools."""
    import pytest

    skimage_data = pytest.importorskip("skimage.data")
    from layerpath.engine.execute.executor import Engine
    from layerpath.engine.types import EditRequest, Snapshot

    photo = np.dstack([skimage_data.astronaut(), np.full((512, 512), 255, np.uint8)])
    visor = np.zeros((512, 512), bool)
    visor[380:500, 300:480] = True
    engine = Engine(REGISTRY)
    expected = {
        "make it warmer": ["rule:LP7"],
        "blur the face": ["rule:LP9"],
        "brighten the visor": ["rule:LP8"],
        "crop to 16:9": ["rule:LP10"],
        "crop to the face": ["rule:LP12"],
        "rotate left": ["rule:LP13"],
    }
    for instruction, routes in expected.items():
        result = engine.run(EditRequest(instruction, Snapshot(photo, {"visor": visor})))
        assert [o.solved_by for o in result.outcomes] == routes, instruction
        assert all(o.ok for o in result.outcomes), instruction
