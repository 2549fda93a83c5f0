"""Model critics beside the deterministic checkers (IMAGAgent's several critics).

A critic looks at a step's before and after pictures and the subtask's words and gives
its opinions (engine/judge/experts.py): each an expert's score 0..1 with a reason, none when
it cannot tell (then the others decide). The lowest opinion counts, so a step passes
only when every expert agrees. Two critics:

- ClipCritic (the meaning expert): CLIP similarity of the pictures to the subtask's goal
  ("a navy wall"); the step is good when the after picture moved towards the goal.
  Local, fast on a GPU.
- VlmCritic: an OpenAI-compatible vision model is shown both pictures and answers, as
  JSON, how well the edit was carried out (meaning), how clean it is (quality) and how
  good it looks (aesthetics), what is wrong, and words a generative tool's next try
  should avoid or add. The words sent are the subtask's; text read from the image never
  is, and the words it answers only ever reach an image model's prompt, a few short
  words at most, never the planner.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Protocol

import numpy as np

from layerpath.deadline import Overdue, within
from layerpath.engine.judge.checks.verdict import Expert, Opinion
from layerpath.engine.kinds import kind_spec
from layerpath.engine.plan.references import as_told
from layerpath.engine.types import Subtask, SubtaskKind
from layerpath.errors import shown
from layerpath.settings import LlmSettings, Settings
from layerpath.settings.secrets import get_api_key, redact, remember_secret
from layerpath.tools.endpoint import LLM_EXTRA, image_data_url, llm_installed, openai_client
from layerpath.tools.models import ModelManager, ModelState
from layerpath.tools.registry import service, services

log = logging.getLogger(__name__)
K = SubtaskKind


class Critic(Protocol):
    name: str

    def opinions(
        self, subtask: Subtask, before: np.ndarray, after: np.ndarray
    ) -> tuple[Opinion, ...]:
        """Its experts' opinions of the step; none when it cannot tell."""


#: a hint a vision model may give for a prompt: a few plain words (a sign's text read
#: by the model cannot smuggle a sentence into an image model's prompt)
HINT = re.compile(r"^[A-Za-z][A-Za-z ,'-]{0,38}$")


def goal_phrase(subtask: Subtask) -> str | None:
    """What the picture should show once the subtask is done, in a few words."""
    return kind_spec(subtask.kind).goal_phrase(subtask.target, subtask.to)


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
        """How well the step carries out the edit, 0..1 (None: no answer)."""
        found = [o for o in self.opinions(subtask, before, after) if o.expert == Expert.MEANING]
        return found[0].score if found else None

    def opinions(
        self, subtask: Subtask, before: np.ndarray, after: np.ndarray
    ) -> tuple[Opinion, ...]:
        from openai import APIError

        question = (
            f"The first image is a photo before an edit, the second after it. The edit was: "
            f"{as_told(subtask).describe()}. Judge the second image. Answer with JSON only: "
            '{"meaning": 0-10 (0: not done, 10: done exactly as asked), '
            '"quality": 0-10 (0: smeared, seams, artefacts; 10: clean), '
            '"aesthetics": 0-10 (0: blown highlights, crushed shadows, garish; 10: '
            'beautiful), "problem": "what is wrong, in a few words", '
            '"avoid": ["a few words an image model should avoid next time"], '
            '"add": ["a few words it should add"]}'
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
                    max_tokens=200,
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
            return ()
        return vlm_opinions(text)


class ClipCritic:
    """Scores a step by how much closer to the goal phrase CLIP finds the after picture."""

    name = "clip"

    def __init__(self, models: ModelManager, device: str = "cpu", gain: float = 20.0) -> None:
        self.folder = str(models.require(clip_model()))
        self.device = device
        self.gain = gain

    def similarities(self, phrase: str, *images: np.ndarray) -> list[float]:
        found: list[float] = service("picture_similarity")(
            self.folder, self.device, phrase, *images
        )
        return found

    def judge(self, subtask: Subtask, before: np.ndarray, after: np.ndarray) -> float | None:
        """0..1: how much closer to the goal phrase the after picture is (None: the
        subtask has no picture to aim at)."""
        phrase = goal_phrase(subtask)
        if phrase is None:
            return None
        was, now = self.similarities(phrase, before, after)
        return float(np.clip(0.5 + self.gain * (now - was), 0.0, 1.0))

    def opinions(
        self, subtask: Subtask, before: np.ndarray, after: np.ndarray
    ) -> tuple[Opinion, ...]:
        score = self.judge(subtask, before, after)
        if score is None:
            return ()
        phrase = goal_phrase(subtask) or ""
        reason = "" if score >= 0.5 else f"CLIP finds the picture no closer to '{phrase}'"
        return (Opinion(Expert.MEANING, self.name, score, reason, add=(phrase,)),)


def vlm_opinions(text: str) -> tuple[Opinion, ...]:
    """A vision model's answer as opinions: the JSON asked for (its scores out of 10, the
    problem, hints that pass HINT), or, from a model that answers a bare number, that
    number as the meaning expert's; nothing from an answer with neither."""
    found = re.search(r"\{.*\}", text, re.DOTALL)
    data: dict[str, Any] = {}
    if found is not None:
        try:
            loaded = json.loads(found.group())
            data = loaded if isinstance(loaded, dict) else {}
        except json.JSONDecodeError:
            data = {}
    if not data:
        number = re.search(r"\d+(?:\.\d+)?", text)
        if number is None:
            log.warning("the VLM critic answered %r, not a rating", text[:80])
            return ()
        data = {"meaning": number.group()}
    problem = str(data.get("problem") or "")[:200]
    hints = {
        key: tuple(
            str(h).strip() for h in data.get(key) or () if isinstance(h, str) and HINT.match(h)
        )[:3]
        for key in ("avoid", "add")
    }
    opinions = []
    for expert in (Expert.MEANING, Expert.QUALITY, Expert.AESTHETICS):
        try:
            score = float(np.clip(float(data[expert.value]) / 10.0, 0.0, 1.0))
        except (KeyError, TypeError, ValueError):
            continue
        reason = f"the vision model: {problem or 'judged it poorly'}" if score < 0.5 else ""
        opinions.append(Opinion(expert, "vlm", score, reason, {}, hints["avoid"], hints["add"]))
    return tuple(opinions)


def clip_model() -> str:
    """The CLIP weights the critic's similarity service needs."""
    return str(services()["picture_similarity"].model)


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
            clip_model() in models.catalogue
            and models.status(clip_model()).state == ModelState.PRESENT
            and importlib.util.find_spec("torch") is not None
            and importlib.util.find_spec("transformers") is not None
        )
        if ready:
            from layerpath.tools.device import resolve_device

            return ClipCritic(models, resolve_device(settings.device))
        if choice == "clip":
            log.warning("the CLIP critic needs: layerpath models download %s", clip_model())
            return None
    if choice == "vlm":
        if not llm_installed():
            log.warning("the VLM critic needs the openai package: %s", LLM_EXTRA)
            return None
        return VlmCritic(settings.llm, get_api_key(settings.llm.base_url))
    return None
