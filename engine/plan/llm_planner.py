"""The LLM planner: any OpenAI-compatible endpoint through the real `openai` client.

The model sees the instruction and a downscaled copy of the image, and must answer
strict JSON: {"subtasks": [{"kind": ..., "target": ..., "to": ..., "params": {...}}]}.
The answer is validated against the 24 subtask kinds; an invalid answer gets one
repair round (the validation error is sent back); after that, or when the endpoint
is down, the offline planner takes over with a visible warning.

Text read from the image (OCR) is never sent: it is data, and must not steer the plan.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from layerpath.deadline import Overdue, within
from layerpath.engine.events import OnEvent
from layerpath.engine.kinds import kind_spec
from layerpath.engine.plan.planner import (
    Plan,
    Planner,
    offline_planner,
    order_subtasks,
    plan_offline,
)
from layerpath.engine.types import EditRequest, Subtask, SubtaskKind
from layerpath.errors import PlannerError, UnsupportedInstruction, shown
from layerpath.kit.adjustments import adjustment_ops
from layerpath.kit.looks import adjustment_problem, looks
from layerpath.settings import LlmSettings, Settings
from layerpath.settings.endpoints import AUTO_MODEL, FORMATS, chosen, recalled, remember
from layerpath.settings.secrets import get_api_key, missing_key, redact, remember_secret
from layerpath.tools.endpoint import image_data_url, openai_client

log = logging.getLogger(__name__)

PROMPT_IMAGE_SIDE = 512

SYSTEM_PROMPT = """You plan image edits for a photo editor. Split the user's instruction into an
ordered list of subtasks. Each subtask has "kind" (one of: {kinds}), "target" (the object
or text it acts on, short noun phrase, or null), "to" (new colour, new text, or
replacement object, or null) and optional "params" (e.g. {{"match": "OLD TEXT"}} for the
text to edit, {{"position": "top"}} for added text). Photo adjustments are
"photo_adjustment" (the whole picture, target null) or "region_adjustment" (target: the
region, e.g. "face", "sky", "background", "person") with params {{"op": OP, "amount":
NUMBER}}, OP one of: {adjustments}. A style is OP "look" with "look" one of: {looks}
(amount 0..1, its strength). Any adjustment may add "outside": true (the target is kept
as it is and the rest changes: "keep the face unchanged") or "graduated": "top",
"bottom", "left" or "right" (whole at that side, fading across). Order subtasks so each one's inputs exist:
outpainting first, a replaced object before it is recoloured, text detection after
text edits. A word written @NAME is a reference the user gave (a picture or a note):
to take its words or its sky, write "@NAME" as "to"; to take its colours, OP "match"
with "ref": "NAME". Answer only JSON: {{"subtasks": [...]}}."""


class _LlmSubtask(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: SubtaskKind
    target: str | None = None
    to: str | None = None
    params: dict[str, Any] = {}

    @field_validator("kind", mode="before")
    @classmethod
    def _normalise_kind(cls, value: Any) -> Any:
        return str(value).strip().lower().replace(" ", "_") if isinstance(value, str) else value

    @model_validator(mode="after")
    def _adjustment_known(self) -> _LlmSubtask:
        if kind_spec(self.kind).adjustment:
            problem = adjustment_problem(self.params)
            if problem:
                raise ValueError(problem)
        return self


class _LlmPlan(BaseModel):
    subtasks: list[_LlmSubtask]


def parse_plan(content: str) -> tuple[Subtask, ...]:
    """Validate a model answer; raises PlannerError saying what is wrong."""
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        parsed = _LlmPlan.model_validate_json(text)
    except ValidationError as exc:
        raise PlannerError(
            f"The plan is not valid: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}"
        ) from exc
    if not parsed.subtasks:
        raise PlannerError("The plan has no subtasks.")
    subtasks = [Subtask(s.kind, s.target, s.to, s.params) for s in parsed.subtasks]
    return tuple(order_subtasks(subtasks))


#: what a server says when it was sent a picture its model cannot take (llama.cpp:
#: "image input is not supported ... mmproj", vLLM: "not a multimodal model", LM Studio
#: and Ollama: "does not support images")
_NO_PICTURES = re.compile(r"image|vision|multi-?modal|mmproj", re.IGNORECASE)
#: ... and words that say the model never takes one (not that this one failed)
_REFUSED = re.compile(
    r"not supported|does(?: not|n't) support|not a multi-?modal|mmproj|no vision", re.IGNORECASE
)


def plan_schema() -> dict[str, Any]:
    """The JSON schema of a plan, for a server that holds its answer to one."""
    return _LlmPlan.model_json_schema()


def _words_only(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with no picture, each one's content plain text (a text-only server
    may refuse a list of parts too)."""
    plain = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            content = "\n".join(p["text"] for p in content if p.get("type") == "text")
        plain.append({**message, "content": content})
    return plain


