"""Grounding DINO through transformers + PyTorch on the CPU, with a tiny model (random
weights: a 4-stage Swin, a 1-layer BERT, 10 queries) and a word tokenizer this test
builds; the tool loads both from the model folder. With a detector, an object with no
mask is found by the search: detector -> SAM -> removal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import EditRequest, Mode, Snapshot
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.tools.installed import install_built, save_word_tokenizer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
CATALOGUE = Path(__file__).resolve().parents[2] / "tools" / "data" / "catalogue.json"
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "ball", "cat", "wall", ".", "the", "a"]


def tiny_grounding_dino(folder: Path) -> None:
    save_word_tokenizer(folder, WORDS, cls_token="[CLS]", sep_token="[SEP]")
    torch.manual_seed(0)
    config = transformers.GroundingDinoConfig(
        backbone_config=transformers.SwinConfig(
            embed_dim=16,
            depths=[1, 1, 1, 1],
            num_heads=[1, 1, 2, 2],
            window_size=4,
            image_size=64,
            out_features=["stage2", "stage3", "stage4"],
        ),
        text_config=transformers.BertConfig(
            vocab_size=len(WORDS),
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        ),
        d_model=32,
        encoder_layers=1,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        num_queries=10,
        num_feature_levels=3,
        encoder_n_points=2,
        decoder_n_points=2,
        max_text_len=16,
        use_timm_backbone=False,
    )
    transformers.GroundingDinoForObjectDetection(config).save_pretrained(folder)


@pytest.fixture
def models(tmp_path: Path) -> ModelManager:
    tiny_grounding_dino(tmp_path / "models" / "grounding-dino-tiny")
    return install_built(tmp_path / "models", "grounding-dino-tiny")


def test_boxes_for_the_named_object_inside_the_photo(models: ModelManager, scene: Scene) -> None:
    tool = Registry.from_catalogue(models=models).get("grounding_dino")
    assert tool.availability().ok
    params = {**tool.spec.param_schedule()[0], "threshold": 0.0, "resolution": 128}
    result = tool.run(
        ToolContext(SubtaskKind.OBJECT_DETECTION, target="ball"),
        {ArtifactKind.IMAGE: scene.image},
        params,
    )
    boxes = result.outputs[ArtifactKind.BOXES]
    h, w = scene.image.shape[:2]
    assert 1 <= len(boxes) <= params["max_boxes"]
    assert [b.score for b in boxes] == sorted((b.score for b in boxes), reverse=True)
    for box in boxes:
        assert box.label == "ball" and 0 <= box.x0 < box.x1 <= w and 0 <= box.y0 < box.y1 <= h


def test_without_a_mask_the_search_detects_segments_and_removes(
    models: ModelManager, scene: Scene, tmp_path: Path
) -> None:
    from tests.tools.test_sam import tiny_sam

    tiny_sam(tmp_path / "models" / "sam-vit-base")
    both = install_built(tmp_path / "models", "sam-vit-base", also=models)
    records = json.loads(CATALOGUE.read_text())["tools"]
    for record in records:  # random weights: accept any box
        if record["name"] == "grounding_dino":
            record["params"] = {**record["params"], "threshold": 0.0, "resolution": 128}
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"tools": records}))
    no_masks = Snapshot(scene.image.copy(), {})
    result = Engine(Registry.from_catalogue(path, both)).run(
        EditRequest("remove the ball", no_masks, mode=Mode.SLOW, alpha=0.0)
    )
    called = [c.tool for c in result.calls]
    assert called[0] == "named_masks"  # no mask named ball: not the end any more
    assert "grounding_dino" in called and "sam_segment" in called
    assert called.index("grounding_dino") < called.index("sam_segment")

    # with no detector, a missing mask still ends the subtask with the hint to draw one
    plain = Engine(Registry.from_catalogue(models=ModelManager(tmp_path / "none")))
    (outcome,) = plain.run(EditRequest("remove the ball", no_masks)).outcomes
    assert not outcome.ok and "No mask for 'ball'" in (outcome.error or ""), outcome.error
