"""Stable Diffusion inpainting (and its outpainting and image-to-image uses) and
InstructPix2Pix through diffusers + PyTorch on the CPU,
with tiny pipelines this test builds (random weights: a two-block UNet, a two-block VAE,
a two-layer CLIP text encoder and a word-level tokenizer) and saves with
save_pretrained; the tools load them through diffusers' real from_pretrained path from
the model folder and run the real denoising loop (2 steps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from layerpath.errors import Cancelled, ToolFailed
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.base import Tool
from layerpath.tools.diffusion import transfer_change
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.tools.installed import install_built

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
diffusers = pytest.importorskip("diffusers")
A = ArtifactKind
K = SubtaskKind


def tiny_pipeline(folder: Path, class_name: str, unet_inputs: int) -> None:
    """A random-weight pipeline of `class_name` (9 UNet input channels for inpainting:
    latents, mask, masked image; 8 for InstructPix2Pix: latents, image)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers

    torch.manual_seed(0)
    unet = diffusers.UNet2DConditionModel(
        block_out_channels=(32, 64),
        layers_per_block=1,
        sample_size=16,
        in_channels=unet_inputs,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32,
    )
    vae = diffusers.AutoencoderKL(
        block_out_channels=(32, 64),
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2,
        latent_channels=4,
    )
    text_encoder = transformers.CLIPTextModel(
        transformers.CLIPTextConfig(
            bos_token_id=0,
            eos_token_id=2,
            pad_token_id=1,
            hidden_size=32,
            intermediate_size=37,
            num_attention_heads=4,
            num_hidden_layers=2,
            vocab_size=64,
        )
    )
    words = ["[BOS]", "[PAD]", "[EOS]", "[UNK]", "a", "photo", "of", "add", "make", "it"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, "[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    pipeline = getattr(diffusers, class_name)(
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=transformers.PreTrainedTokenizerFast(
            tokenizer_object=tokenizer,
            unk_token="[UNK]",
            pad_token="[PAD]",
            bos_token="[BOS]",
            eos_token="[EOS]",
            model_max_length=16,
        ),
        unet=unet,
        scheduler=diffusers.DDIMScheduler(steps_offset=1),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipeline.save_pretrained(folder, safe_serialization=True)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> ModelManager:
    cache = tmp_path_factory.mktemp("models")
    tiny_pipeline(cache / "sd-inpainting", "StableDiffusionInpaintPipeline", 9)
    tiny_pipeline(cache / "instruct-pix2pix", "StableDiffusionInstructPix2PixPipeline", 8)
    installed = install_built(cache, "sd-inpainting")
    return install_built(cache, "instruct-pix2pix", also=installed)


def quick(tool: Tool, **changes: Any) -> dict[str, Any]:
    """The tool's default params with 2 denoising steps at 64 pixels, on the CPU."""
    return {
        **tool.spec.param_schedule()[0],
        "steps": 2,
        "resolution": 64,
        "device": "cpu",
        **changes,
    }


def large_photo(scene: Scene, width: int = 1501, height: int = 1003) -> tuple[Any, Any]:
    """The scene scaled to a photo larger than the model's input, with its ball mask."""
    image = cv2.resize(scene.image, (width, height), interpolation=cv2.INTER_CUBIC)
    ball = cv2.resize(scene.masks["ball"].astype(np.uint8), (width, height)) > 0
    return image, ball


def test_inpainting_changes_only_the_grown_mask_of_a_large_photo(
    models: ModelManager, scene: Scene
) -> None:
    tool = Registry.from_catalogue(models=models).get("sd_inpaint")
    image, ball = large_photo(scene)
    params = quick(tool)
    context = ToolContext(K.OBJECT_REMOVAL, target="ball")
    out = tool.run(context, {A.IMAGE: image, A.MASK: ball}, params).outputs[A.IMAGE]
    assert out.shape == image.shape and out.dtype == np.uint8
    reach = int(params["grow"]) + 2 * int(params["feather"]) + 1
    outside = cv2.dilate(ball.astype(np.uint8), np.ones((2 * reach + 1,) * 2, np.uint8)) == 0
    assert np.array_equal(out[outside], image[outside])  # untouched beyond the feather
    assert (out[ball] != image[ball]).any()  # the random model painted something
    again = tool.run(context, {A.IMAGE: image, A.MASK: ball}, params).outputs[A.IMAGE]
    assert np.array_equal(out, again)  # the seed makes it repeatable
    other = tool.run(context, {A.IMAGE: image, A.MASK: ball}, {**params, "seed": 7})
    assert not np.array_equal(out, other.outputs[A.IMAGE])
    # the words a retry's experts asked to add or avoid reach the model's prompts
    for hint in ({"add": ["a photo of"]}, {"avoid": ["photo"]}):
        hinted = tool.run(context, {A.IMAGE: image, A.MASK: ball}, {**params, **hint})
        assert not np.array_equal(out, hinted.outputs[A.IMAGE]), hint


def test_inpainting_words_errors_and_cancel(models: ModelManager, scene: Scene) -> None:
    tool = Registry.from_catalogue(models=models).get("sd_inpaint")
    inputs = {A.IMAGE: scene.image, A.MASK: scene.masks["ball"]}
    with pytest.raises(ToolFailed, match="put in its place"):
        tool.run(ToolContext(K.OBJECT_REPLACEMENT, target="ball"), inputs, quick(tool))
    with pytest.raises(ToolFailed, match="empty"):
        empty = {A.IMAGE: scene.image, A.MASK: np.zeros(scene.image.shape[:2], bool)}
        tool.run(ToolContext(K.OBJECT_REMOVAL, target="ball"), empty, quick(tool))
    shares: list[float] = []
    watched = ToolContext(K.OBJECT_REMOVAL, target="ball", progress=shares.append)
    tool.run(watched, inputs, quick(tool))
    assert shares == [0.5, 1.0]  # after each of the 2 denoising steps
    stop = ToolContext(K.OBJECT_RECOLORATION, target="ball", to="blue", cancelled=lambda: True)
    with pytest.raises(Cancelled):
        tool.run(stop, inputs, quick(tool))
    replaced = tool.run(
        ToolContext(K.OBJECT_REPLACEMENT, target="ball", to="cube"), inputs, quick(tool)
    )
    assert replaced.outputs[A.IMAGE].shape == scene.image.shape


def test_instruct_pix2pix_carries_a_low_resolution_change_onto_the_full_photo(
    models: ModelManager, scene: Scene
) -> None:
    tool = Registry.from_catalogue(models=models).get("instruct_pix2pix")
    image, _ = large_photo(scene)
    rng = np.random.default_rng(0)  # fine grain the model at 512 pixels cannot see
    grain = rng.integers(-12, 13, image.shape[:2] + (1,))
    photo = image.copy()
    photo[..., :3] = np.clip(image[..., :3].astype(int) + grain, 20, 235).astype(np.uint8)
    context = ToolContext(K.CHANGING_SCENERY, target="scenery", to="night")
    out = tool.run(context, {A.IMAGE: photo}, quick(tool)).outputs[A.IMAGE]
    assert out.shape == photo.shape and out.dtype == np.uint8
    change = out[..., :3].astype(np.float32) - photo[..., :3]
    assert np.abs(change).mean() > 1.0  # the random model changed the picture
    # the change is smooth (scaled up from 512 pixels); the photo's grain is kept
    detail = np.abs(cv2.Laplacian(change, cv2.CV_32F)).mean()
    grain_detail = np.abs(cv2.Laplacian(photo[..., :3].astype(np.float32), cv2.CV_32F)).mean()
    assert detail < 0.2 * grain_detail
    if photo.shape[2] == 4:
        assert np.array_equal(out[..., 3], photo[..., 3])
    added = ToolContext(K.OBJECT_ADDITION, target="hat", subtask_params={"where": "cat"})
    assert tool.run(added, {A.IMAGE: scene.image}, quick(tool)).outputs[A.IMAGE].shape == (
        scene.image.shape
    )


def test_sd_outpaint_paints_only_the_grown_margin(models: ModelManager, scene: Scene) -> None:
    tool = Registry.from_catalogue(models=models).get("sd_outpaint")
    context = ToolContext(K.OUTPAINTING, subtask_params={"side": "left"})
    out = tool.run(context, {A.IMAGE: scene.image}, quick(tool)).outputs
    grown, (x, y) = out[A.IMAGE], out[A.PLACEMENT]
    h, w = scene.image.shape[:2]
    pad = round(w * 0.25)
    assert grown.shape[:2] == (h, w + pad) and (x, y) == (pad, 0)
    assert np.array_equal(grown[:, pad:], scene.image)  # the picture itself is untouched
    mirrored = scene.image[:, 1 : pad + 1][:, ::-1, :3]  # what a plain mirror would give
    assert np.abs(grown[:, :pad, :3].astype(int) - mirrored).mean() > 1.0  # painted


def test_sd_scenery_repaints_the_whole_picture_from_the_shared_pipeline(
    models: ModelManager, scene: Scene
) -> None:
    """Image-to-image with the inpainting model: a smooth change over the whole photo; it
    runs on the pipeline sd_inpaint already loaded (one resident copy)."""
    from layerpath.tools.device import RESIDENT

    registry = Registry.from_catalogue(models=models)
    RESIDENT.clear()
    registry.get("sd_inpaint").run(
        ToolContext(K.OBJECT_REMOVAL, target="ball"),
        {A.IMAGE: scene.image, A.MASK: scene.masks["ball"]},
        quick(registry.get("sd_inpaint")),
    )
    tool = registry.get("sd_scenery")
    image, _ = large_photo(scene)
    context = ToolContext(K.CHANGING_SCENERY, target="scenery", to="night")
    shares: list[float] = []
    watched = ToolContext(K.CHANGING_SCENERY, target="scenery", to="night", progress=shares.append)
    out = tool.run(watched, {A.IMAGE: image}, quick(tool, steps=4)).outputs[A.IMAGE]
    assert len(RESIDENT.keys()) == 1  # the same pipeline, not a second copy
    assert shares[-1] == 1.0 and len(shares) == 2  # strength 0.6 of 4 steps: 2 run
    assert out.shape == image.shape
    change = out[..., :3].astype(np.float32) - image[..., :3]
    assert np.abs(change).mean() > 1.0  # every part may change, unlike inpainting
    assert (np.abs(change).max(axis=2) > 0).mean() > 0.5
    again = tool.run(context, {A.IMAGE: image}, quick(tool, steps=4)).outputs[A.IMAGE]
    assert np.array_equal(out, again)
    with pytest.raises(ToolFailed, match="scenery should become"):
        tool.run(ToolContext(K.CHANGING_SCENERY, target="scenery"), {A.IMAGE: image}, quick(tool))


def test_transfer_change_keeps_the_photo_where_nothing_changed() -> None:
    photo = np.random.default_rng(1).integers(0, 256, (301, 403, 3), dtype=np.uint8)
    small = cv2.resize(photo, (96, 72), interpolation=cv2.INTER_AREA)
    assert np.array_equal(transfer_change(photo, small, small), photo)
    brighter = np.clip(small.astype(int) + 10, 0, 255).astype(np.uint8)
    lifted = transfer_change(photo, small, brighter).astype(int) - photo
    inner = lifted[10:-10, 10:-10][(photo[10:-10, 10:-10] < 200).all(axis=2)]
    assert np.abs(inner - 10).max() <= 1


def test_diffusion_tools_need_a_gpu_here(models: ModelManager) -> None:
    """On this CPU-only machine both tools say why they are not offered, and how to fix."""
    from layerpath.tools.device import accelerators

    registry = Registry.from_catalogue(models=models)
    for name in ("sd_inpaint", "instruct_pix2pix", "sd_outpaint", "sd_scenery"):
        found = registry.get(name).availability()
        if accelerators():
            assert found.ok
        else:
            assert found.reason is not None and "GPU" in found.reason


def test_a_loaded_pipeline_counts_the_weights_of_all_its_parts(models: ModelManager) -> None:
    """The shared model cache budgets a pipeline by its parts' weights."""
    from layerpath.tools.device import weight_bytes
    from layerpath.tools.diffusion import load_pipeline

    folder = str(models.require("sd-inpainting"))
    pipeline = load_pipeline("StableDiffusionInpaintPipeline", folder, "cpu")
    parts = sum(weight_bytes(getattr(pipeline, p)) for p in ("unet", "vae", "text_encoder"))
    assert weight_bytes(pipeline) == parts > 0
