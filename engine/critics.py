"""Model critics beside the deterministic checkers (IMAGAgent's several critics).

A critic looks at a step's before and after pictures and the subtask's words and says how
well the step did, 0..1 (None when it cannot tell: then only the checkers decide). The
engine takes the lower of the checker's score and the critic's, so a step passes only
when both agree. Two critics:

- ClipCritic: CLIP similarity of the pictures to the subtask's goal ("a navy wall"); the
  step is good when the after picture moved towards the goal. Local, fast on a GPU.
- VlmCritic: an OpenAI-compatible vision model is shown both pictures and asked for a
  0-10 rating. The words sent are the subtask's; text read from the image never is.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Protocol

import numpy as np

from layerpath.deadline import Overdue, within
from layerpath.engine.types import Subtask, SubtaskKind
from layerpath.errors import shown
from layerpath.settings import LlmSettings, Settings
from layerpath.settings.secrets import get_api_key, redact, remember_secret
from layerpath.tools.clip import CLIP_MODEL, loaded_clip, similarities
from layerpath.tools.endpoint import image_data_url, openai_client
from layerpath.tools.models import ModelManager, ModelState

log = logging.getLogger(__name__)
K = SubtaskKind


class Critic(Protocol):
    name: str

    def judge(self, subtask: Subtask, before: np.ndarray, after: np.ndarray) -> float | None:
        """0..1, or None when this critic cannot tell."""


def goal_phrase(subtask: Subtask) -> str | None:
    """What the picture should show once the subtask is done, in a few words."""
    target, to = subtask.target or "object", subtask.to or ""
    phrases = {
        K.OBJECT_RECOLORATION: f"a {to} {target}",
        K.OBJECT_REMOVAL: f"a photo without a {target}",
        K.OBJECT_REPLACEMENT: f"a {to}",
        K.OBJECT_ADDITION: f"a photo with a {to or target}",
        K.CHANGING_SCENERY: f"a photo of {to}",
        K.BACKGROUND_REMOVAL: f"a {target} on a plain background",
        K.IMAGE_DEBLURRING: "a sharp photo",
        K.IMAGE_UPSCALING: "a sharp, detailed photo",
        K.OUTPAINTING: "a wider photo",
    }
    return phrases.get(subtask.kind)


class VlmCritic:
    """Asks an OpenAI-compatible vision model to rate the step 0-10."""

    name = "vlm"

    def __init__(self, llm: LlmSettings, api_key: str | None, client: Any = None) -> None:
        self.model = llm.model
        self.timeout_s = llm.timeout_s
        if api_key:
            remember_secret(api_key)
        self.client = client or openai_client(llm.base_url, api_key, llm.timeout_s)

    def judge(self, subtask: Subtask, before: np.ndarray, after: np.ndarray) -> float | None:
        from openai import APIError

        question = (
            f"The first image is a photo before an edit, the second after it. The edit was: "
            f"{subtask.describe()}. Rate from 0 (not done, or the photo was damaged) to 10 "
            f"(done cleanly) how well the second image carries out the edit. Reply with the "
            f"number only."
        )
        content = [
            {"type": "text", "text": question},
            {"type": "image_url", "image_url": {"url": image_data_url(before, 512, True)}},
            {"type": "image_url", "image_url": {"url": image_data_url(after, 512, True)}},
        ]
        completions: Any = self.client.chat.completions  # messages are plain dicts
        try:
            reply = within(
                self.timeout_s,
                lambda: completions.create(
                    model=self.model,
                    messages=[{"role": "user", "content": content}],
                    temperature=0,
                    max_tokens=8,
                ),
                self.client.close,
            )
            text = reply.choices[0].message.content or ""
            if not isinstance(text, str):
                raise TypeError("no text in the answer")
        except (APIError, Overdue, AttributeError, IndexError, TypeError) as exc:
            log.warning(
                "the VLM critic is unavailable (%s); the checkers decide alone",
                redact(shown(str(exc), 200)),
            )
            return None
        number = re.search(r"\d+(?:\.\d+)?", text)
        if number is None:
            log.warning("the VLM critic answered %r, not a rating", text[:80])
            return None
        return float(np.clip(float(number.group()) / 10.0, 0.0, 1.0))


class ClipCritic:
    """Scores a step by how much closer to the goal phrase CLIP finds the after picture."""

    name = "clip"

    def __init__(self, models: ModelManager, device: str = "cpu", gain: float = 20.0) -> None:
        self.folder = str(models.require(CLIP_MODEL))
        self.device = device
        self.gain = gain

    def similarities(self, phrase: str, *images: np.ndarray) -> list[float]:
        return similarities(*loaded_clip(self.folder, self.device), phrase, *images)

    def judge(self, subtask: Subtask, before: np.ndarray, after: np.ndarray) -> float | None:
        phrase = goal_phrase(subtask)
        if phrase is None:
            return None
        was, now = self.similarities(phrase, before, after)
        return float(np.clip(0.5 + self.gain * (now - was), 0.0, 1.0))


def critic_for(settings: Settings, models: ModelManager | None = None) -> Critic | None:
    """The critic the settings ask for. 'auto' is CLIP when its model is downloaded and
    PyTorch is installed, else none: the VLM critic sends two pictures per step to the
    endpoint (time, and money on a paid one), so it runs only when chosen."""
    choice = settings.critic
    if choice == "none":
        return None
    if choice in ("auto", "clip"):
        import importlib.util

        models = models or ModelManager.from_settings(settings)
        ready = (
            CLIP_MODEL in models.catalogue
            and models.status(CLIP_MODEL).state == ModelState.PRESENT
            and importlib.util.find_spec("torch") is not None
            and importlib.util.find_spec("transformers") is not None
        )
        if ready:
            from layerpath.tools.device import resolve_device

            return ClipCritic(models, resolve_device(settings.device))
        if choice == "clip":
            log.warning("the CLIP critic needs: layerpath models download %s", CLIP_MODEL)
            return None
    if choice == "vlm":
        return VlmCritic(settings.llm, get_api_key(settings.llm.base_url))
    return None
