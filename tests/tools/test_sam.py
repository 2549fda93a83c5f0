"""Segment Anything through transformers + PyTorch on the CPU, with a tiny SAM this test
builds (random weights, 128-pixel input) and saves with save_pretrained; the tool loads
it through its real from_pretrained path from the model folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import EditRequest, Mode
from layerpath.kit.imaging import mask_box
from layerpath.kit.types import ArtifactKind, Box, SubtaskKind, ToolContext
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.tools.installed import install_built

CATALOGUE = Path(__file__).resolve().parents[2] / "tools" / "data" / "catalogue.json"
pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def tiny_sam(folder: Path) -> None:
    config = transformers.SamConfig(
        vision_config=transformers.SamVisionConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=128,
            patch_size=16,
            output_channels=32,
            global_attn_indexes=[1],
            mlp_dim=64,
            window_size=4,
            num_pos_feats=16,
        ),
        prompt_encoder_config=transformers.SamPromptEncoderConfig(
            hidden_size=32, image_size=128, patch_size=16, mask_input_channels=4
        ),
        mask_decoder_config=transformers.SamMaskDecoderConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            mlp_dim=64,
            iou_head_hidden_dim=32,
        ),
    )
    transformers.SamModel(config).save_pretrained(folder)


@pytest.fixture
def models(tmp_path: Path) -> ModelManager:
    tiny_sam(tmp_path / "models" / "sam-vit-base")
    return install_built(tmp_path / "models", "sam-vit-base")


def test_sam_masks_stay_inside_the_windows_around_the_boxes(
    models: ModelManager, scene: Scene
) -> None:
    tool = Registry.from_catalogue(models=models).get("sam_segment")
    assert tool.availability().ok
    ball = mask_box(scene.masks["ball"])
    assert ball is not None
    boxes = (ball, Box(250, 150, 290, 200))
    params = tool.spec.param_schedule()[0]
    result = tool.run(
        ToolContext(SubtaskKind.OBJECT_SEGMENTATION, target="ball"),
        {ArtifactKind.IMAGE: scene.image, ArtifactKind.BOXES: boxes},
        params,
    )
    mask = result.outputs[ArtifactKind.MASK]
    assert mask.shape == scene.image.shape[:2] and mask.dtype == bool
    allowed = np.zeros_like(mask)
    for box in boxes:  # the windows: each box grown by the padding (at least the input)
        grow = int(max(box.width, box.height) * float(params["padding"])) + 128
        allowed[max(0, box.y0 - grow) : box.y1 + grow, max(0, box.x0 - grow) : box.x1 + grow] = True
    assert not mask[~allowed].any()


def test_the_search_chains_boxes_into_sam(
    models: ModelManager, scene: Scene, tmp_path: Path
) -> None:
    """With named masks serving only as a detector (boxes), segmenting the ball needs a
    path: named_masks (the ball's box) -> sam_segment (its mask)."""
    records = json.loads(CATALOGUE.read_text())["tools"]
    for record in records:
        if record["name"] == "named_masks":
            record["subtasks"] = ["object_detection"]
            record["priors"] = {"object_detection": [0.01, 0.95]}
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"tools": records}))
    result = Engine(Registry.from_catalogue(path, models)).run(
        EditRequest("segment the ball", scene.snapshot(), mode=Mode.SLOW)
    )
    assert result.ok, result.outcomes[0].error
    assert [c.tool for c in result.calls] == ["named_masks", "sam_segment"]
    (outcome,) = result.outcomes
    assert outcome.steps[-1].tool == "sam_segment" and outcome.steps[-1].kind.value == "mask"
