"""Stable Diffusion edits through diffusers (PyTorch): inpainting in a mask (remove,
replace or recolour an object), instruction edits of the whole picture (add an object,
change the scenery) with InstructPix2Pix, and two more uses of the inpainting model:
outpainting (the grown margin is its mask) and scenery changes as image-to-image (the
whole picture is its mask and denoising starts from the photo, half noised, so the
layout stays: SDEdit).

Inpainting sees a window around the mask at the model's resolution and is pasted back
into the mask with a feathered edge, so pixels outside the grown mask never change. A
whole-picture edit (instruction, scenery) sees the picture at the model's resolution,
and only the change it made (its output minus its input) is scaled up and added to the
photo, so a 24-megapixel photo keeps its own detail and is never resized as a whole.

Both load a diffusers pipeline folder (model_index.json and one folder per part, in
safetensors), in fp16 on CUDA, once (shared residency); with the cpu_offload setting
the parts wait in CPU memory and visit the GPU in turn. Each denoising step checks the
run's cancel flag. A seed makes every call repeatable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np
from PIL import Image

from layerpath.errors import Cancelled, ToolFailed
from layerpath.kit.imaging import model_size, paint_region, rgb, with_rgb
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext, ToolResult
from layerpath.tools.crops import crop_for_model, paste_back
from layerpath.tools.device import PLACEMENT
from layerpath.tools.hf import TorchModelTool

K = SubtaskKind
NEGATIVE = "blurry, distorted, low quality, watermark, text, frame"


def load_pipeline(class_name: str, folder: str, device: str) -> Any:
    """The diffusers pipeline `class_name` from its local folder, ready on `device`."""
    import diffusers
    import torch

    pipeline = getattr(diffusers, class_name).from_pretrained(
        folder,
        local_files_only=True,
        use_safetensors=True,
        dtype=torch.float16 if device == "cuda" else torch.float32,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    if device == "cuda" and PLACEMENT.cpu_offload:
        pipeline.enable_model_cpu_offload()
    else:
        pipeline.to(device)
    pipeline.set_progress_bar_config(disable=True)
    return pipeline


def run_pipeline(pipeline: Any, ctx: ToolContext, seed: int, **arguments: Any) -> np.ndarray:
    """One call of the pipeline, stopped between steps when the run is cancelled, its
    progress reported after each step; the first image as RGB uint8."""
    import torch

    asked = max(1, int(arguments.get("num_inference_steps", 1)))

    def step_end(pipe: Any, step: int, timestep: Any, tensors: dict[str, Any]) -> dict[str, Any]:
        if ctx.cancelled():
            raise Cancelled("The edit was cancelled.")
        # the steps that run: fewer than asked when a strength below 1 skips the first
        steps = max(1, int(getattr(pipe, "num_timesteps", asked) or asked))
        ctx.progress((step + 1) / steps)
        return tensors

    with torch.inference_mode():
        result = pipeline(
            generator=torch.Generator("cpu").manual_seed(seed),
            output_type="np",
            callback_on_step_end=step_end,
            **arguments,
        )
    image = np.asarray(result.images[0], dtype=np.float32)
    if not np.isfinite(image).all():
        raise ToolFailed("The diffusion model produced no picture (NaN); try the CPU or fp32.")
    return np.clip(np.rint(image * 255.0), 0, 255).astype(np.uint8)


def inpaint_prompt(ctx: ToolContext) -> tuple[str, str]:
    """What to paint into the mask, and what not to, for the subtask's words."""
    target, to = ctx.target or "object", ctx.to or ""
    if ctx.subtask == K.OBJECT_REMOVAL:
        return (
            "empty background, the surrounding surface continues seamlessly",
            f"{target}, object, person, {NEGATIVE}",
        )
    if ctx.subtask == K.OBJECT_RECOLORATION:
        return f"a {to} {target}, {to} colour, photo", f"{NEGATIVE}"
    if not to:
        raise ToolFailed("Say what to put in its place, e.g. 'replace the cat with a dog'.")
    return f"a photo of a {to}", f"{target}, {NEGATIVE}"


