"""What every use of an OpenAI-compatible endpoint shares: the client, and pictures sent
as data URLs. The `openai` package is imported only when a client is made."""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from PIL import Image


def openai_client(base_url: str, api_key: str | None, timeout_s: float) -> Any:
    """A client that fails fast (no retries). Local servers need no key; the client
    insists on one, so a placeholder goes."""
    from openai import OpenAI

    return OpenAI(
        base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0
    )


T = TypeVar("T")


class NoAnswerInTime(TimeoutError):
    """The endpoint did not finish answering within the deadline."""


def within(seconds: float, call: Callable[[], T], client: Any = None) -> T:
    """`call()`'s answer, or NoAnswerInTime once `seconds` have passed in all: the
    client's own timeout counts each read, so a server trickling a byte a second would
    hold a run for ever. On the deadline the client is closed (its connection dropped)
    and the call is left to end on its own thread."""
    answer: dict[str, Any] = {}

    def run() -> None:
        try:
            answer["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            answer["error"] = exc

    worker = threading.Thread(target=run, name="endpoint call", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        if client is not None:
            try:
                client.close()
            except Exception:  # closing is a courtesy; the answer is already late
                pass
        raise NoAnswerInTime(f"no answer within {seconds:g} s")
    if "error" in answer:
        raise answer["error"]
    return answer["value"]


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
