"""Stand-in models for timing: each catalogued model's real architecture at its real size
(the published config: layers, widths, input resolution) with random weights, saved in
the model's folder the way its download would be. Their time per call and memory are
the real model's (the same arithmetic on the same shapes); their output is noise, so
they measure cost, never quality. For machines that cannot reach the model hub.

    python -m layerpath.benchmarks.tools --stand-ins
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from layerpath.kit.names import COCO_CLASSES
from layerpath.tools.models import ModelManager
from tests.tools.installed import install_built, save_word_tokenizer

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[DEC]", "[EOS]", "a", "photo", "of", "the"]
WORDS += ["ball", "cat", "wall", ".", "add", "make", "it", "night", "hat"]


def vocabulary(size: int) -> list[str]:
    """WORDS padded with made-up words to the real model's vocabulary size, so every id
    the random model writes decodes to a word."""
    return WORDS + [f"w{i}" for i in range(size - len(WORDS))]


def sam_vit_base(folder: Path) -> None:
    import transformers

    transformers.SamModel(transformers.SamConfig()).save_pretrained(folder)  # ViT-B, 1024 px


def grounding_dino_tiny(folder: Path) -> None:
    import transformers

    save_word_tokenizer(folder, vocabulary(30522), cls_token="[CLS]", sep_token="[SEP]")
    config = transformers.GroundingDinoConfig(use_timm_backbone=False)  # Swin-T + BERT-base
    transformers.GroundingDinoForObjectDetection(config).save_pretrained(folder)


def depth_anything_small(folder: Path) -> None:
    import transformers

    config = transformers.DepthAnythingConfig()  # DINOv2-S backbone, 518 px
    transformers.DepthAnythingForDepthEstimation(config).save_pretrained(folder)


def blip_captioning_base(folder: Path) -> None:
    import transformers

    words = vocabulary(30524)
    save_word_tokenizer(folder, words, bos_token="[DEC]", sep_token="[SEP]", cls_token="[CLS]")
    config = transformers.BlipConfig(  # ViT-B/16 at 384 px, BERT-base text decoder
        text_config={"bos_token_id": 4, "pad_token_id": 0, "sep_token_id": 3, "eos_token_id": 3}
    )
    transformers.BlipForConditionalGeneration(config).save_pretrained(folder)


def clip_vit_base_patch32(folder: Path) -> None:
    import transformers

    save_word_tokenizer(folder, vocabulary(49408), eos_token="[EOS]")
    config = transformers.CLIPConfig(  # ViT-B/32 at 224 px, 12-layer text encoder
        text_config={"bos_token_id": 1, "eos_token_id": 5, "pad_token_id": 0}
    )
    transformers.CLIPModel(config).save_pretrained(folder)


def distilbert(folder: Path, head: str) -> None:
    """DistilBERT base (6 layers, 768 wide) with a sentiment or question-answering head."""
    import transformers

    save_word_tokenizer(folder, vocabulary(30522), cls_token="[CLS]", sep_token="[SEP]")
    labels = {0: "NEGATIVE", 1: "POSITIVE"}
    config = transformers.DistilBertConfig(
        id2label=labels, label2id={v: k for k, v in labels.items()}
    )
    getattr(transformers, head)(config).save_pretrained(folder)


def stable_diffusion(folder: Path, class_name: str, unet_inputs: int) -> None:
    """Stable Diffusion 1.5's UNet (9 inputs for inpainting, 8 for InstructPix2Pix), VAE
    and CLIP ViT-L/14 text encoder."""
    import diffusers
    import transformers

    words = vocabulary(49408)
    save_word_tokenizer(folder / "tokenizer", words, bos_token="[CLS]", eos_token="[EOS]")
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder / "tokenizer")
    tokenizer.model_max_length = 77
    pipeline = getattr(diffusers, class_name)(
        vae=diffusers.AutoencoderKL(
            block_out_channels=(128, 256, 512, 512),
            down_block_types=("DownEncoderBlock2D",) * 4,
            up_block_types=("UpDecoderBlock2D",) * 4,
            latent_channels=4,
            layers_per_block=2,
            sample_size=512,
        ),
        text_encoder=transformers.CLIPTextModel(
            transformers.CLIPTextConfig(
                hidden_size=768,
                intermediate_size=3072,
                num_attention_heads=12,
                num_hidden_layers=12,
                projection_dim=768,
                hidden_act="quick_gelu",
            )
        ),
        tokenizer=tokenizer,
        unet=diffusers.UNet2DConditionModel(
            sample_size=64,
            in_channels=unet_inputs,
            out_channels=4,
            cross_attention_dim=768,
            attention_head_dim=8,
        ),
        scheduler=diffusers.PNDMScheduler(skip_prk_steps=True, steps_offset=1),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipeline.save_pretrained(folder, safe_serialization=True)


def yolov8n(folder: Path) -> None:
    """YOLOv8n from ultralytics' own architecture file, saved as its checkpoint."""
    from ultralytics import YOLO

    folder.mkdir(parents=True, exist_ok=True)
    model = YOLO("yolov8n.yaml")
    model.model.names = dict(enumerate(COCO_CLASSES))  # an untrained model has none
    model.save(str(folder / "yolov8n.pt"))


def yolov8n_onnx(folder: Path) -> None:
    """YOLOv8n exported to ONNX by ultralytics (640 px, class names in the metadata)."""
    from ultralytics import YOLO

    yolov8n(folder / "checkpoint")
    exported = YOLO(str(folder / "checkpoint" / "yolov8n.pt")).export(
        format="onnx", imgsz=640, simplify=False, dynamic=False
    )
    (folder / "onnx").mkdir(exist_ok=True)
    Path(exported).rename(folder / "onnx" / "yolov8n.onnx")
    shutil.rmtree(folder / "checkpoint")


def sam_vit_b_checkpoint(folder: Path) -> None:
    """Meta's SAM ViT-B as the segment-anything package builds it, its state dict saved."""
    import torch
    from segment_anything import sam_model_registry

    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    state = sam_model_registry["vit_b"]().state_dict()
    torch.save(state, folder / "checkpoints" / "sam_vit_b_01ec64.pth")


BUILDERS: dict[str, Callable[[Path], None]] = {
    "sam-vit-base": sam_vit_base,
    "grounding-dino-tiny": grounding_dino_tiny,
    "depth-anything-small": depth_anything_small,
    "blip-captioning-base": blip_captioning_base,
    "clip-vit-base-patch32": clip_vit_base_patch32,
    "sd-inpainting": lambda f: stable_diffusion(f, "StableDiffusionInpaintPipeline", 9),
    "instruct-pix2pix": lambda f: stable_diffusion(f, "StableDiffusionInstructPix2PixPipeline", 8),
    "distilbert-sst2": lambda f: distilbert(f, "DistilBertForSequenceClassification"),
    "distilbert-squad": lambda f: distilbert(f, "DistilBertForQuestionAnswering"),
    "sam-vit-b-checkpoint": sam_vit_b_checkpoint,
    "yolov8n": yolov8n,
    "yolov8n-onnx": yolov8n_onnx,
}


def install_stand_ins(cache: Path, names: list[str] | None = None) -> ModelManager:
    """A manager over `cache` with a stand-in for each named model (None: all that have
    a builder; at least one) installed and verified like a download."""
    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()
    models: ModelManager | None = None
    for name in list(BUILDERS) if names is None else names:
        torch.manual_seed(0)
        BUILDERS[name](cache / name)
        models = install_built(cache, name, also=models)
    assert models is not None
    return models