class LlmPlanner:
    """Plans through an OpenAI-compatible chat completions endpoint: the answer held to
    the plan's JSON schema where the server can (else any JSON object, else words that
    are JSON), the picture shown where the model takes one; what the endpoint takes is
    found once and remembered (settings/endpoints.py)."""

    def __init__(self, settings: LlmSettings, api_key: str | None, client: Any = None) -> None:
        self.settings = settings
        # (said beside a failure: a 401 alone does not tell a user no key was sent)
        self.no_key = None if api_key else missing_key(settings.base_url)
        if api_key:
            remember_secret(api_key)
        self.client = client or openai_client(settings.base_url, api_key, settings.timeout_s)
        self._model: str | None = None if settings.model == AUTO_MODEL else settings.model

    def model(self) -> str:
        """The model asked: the settings' own, or (model "auto") the first the server
        lists."""
        if self._model is None:
            try:
                listed = within(
                    self.settings.timeout_s, lambda: [m.id for m in self.client.models.list()]
                )
            except Overdue as exc:
                raise PlannerError(f"the endpoint gave {exc}") from exc
            if not listed:
                raise PlannerError(
                    f"the server at {self.settings.base_url} lists no model; load one there"
                )
            self._model = str(listed[0])
        return self._model

    def pictures(self) -> bool:
        """Whether the picture goes with the words (vision "auto": unless this endpoint's
        model was found not to take one)."""
        if self.settings.vision != "auto":
            return self.settings.vision == "yes"
        return recalled(self.settings.base_url, self.model()).get("images", True) is not False

    def ask(self, messages: list[dict[str, Any]]) -> str:
        """The model's answer; PlannerError when none comes within timeout_s in all, or
        what comes is not a chat completion (an HTML page, bytes). A server that refuses
        the JSON schema is asked for a JSON object, then for words; one whose model
        takes no picture is asked without it; what worked is remembered."""
        from openai import APIStatusError, BadRequestError, UnprocessableEntityError

        model = self.model()
        known = recalled(self.settings.base_url, model)
        # the way that worked last time first (and, refused now, the ways after it)
        start = FORMATS.index(known["format"]) if known.get("format") in FORMATS else 0
        formats = list(FORMATS[start:])
        pictures = self.pictures()
        while True:
            sent = messages if pictures else _words_only(messages)
            try:
                content = self._create(model, sent, formats[0])
            except APIStatusError as exc:
                said = str(exc)
                if pictures and self.settings.vision == "auto" and _NO_PICTURES.search(said):
                    log.info("the model took no picture (%s); asking with words only", said)
                    pictures = False
                    # refused for good (a 400, or words that say so), not a server's bad
                    # moment ('failed to process image: out of memory'): remembered
                    if exc.status_code < 500 or _REFUSED.search(said):
                        remember(self.settings.base_url, model, images=False)
                    continue
                refused = isinstance(exc, (BadRequestError, UnprocessableEntityError))
                if refused and len(formats) > 1:
                    log.info("the server refused %s answers (%s)", formats[0], said)
                    formats.pop(0)
                    continue
                raise
            facts: dict[str, Any] = {"format": formats[0]}
            if pictures and self.settings.vision == "auto":
                facts["images"] = True
            remember(self.settings.base_url, model, **facts)
            return content

    def _create(self, model: str, messages: list[dict[str, Any]], form: str) -> str:
        """One chat completion asking for answers in the form `form` (FORMATS)."""
        from openai import APIError

        completions: Any = self.client.chat.completions  # messages are plain dicts
        asked: dict[str, Any] = {}
        if form == "json_schema":
            asked["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "plan", "schema": plan_schema(), "strict": False},
            }
        elif form == "json_object":
            asked["response_format"] = {"type": "json_object"}
        try:
            response = within(
                self.settings.timeout_s,
                lambda: completions.create(model=model, messages=messages, temperature=0, **asked),
                self.client.close,
            )
            content = response.choices[0].message.content
        except APIError:
            raise
        except Overdue as exc:
            raise PlannerError(f"the endpoint gave {exc}") from exc
        except Exception as exc:  # a 200 whose body is no chat completion
            raise PlannerError(
                f"the endpoint's answer is not a chat completion ({type(exc).__name__})"
            ) from exc
        if content is not None and not isinstance(content, str):
            raise PlannerError("the endpoint's answer holds no text")
        return content or ""

    def plan(self, request: EditRequest) -> Plan:
        """Ask the model, repair once if its answer is invalid; PlannerError if still bad.
        Network and server errors propagate as openai.APIError."""
        kinds = ", ".join(k.value for k in SubtaskKind)
        parts: list[dict[str, Any]] = [{"type": "text", "text": f"Instruction: {request.prompt}"}]
        if self.pictures():
            url = image_data_url(request.snapshot.image, PROMPT_IMAGE_SIDE)
            parts.append({"type": "image_url", "image_url": {"url": url}})
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": SYSTEM_PROMPT.format(
                    kinds=kinds, adjustments=adjustment_ops(), looks=", ".join(looks())
                ),
            },
            {"role": "user", "content": parts},
        ]
        content = self.ask(messages)
        try:
            return Plan(parse_plan(content), planner="llm")
        except PlannerError as first:
            log.info("LLM plan invalid (%s); asking for a repair", first)
            messages += [
                {"role": "assistant", "content": content},
                {"role": "user", "content": f"{first} Answer again with valid JSON only."},
            ]
            return Plan(parse_plan(self.ask(messages)), planner="llm")


