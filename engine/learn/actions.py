"""Actions: a photographer's favourite tool sequences, kept by name.

An action is one or more rules with source "user", one per subtask it saved (a step's
subtask, one subtask, or a whole run): the subtask's kind and words, its tools and the
parameters each ran with. Run by name it replays exactly those tools and parameters on
another picture, without planning or search, so the same input gives the same pixels; in
an ordinary run each part is a rule the fast path prefers when its conditions hold.

Actions are saved in the data folder (engine/learn/rulebook.py) and exported as
schema-versioned JSON. Whatever is read from a file is validated before anything
changes: a corrupt or hostile file (unknown tools or parameters, values out of range,
a huge file) is refused with a clear error.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from layerpath.engine.execute.subroutines import Rule
from layerpath.engine.plan.planner import Plan
from layerpath.engine.types import Subtask, SubtaskKind, SubtaskOutcome
from layerpath.errors import BadInput, printable, shown
from layerpath.files import parse_json
from layerpath.tools.registry import Registry

#: what an exported action file says it is
FORMAT = "layerpath-action"
FORMAT_VERSION = 1
#: the largest action file read (a real one is a few kilobytes)
MAX_FILE_BYTES = 1_000_000
MAX_NAME = 80
MAX_PARTS = 20
MAX_TOOLS = 12


@dataclass(frozen=True)
class Action:
    """A named sequence of subtasks, each solved by its saved rule (`parts`)."""

    name: str
    parts: tuple[Rule, ...]

    def plan(self) -> Plan:
        """The subtasks to run, in order (an action is not planned)."""
        subtasks = tuple(
            Subtask(part.subtask, part.target, part.to, dict(part.subtask_params), id=f"s{i + 1}")
            for i, part in enumerate(self.parts)
        )
        return Plan(subtasks, (), "action")

    def on_masks(self, masks: Sequence[str]) -> Action:
        """The action for a picture whose masks (or selection, 'this') are `masks`: a
        part whose object is not among them takes the only one there is."""
        if len(masks) != 1:
            return self
        (only,) = masks
        parts = tuple(
            part.model_copy(update={"target": only})
            if part.target is not None and part.target not in masks
            else part
            for part in self.parts
        )
        return Action(self.name, parts)

    def renamed(self, name: str) -> Action:
        name = check_name(name)
        parts = tuple(
            part.model_copy(update={"id": part_id(name, i, len(self.parts))})
            for i, part in enumerate(self.parts)
        )
        return Action(name, parts)

    def describe(self) -> str:
        return "; ".join(
            f"{Subtask(p.subtask, p.target, p.to).describe()}: {' → '.join(p.tools)}"
            for p in self.parts
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parts": [
                p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in self.parts
            ],
        }


def part_id(name: str, index: int, count: int) -> str:
    """A part's rule id: the action's name, numbered when it has several parts."""
    return name if count == 1 else f"{name} #{index + 1}"


def _today() -> str:
    return datetime.date.today().isoformat()


def part_of(name: str, index: int, count: int, outcome: SubtaskOutcome) -> Rule:
    """The rule that replays an outcome's accepted tools and parameters."""
    if not outcome.ok or not outcome.tools:
        raise BadInput(
            f"{outcome.subtask.describe()} did not succeed; only a step that worked can be "
            "saved as an action."
        )
    params = (
        [dict(p) for p in outcome.params] if len(outcome.params) == len(outcome.tools) else None
    )
    return Rule(
        id=part_id(name, index, count),
        subtask=outcome.subtask.kind,
        tools=list(outcome.tools),
        source="user",
        note=f"saved by you from {outcome.solved_by}",
        params=params,
        accepted=_today(),
        target=outcome.subtask.target,
        to=outcome.subtask.to,
        subtask_params=dict(outcome.subtask.params),
    )


def action_from_outcomes(name: str, outcomes: Sequence[SubtaskOutcome]) -> Action:
    name = check_name(name)
    return Action(name, tuple(part_of(name, i, len(outcomes), o) for i, o in enumerate(outcomes)))


def action_from_report(
    name: str, report: Mapping[str, Any], subtask: str | None, registry: Registry
) -> Action:
    """An action from a run report (`--report RUN.json`): every subtask that succeeded,
    or the one with id `subtask`, with the tools and parameters it ran with."""
    entries = report.get("subtasks") if isinstance(report, Mapping) else None
    if not isinstance(entries, list):
        raise BadInput("This is not a layerpath run report (no subtasks in it).")
    done = [e for e in entries if isinstance(e, Mapping) and e.get("solved_by") != "failed"]
    if subtask is not None:
        done = [e for e in done if e.get("id") == subtask]
        if not done:
            ids = ", ".join(str(e.get("id")) for e in entries if isinstance(e, Mapping))
            raise BadInput(
                f"No subtask '{shown(subtask)}' succeeded in this run (its subtasks: {ids})."
            )
    if not done:
        raise BadInput("No subtask of this run succeeded; there is nothing to save.")
    name = check_name(name)
    parts = []
    for index, entry in enumerate(done):
        steps = entry.get("steps")
        if not isinstance(steps, list) or not steps:
            raise BadInput(
                "This report has no step parameters (it was written by an older layerpath); "
                "run the instruction again with --report."
            )
        parts.append(
            {
                "id": part_id(name, index, len(done)),
                "subtask": entry.get("kind"),
                "tools": [s.get("tool") for s in steps if isinstance(s, Mapping)],
                "params": [s.get("params", {}) for s in steps if isinstance(s, Mapping)],
                "source": "user",
                "note": f"saved by you from {entry.get('solved_by')}",
                "accepted": _today(),
                "target": entry.get("target"),
                "to": entry.get("to"),
                "subtask_params": entry.get("params", {}),
            }
        )
    return validated({"name": name, "parts": parts}, registry)


