"""BLIP captioning through transformers + PyTorch on the CPU, with a tiny BLIP and a
14-word tokenizer this test builds (random weights) and saves with save_pretrained; the
tool loads both through their real from_pretrained paths from the model folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from layerpath.engine.execute.executor import Engine
from layerpath.engine.files.report import build_report
from layerpath.engine.types import EditRequest
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.tools.installed import install_built, save_word_tokenizer

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[DEC]", "a", "cat", "on", "the", "wall", "red"]
WORDS += ["ball", "photo", "of"]


@pytest.fixture
def models(tmp_path: Path) -> ModelManager:
    folder = tmp_path / "models" / "blip-captioning-base"
    save_word_tokenizer(folder, WORDS, bos_token="[DEC]", sep_token="[SEP]", cls_token="[CLS]")
    small = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}
    config = transformers.BlipConfig(
        text_config={
            **small,
            "vocab_size": len(WORDS),
            "num_attention_heads": 2,
            "max_position_embeddings": 32,
            "bos_token_id": 4,
            "pad_token_id": 0,
            "sep_token_id": 3,
            "eos_token_id": 3,
            "encoder_hidden_size": 32,
        },
        vision_config={**small, "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
        projection_dim=16,
    )
    import torch

    torch.manual_seed(0)  # the same random weights every run
    transformers.BlipForConditionalGeneration(config).save_pretrained(folder)
    return install_built(tmp_path / "models", "blip-captioning-base")


def test_blip_writes_words_from_its_vocabulary(models: ModelManager, scene: Scene) -> None:
    tool = Registry.from_catalogue(models=models).get("blip_caption")
    assert tool.availability().ok
    params = {**tool.spec.param_schedule()[0], "max_words": 6}
    result = tool.run(
        ToolContext(SubtaskKind.IMAGE_CAPTIONING), {ArtifactKind.IMAGE: scene.image}, params
    )
    text = result.outputs[ArtifactKind.CAPTION]
    assert text and set(text.split()) <= set(WORDS[5:])  # decoded, special tokens dropped
    assert len(text.split()) <= 6


def test_a_caption_run_is_a_hidden_label_layer_and_in_the_report(
    models: ModelManager, scene: Scene
) -> None:
    result = Engine(Registry.from_catalogue(models=models)).run(
        EditRequest("describe the photo", scene.snapshot())
    )
    (outcome,) = result.outcomes
    assert outcome.ok, outcome.error
    (step,) = outcome.steps
    assert step.tool == "blip_caption" and not step.visible and len(step.text.split()) >= 2
    assert step.pixels is not None and step.pixels.shape[2] == 4
    assert step.pixels.shape[0] < scene.image.shape[0]  # a label, not a full layer
    assert build_report(result)["subtasks"][0]["texts"] == [step.text]
    assert result.image.tobytes() == scene.image.tobytes()  # a caption changes no pixels
