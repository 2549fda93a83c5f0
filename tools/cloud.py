"""Cloud image edits through an OpenAI-compatible images API (`images.edit`, e.g.
gpt-image-1): remove, replace or recolour inside a mask. Optional and off by default:
only when turned on in Settings does a window of the photo leave the machine, with the
subtask's own words as the prompt (never text read from the photo). The key comes from
the OS keyring.

The API sees a square window around the mask (padded by reflection) and a mask image
whose transparent pixels mark where to paint; its answer is pasted back into the grown
mask with a feathered edge, so nothing outside it changes, whatever the service returns.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

import cv2
import numpy as np
from PIL import Image

from layerpath.deadline import within
from layerpath.errors import ToolFailed, shown
from layerpath.kit.imaging import paint_region, rgb, with_rgb
from layerpath.kit.types import ArtifactKind, Availability, ToolContext, ToolResult
from layerpath.settings import CloudSettings, load_settings
from layerpath.settings.secrets import get_api_key, redact
from layerpath.tools.base import Tool
from layerpath.tools.crops import crop_for_model, paste_back
from layerpath.tools.diffusion import hinted, inpaint_prompt
from layerpath.tools.endpoint import LLM_EXTRA, llm_installed, openai_client

FIX = "turn on Cloud image edits in Settings and add the service's API key"


def is_local(base_url: str) -> bool:
    """Whether the endpoint runs on this machine (it then needs no key)."""
    return (urlparse(base_url).hostname or "") in ("127.0.0.1", "localhost", "::1")


def png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def edit_request(window: np.ndarray, mask: np.ndarray, side: int) -> tuple[bytes, bytes]:
    """The window padded to side x side (reflection) and the mask image the API wants:
    the same size, transparent where to paint, opaque elsewhere."""
    h, w = mask.shape
    square = cv2.copyMakeBorder(window, 0, side - h, 0, side - w, cv2.BORDER_REFLECT_101)
    alpha = np.full((side, side), 255, np.uint8)
    alpha[:h, :w][mask] = 0
    stencil = np.dstack([square, alpha])
    return png(square), png(stencil)


class CloudInpaint(Tool):
    """Paint into the mask with a cloud image model (OpenAI-compatible images API)."""

    def cloud(self) -> CloudSettings:
        return load_settings().cloud

    def availability(self) -> Availability:
        found = super().availability()
        if not found.ok:
            return found
        settings = load_settings()
        cloud = settings.cloud
        if not cloud.enabled:
            return Availability(
                "cloud image edits are off (the photo would leave this machine)", FIX
            )
        if settings.offline:
            return Availability("offline mode is on", "turn offline mode off in Settings")
        if not llm_installed():
            return Availability("the openai package is not installed", LLM_EXTRA)
        if not is_local(cloud.base_url) and not get_api_key(cloud.base_url):
            return Availability(f"there is no API key for {cloud.base_url}", FIX)
        return Availability()

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        cloud = self.cloud()
        if not cloud.enabled:
            raise ToolFailed("Cloud image edits are off; " + FIX + ".")
        image = inputs[ArtifactKind.IMAGE]
        region = paint_region(inputs[ArtifactKind.MASK], int(params["grow"]))
        prompt, _ = inpaint_prompt(ctx)  # the instruction's words only
        avoid = ", ".join(str(w) for w in params.get("avoid") or ())
        prompt, _ = hinted(prompt + (f"; without {avoid}" if avoid else ""), "", params)
        side = int(params["resolution"])
        photo = rgb(image)
        crop = crop_for_model(photo, region, side, padding=float(params["padding"]))
        assert crop.mask is not None
        picture, stencil = edit_request(crop.pixels, crop.mask, side)
        client = openai_client(cloud.base_url, get_api_key(cloud.base_url), cloud.timeout_s)
        try:
            answer = within(
                cloud.timeout_s,
                lambda: client.images.edit(
                    model=cloud.model,
                    image=("window.png", picture, "image/png"),
                    mask=("mask.png", stencil, "image/png"),
                    prompt=prompt,
                    size=f"{side}x{side}",
                    n=1,
                ),
                client.close,
            )
            data = answer.data[0].b64_json if answer.data else None
        except Exception as exc:  # the openai errors, named for a photographer
            status = getattr(exc, "status_code", None)
            if status in (401, 403):
                raise ToolFailed(
                    f"{cloud.base_url} refused the API key ({status}); check it in Settings."
                ) from exc
            raise ToolFailed(
                f"The cloud image edit failed: {redact(shown(str(exc), 300))}"
            ) from exc
        if not data:
            raise ToolFailed("The cloud service returned no picture.")
        painted = np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
        if painted.shape[:2] != (side, side):
            painted = cv2.resize(painted, (side, side), interpolation=cv2.INTER_AREA)
        h, w = crop.pixels.shape[:2]
        out = paste_back(photo, crop, painted[:h, :w], region, feather=int(params["feather"]))
        return ToolResult({ArtifactKind.IMAGE: with_rgb(image, out)}, window=crop.window)
