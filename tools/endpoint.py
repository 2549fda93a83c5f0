"""What every use of an OpenAI-compatible endpoint shares: the client, and pictures sent
as data URLs. The `openai` package is imported only when a client is made."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
from PIL import Image

from layerpath.errors import BadInput

#: what to install for an LLM, the VLM critic, cloud edits or voice memos
LLM_EXTRA = "pip install 'layerpath[llm]'"


def llm_installed() -> bool:
    """Whether the `openai` package (layerpath[llm]) is here."""
    import importlib.util

    return importlib.util.find_spec("openai") is not None


def openai_client(base_url: str, api_key: str | None, timeout_s: float) -> Any:
    """A client that fails fast (no retries). Local servers need no key; the client
    insists on one, so a placeholder goes. A clear error when layerpath[llm] is not
    installed."""
    try:
        from openai import OpenAI
    except ImportError as exc:
        raise BadInput(
            f"Asking an LLM server needs the openai package, which is not installed: {LLM_EXTRA}."
        ) from exc

    return OpenAI(
        base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0
    )


def image_data_url(image: np.ndarray, side: int, lossless: bool = False) -> str:
    """The picture's RGB, fitted into side x side, as a JPEG (or PNG) data URL."""
    picture = Image.fromarray(image[..., :3])
    picture.thumbnail((side, side))
    buffer = io.BytesIO()
    if lossless:
        picture.save(buffer, format="PNG")
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    picture.save(buffer, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()


def transcribe(client: Any, model: str, sound: bytes, filename: str, timeout_s: float) -> str:
    """Speech's words through the endpoint's audio API (audio.transcriptions)."""
    from layerpath.deadline import within

    reply = within(
        timeout_s,
        lambda: client.audio.transcriptions.create(model=model, file=(filename, sound)),
        client.close,
    )
    return str(getattr(reply, "text", "") or "")
