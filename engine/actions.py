"""Saved actions: a user's favourite tool sequence for a subtask, kept by name.

Stored as JSON (actions.json) in the platform data folder. The action library UI comes
later; this is the engine API the panel's "Save as action" uses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from layerpath.engine.types import SubtaskKind
from layerpath.errors import BadInput
from layerpath.settings import data_dir


@dataclass(frozen=True)
class Action:
    name: str
    subtask: SubtaskKind
    tools: tuple[str, ...]
    params: tuple[Mapping[str, Any], ...] = ()
    target: str | None = None
    to: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["subtask"] = self.subtask.value
        data["tools"], data["params"] = list(self.tools), [dict(p) for p in self.params]
        return data


class ActionStore:
    """Named actions in one JSON file; saving a name again replaces that action."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "actions.json"

    def load(self) -> dict[str, Action]:
        if not self.path.exists():
            return {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {
                item["name"]: Action(
                    item["name"],
                    SubtaskKind(item["subtask"]),
                    tuple(item["tools"]),
                    tuple(item.get("params", ())),
                    item.get("target"),
                    item.get("to"),
                    item.get("extra", {}),
                )
                for item in raw["actions"]
            }
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BadInput(
                f"Cannot read saved actions {self.path}: {exc}. Fix or delete it."
            ) from exc

    def save(self, action: Action) -> None:
        if not action.name.strip():
            raise BadInput("Give the action a name.")
        actions = self.load()
        actions[action.name] = action
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        payload = {"version": 1, "actions": [a.to_json() for a in actions.values()]}
        tmp.write_text(json.dumps(payload, indent=2), encoding="utf-8")
        tmp.replace(self.path)

    def names(self) -> Sequence[str]:
        return sorted(self.load())