def hinted(prompt: str, negative: str, params: Mapping[str, Any]) -> tuple[str, str]:
    """The prompt and negative prompt with the words a try's params add and avoid (what
    the experts said of an earlier try: engine/judge/reflection.py)."""
    add = ", ".join(str(w) for w in params.get("add") or ())
    avoid = ", ".join(str(w) for w in params.get("avoid") or ())
    return (f"{prompt}, {add}" if add else prompt), (f"{avoid}, {negative}" if avoid else negative)


def instruction(ctx: ToolContext) -> str:
    """The InstructPix2Pix instruction for the subtask's words."""
    if ctx.subtask == K.OBJECT_ADDITION:
        where = ctx.subtask_params.get("where")
        return f"add a {ctx.target}" + (f" on the {where}" if where else "")
    if ctx.subtask == K.CHANGING_SCENERY:
        return f"make it {ctx.to or ctx.target}"
    if ctx.subtask == K.OBJECT_RECOLORATION:
        return f"make the {ctx.target} {ctx.to}"
    raise ToolFailed(f"InstructPix2Pix has no instruction for {ctx.subtask.label}.")


def transfer_change(photo: np.ndarray, before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """The photo with the change a model made at low resolution (after - before, both
    the same small size) scaled up and added: the photo's own detail stays."""
    h, w = photo.shape[:2]
    delta: np.ndarray = after.astype(np.float32) - before.astype(np.float32)
    if delta.shape[:2] != (h, w):
        delta = cv2.resize(delta, (w, h), interpolation=cv2.INTER_CUBIC)
    return np.clip(np.rint(photo.astype(np.float32) + delta), 0, 255).astype(np.uint8)


def whole_picture_edit(
    photo: np.ndarray, resolution: int, paint: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """The photo with the change `paint` makes to it at the model's resolution (it gets
    and returns RGB of the same small size) carried onto the full-resolution photo."""
    width, height = model_size(photo.shape, resolution)
    small = cv2.resize(photo, (width, height), interpolation=cv2.INTER_AREA)
    edited = paint(small)
    if edited.shape[:2] != small.shape[:2]:
        edited = cv2.resize(edited, (width, height), interpolation=cv2.INTER_AREA)
    return transfer_change(photo, small, edited)


def inpaint_pipeline(folder: str, device: str) -> Any:
    """The inpainting pipeline, which sd_inpaint, sd_outpaint and sd_scenery share."""
    return load_pipeline("StableDiffusionInpaintPipeline", folder, device)


def inpaint_all(
    pipeline: Any,
    ctx: ToolContext,
    params: Mapping[str, Any],
    picture: np.ndarray,
    mask: np.ndarray,
    prompt: str,
    strength: float,
    negative: str = NEGATIVE,
) -> np.ndarray:
    """One call of the inpainting pipeline on `picture` (RGB at the model's size), painting
    where `mask` (bool) is set; a strength below 1 starts from the picture partly noised."""
    h, w = picture.shape[:2]
    return run_pipeline(
        pipeline,
        ctx,
        int(params["seed"]),
        prompt=prompt,
        negative_prompt=negative,
        image=Image.fromarray(picture),
        mask_image=Image.fromarray(mask.astype(np.uint8) * 255),
        height=h,
        width=w,
        num_inference_steps=int(params["steps"]),
        guidance_scale=float(params["guidance"]),
        strength=strength,
    )


class SdInpaint(TorchModelTool):
    """Paint into the mask with Stable Diffusion inpainting: the background (removal), a
    new object (replacement) or the object in a new colour (recolouring)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        region = paint_region(inputs[ArtifactKind.MASK], int(params["grow"]))
        prompt, negative = hinted(*inpaint_prompt(ctx), params)
        photo = rgb(image)

        def use(pipeline: Any, scale: float) -> np.ndarray:
            resolution = int(int(params["resolution"]) * scale) // 8 * 8
            crop = crop_for_model(photo, region, resolution, padding=float(params["padding"]))
            assert crop.mask is not None
            painted = inpaint_all(
                pipeline,
                ctx,
                params,
                crop.pixels,
                crop.mask,
                prompt,
                negative=negative,
                strength=float(params["strength"]),
            )
            return paste_back(photo, crop, painted, region, feather=int(params["feather"]))

        out = self.on_device(
            params,
            inpaint_pipeline,
            use,
            scales=(1.0, 0.75),
            shared_as="sd-inpainting",
        )
        return ToolResult({ArtifactKind.IMAGE: with_rgb(image, out)})


def declines_references(ctx: ToolContext) -> str | None:
    """A diffusion tool paints from words: a reference photo ('the sky in @ref') is not
    words it can paint from."""
    if (ctx.to or "").startswith("@"):
        return "it paints from words and cannot use a reference photo"
    return None


class InstructPix2Pix(TorchModelTool):
    """Edit the whole picture by an instruction ('add a hat', 'make it night') with
    InstructPix2Pix; the change is carried onto the full-resolution photo."""

    def declines(self, ctx: ToolContext) -> str | None:
        return declines_references(ctx)

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        photo = rgb(image)
        words, negative = hinted(instruction(ctx), NEGATIVE, params)

        def use(pipeline: Any, scale: float) -> np.ndarray:
            return whole_picture_edit(
                photo,
                int(int(params["resolution"]) * scale),
                lambda small: run_pipeline(
                    pipeline,
                    ctx,
                    int(params["seed"]),
                    prompt=words,
                    negative_prompt=negative,
                    image=Image.fromarray(small),
                    num_inference_steps=int(params["steps"]),
                    guidance_scale=float(params["guidance"]),
                    image_guidance_scale=float(params["image_guidance"]),
                ),
            )

        out = self.on_device(
            params,
            lambda folder, device: load_pipeline(
                "StableDiffusionInstructPix2PixPipeline", folder, device
            ),
            use,
            scales=(1.0, 0.75),
        )
        return ToolResult({ArtifactKind.IMAGE: with_rgb(image, out)})


class SdOutpaint(TorchModelTool):
    """Extend the canvas and let Stable Diffusion inpainting paint the margin: it sees the
    grown picture (the edge mirrored into the margin) at its resolution, the margin as
    its mask; the picture itself is not changed."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        from layerpath.tools.outpaint import painted_margin

        image = inputs[ArtifactKind.IMAGE]
        prompt, negative = hinted(str(params["prompt"]), NEGATIVE, params)

        def use(pipeline: Any, scale: float) -> ToolResult:
            sized = {**params, "resolution": int(int(params["resolution"]) * scale) // 8 * 8}
            return painted_margin(
                ctx,
                image,
                sized,
                lambda small, margin: inpaint_all(
                    pipeline, ctx, params, small, margin, prompt, 1.0, negative
                ),
            )

        return self.on_device(
            params, inpaint_pipeline, use, scales=(1.0, 0.75), shared_as="sd-inpainting"
        )


class SdScenery(TorchModelTool):
    """Change the scenery ('at night', 'in winter') with the Stable Diffusion inpainting
    model as image-to-image: the whole picture is the mask and denoising starts from the
    photo noised to `strength`, so the layout stays; the change is carried onto the
    full-resolution photo."""

    def declines(self, ctx: ToolContext) -> str | None:
        return declines_references(ctx)

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        if ctx.subtask != K.CHANGING_SCENERY or not ctx.to:
            raise ToolFailed("Say what the scenery should become, e.g. 'make it night'.")
        image = inputs[ArtifactKind.IMAGE]
        photo = rgb(image)
        prompt, negative = hinted(f"the same photo, {ctx.to}, {ctx.to} scene", NEGATIVE, params)

        def use(pipeline: Any, scale: float) -> np.ndarray:
            return whole_picture_edit(
                photo,
                int(int(params["resolution"]) * scale),
                lambda small: inpaint_all(
                    pipeline,
                    ctx,
                    params,
                    small,
                    np.ones(small.shape[:2], bool),
                    prompt,
                    float(params["strength"]),
                    negative,
                ),
            )

        out = self.on_device(
            params, inpaint_pipeline, use, scales=(1.0, 0.75), shared_as="sd-inpainting"
        )
        return ToolResult({ArtifactKind.IMAGE: with_rgb(image, out)})