def llm_planner_with_fallback(
    planner: LlmPlanner,
) -> Callable[[EditRequest, OnEvent], Plan]:
    """The engine's planner: the LLM first, the offline grammar when the LLM cannot."""
    from openai import APIError, AuthenticationError, PermissionDeniedError

    def plan(request: EditRequest, on_event: OnEvent) -> Plan:
        if not request.prompt.strip():
            raise UnsupportedInstruction("The instruction is empty.")
        try:
            return planner.plan(request)
        except (PlannerError, APIError) as exc:
            reason = redact(shown((str(exc).splitlines() or [""])[0], 200))
            warning = f"The LLM planner failed ({reason}); planned offline instead."
            if planner.no_key and isinstance(exc, (AuthenticationError, PermissionDeniedError)):
                warning += f" {planner.no_key}"
            log.info(warning)  # (the plan's warning says it: once)
            offline = plan_offline(request.prompt)
            return Plan(offline.subtasks, (warning, *offline.warnings), "offline (LLM fallback)")

    return plan


def planner_for(settings: Settings, choice: str | None = None) -> tuple[Planner, str]:
    """The planner the settings (or an explicit choice) ask for, and its name."""
    choice = choice or settings.planner
    if choice == "offline":
        return offline_planner, "offline"
    endpoint = chosen(settings.llm)  # (OPENAI_BASE_URL where set)
    llm = LlmPlanner(endpoint, get_api_key(endpoint.base_url))
    return llm_planner_with_fallback(llm), "llm"
