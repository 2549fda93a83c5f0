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


class LlmPlanner:
    """Plans through an OpenAI-compatible chat completions endpoint."""

    def __init__(self, settings: LlmSettings, api_key: str | None, client: Any = None) -> None:
        self.settings = settings
        # (said beside a failure: a 401 alone does not tell a user no key was sent)
        self.no_key = None if api_key else missing_key(settings.base_url)
        if api_key:
            remember_secret(api_key)
        self.client = client or openai_client(settings.base_url, api_key, settings.timeout_s)

    def ask(self, messages: list[dict[str, Any]]) -> str:
        """The model's answer; PlannerError when none comes within timeout_s in all, or
        what comes is not a chat completion (an HTML page, bytes)."""
        from openai import APIError

        completions: Any = self.client.chat.completions  # messages are plain dicts
        try:
            response = within(
                self.settings.timeout_s,
                lambda: completions.create(
                    model=self.settings.model,
                    messages=messages,
                    temperature=0,
                    response_format={"type": "json_object"},
                ),
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
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": SYSTEM_PROMPT.format(
                    kinds=kinds, adjustments=adjustment_ops(), looks=", ".join(looks())
                ),
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"Instruction: {request.prompt}"},
                    {
                        "type": "image_url",
                        "image_url": {
                            "url": image_data_url(request.snapshot.image, PROMPT_IMAGE_SIDE)
                        },
                    },
                ],
            },
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
            log.warning(warning)
            offline = plan_offline(request.prompt)
            return Plan(offline.subtasks, (warning, *offline.warnings), "offline (LLM fallback)")

    return plan


def planner_for(settings: Settings, choice: str | None = None) -> tuple[Planner, str]:
    """The planner the settings (or an explicit choice) ask for, and its name."""
    choice = choice or settings.planner
    if choice == "offline":
        return offline_planner, "offline"
    llm = LlmPlanner(settings.llm, get_api_key(settings.llm.base_url))
    return llm_planner_with_fallback(llm), "llm"