def check_name(name: str) -> str:
    cleaned = name.strip()
    if not cleaned:
        raise BadInput("Give the action a name.")
    if len(cleaned) > MAX_NAME or printable(cleaned) != cleaned:
        raise BadInput(
            f"An action's name is at most {MAX_NAME} characters, without control characters."
        )
    return cleaned


def _check_params(tool: str, params: Mapping[str, Any], registry: Registry) -> None:
    """A tool's saved parameters are ones it has, of the type it uses, in a range it
    could be given (up to ten times the largest value its schedule tries)."""
    schedule = registry.get(tool).spec.param_schedule()
    known: dict[str, list[Any]] = {}
    for entry in schedule:
        for key, value in entry.items():
            known.setdefault(key, []).append(value)
    for key, value in params.items():
        if key not in known:
            raise BadInput(f"{tool} has no parameter '{shown(str(key), 40)}'.")
        usual = known[key][0]
        if isinstance(usual, bool) or isinstance(value, bool):
            if not (isinstance(usual, bool) and isinstance(value, bool)):
                raise BadInput(f"{tool}'s '{key}' is {type(usual).__name__}, not {value!r:.40}.")
        elif isinstance(usual, (int, float)):
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise BadInput(f"{tool}'s '{key}' is a number, not {shown(repr(value), 40)}.")
            top = max(abs(float(v)) for v in known[key] if isinstance(v, (int, float)))
            low = 0.0 if all(float(v) >= 0 for v in known[key]) else -10.0 * top - 10.0
            if not low <= float(value) <= 10.0 * top + 10.0:
                raise BadInput(f"{tool}'s '{key}' = {value} is out of range.")
        elif isinstance(usual, str):
            if not isinstance(value, str) or len(value) > 200:
                raise BadInput(f"{tool}'s '{key}' is a short text, not {shown(repr(value), 40)}.")
        elif value != usual and not isinstance(value, type(usual)):
            raise BadInput(f"{tool}'s '{key}' has the wrong kind of value.")


def validated(data: Any, registry: Registry) -> Action:
    """An action from JSON data, every field checked (BadInput says what is wrong)."""
    if not isinstance(data, Mapping):
        raise BadInput("An action is a JSON object with a name and its parts.")
    unknown = set(data) - {"name", "parts"}
    if unknown:
        raise BadInput(f"Unknown field(s) in the action: {', '.join(sorted(map(str, unknown)))}.")
    name = check_name(str(data.get("name", "")))
    raw_parts = data.get("parts")
    if not isinstance(raw_parts, list) or not 1 <= len(raw_parts) <= MAX_PARTS:
        raise BadInput(f"An action has 1 to {MAX_PARTS} parts.")
    parts = []
    for raw in raw_parts:
        try:
            part = Rule.model_validate(raw)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(x) for x in problem["loc"])
            raise BadInput(
                f"The action '{name}' has a bad part ({where}: {shown(problem['msg'], 120)})."
            ) from exc
        if part.source != "user":
            raise BadInput("An action's parts are the user's own rules (source 'user').")
        if not 1 <= len(part.tools) <= MAX_TOOLS:
            raise BadInput(f"An action's part runs 1 to {MAX_TOOLS} tools.")
        for tool in part.tools:
            if tool not in registry:
                raise BadInput(
                    f"The action '{name}' uses the tool '{shown(tool, 40)}', which this "
                    "layerpath does not have."
                )
        if part.params is not None:
            if len(part.params) != len(part.tools):
                raise BadInput(f"The action '{name}' needs one set of parameters per tool.")
            for tool, params in zip(part.tools, part.params, strict=True):
                _check_params(tool, params, registry)
        if part.subtask not in {k for t in part.tools for k in registry.get(t).spec.subtasks}:
            raise BadInput(
                f"In the action '{name}' no tool of {' → '.join(part.tools)} does "
                f"{SubtaskKind(part.subtask).label}."
            )
        parts.append(part)
    return Action(name, tuple(parts))


def export_json(action: Action) -> str:
    return json.dumps(
        {"format": FORMAT, "version": FORMAT_VERSION, "action": action.to_json()}, indent=2
    )


def import_json(data: bytes, registry: Registry) -> Action:
    """An exported action file, read and checked whole (nothing is saved here)."""
    if len(data) > MAX_FILE_BYTES:
        raise BadInput(f"This file is {len(data)} bytes; an action file is far smaller.")
    raw = parse_json(data, "This action file")
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise BadInput('This is not a layerpath action file (no "format": "layerpath-action").')
    if raw.get("version") != FORMAT_VERSION:
        raise BadInput(
            f"This action file is version {shown(repr(raw.get('version')), 20)}; this layerpath "
            f"reads version {FORMAT_VERSION}. Update layerpath to import it."
        )
    return validated(raw.get("action"), registry)
