"""The rule book: every rule the fast path may use, with where it comes from.

Shipped rules (engine/data/subroutines.json) are read-only; rules mined here and the
user's actions live in the data folder: `rules.json` (mined rules, and the ids the user
disabled, shipped ones included), `actions.json`, and `learning.json` (what verification
decided about each proposed rule). Files are replaced atomically; one
that cannot be read is a clear error naming it, never a silent loss of the user's
actions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from layerpath.engine.execute.subroutines import Rule, RuleTable
from layerpath.engine.learn.actions import Action, export_json, import_json, validated
from layerpath.engine.learn.induction import Decision
from layerpath.errors import BadInput, shown
from layerpath.files import (
    backed_up,
    check_output,
    listed,
    read_store,
    store_lock,
    write_atomically,
    write_json,
)
from layerpath.settings import data_dir
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)

#: what each store is called in a message
_WHAT = {
    "rules.json": "rules file",
    "actions.json": "actions file",
    "learning.json": "learning file",
}
RULES_VERSION = 1
#: verification decisions kept in learning.json
MAX_DECISIONS = 2000
ACTIONS_VERSION = 2


@dataclass(frozen=True)
class Entry:
    """A rule as the book lists it: whether it is on, and why it cannot run here."""

    rule: Rule
    enabled: bool
    unavailable: str | None
    action: str | None = None  # the action it is part of

    def to_json(self) -> dict[str, Any]:
        data = self.rule.model_dump(mode="json", by_alias=True, exclude_none=True)
        data["enabled"] = self.enabled
        if self.unavailable:
            data["unavailable"] = self.unavailable
        if self.action:
            data["action"] = self.action
        return data


class RuleBook:
    """Shipped, mined and user rules; the RuleTable a run uses holds the enabled ones."""

    def __init__(self, registry: Registry, folder: Path | None = None) -> None:
        self.registry = registry
        self.folder = folder or data_dir()
        self.rules_path = self.folder / "rules.json"
        self.actions_path = self.folder / "actions.json"
        self.learning_path = self.folder / "learning.json"

    # --- reading ---------------------------------------------------------------------

    def _read(self, path: Path) -> dict[str, Any]:
        return read_store(path, _WHAT.get(path.name, "file"))

    def _list(self, path: Path, key: str) -> list[Any]:
        return listed(self._read(path), key, path, _WHAT.get(path.name, "file"))

    def shipped(self) -> list[Rule]:
        return list(RuleTable.load(self.registry).rules)

    def mined(self) -> list[Rule]:
        raw = self._list(self.rules_path, "rules")
        try:
            return [Rule.model_validate(r) for r in raw]
        except (ValidationError, TypeError) as exc:
            raise BadInput(
                f"Cannot read {self.rules_path}: a rule is malformed. Fix or delete it."
            ) from exc

    def disabled(self) -> set[str]:
        return {str(i) for i in self._list(self.rules_path, "disabled")}

    def pinned(self) -> set[str]:
        return {str(i) for i in self._list(self.rules_path, "pinned")}

    def actions(self) -> dict[str, Action]:
        data = self._read(self.actions_path)
        items = listed(data, "actions", self.actions_path, "actions file")
        try:
            if data.get("version", 1) == 1:  # saved by an earlier layerpath: one subtask each
                items = [_from_version_1(item) for item in items]
            found = [validated(item, self.registry) for item in items]
        except (BadInput, KeyError, TypeError, ValueError) as exc:
            raise BadInput(f"Cannot read {self.actions_path}: {exc} Fix or delete it.") from exc
        return {a.name: a for a in found}

    def entries(self) -> list[Entry]:
        """Every rule: shipped, mined, then each action's parts."""
        off = self.disabled()
        table = RuleTable([], self.registry)

        def entry(rule: Rule, action: str | None = None) -> Entry:
            return Entry(rule, rule.id not in off, table.unavailable_reason(rule), action)

        listed = [entry(r) for r in [*self.shipped(), *self.mined()]]
        for action in self.actions().values():
            listed += [entry(part, action.name) for part in action.parts]
        return listed

    def find(self, rule_id: str) -> Entry:
        found = [entry for entry in self.entries() if entry.rule.id == rule_id]
        if not found:
            raise BadInput(f"No rule '{shown(rule_id, 80)}'; `layerpath rules list` shows them.")
        if len(found) > 1:  # (a store written before names were kept apart)
            sources = ", ".join(e.rule.source + (f" (action '{e.action}')" if e.action else "")
                                for e in found)  # fmt: skip
            raise BadInput(
                f"Several rules are named '{shown(rule_id, 80)}' ({sources}); rename the "
                "action with `layerpath actions rename` so each name means one rule."
            )
        return found[0]

    def table(self) -> RuleTable:
        """The rules a run may use: every enabled one, the pinned ones first for their kind."""
        enabled = [e.rule for e in self.entries() if e.enabled]
        return RuleTable(enabled, self.registry, self.pinned())

    # --- changing --------------------------------------------------------------------

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        write_json(path, data)

    def set_enabled(self, rule_id: str, enabled: bool) -> Entry:
        with store_lock(self.rules_path):
            entry = self.find(rule_id)
            data = self._read(self.rules_path)
            off = {str(i) for i in self._list(self.rules_path, "disabled")}
            off = off - {rule_id} if enabled else off | {rule_id}
            self._write(
                self.rules_path, {**data, "version": RULES_VERSION, "disabled": sorted(off)}
            )
        return Entry(entry.rule, enabled, entry.unavailable, entry.action)

    def set_pinned(self, rule_id: str, pinned: bool) -> Entry:
        """Pin a rule (it serves its kind wherever it applies, whatever is learnt later)
        or unpin it."""
        with store_lock(self.rules_path):
            entry = self.find(rule_id)
            data = self._read(self.rules_path)
            kept = {str(i) for i in self._list(self.rules_path, "pinned")}
            if pinned:  # one pinned rule a kind
                kind = entry.rule.subtask
                same = {e.rule.id for e in self.entries() if e.rule.subtask == kind}
                kept = (kept - same) | {rule_id}
            else:
                kept.discard(rule_id)
            self._write(self.rules_path, {**data, "version": RULES_VERSION, "pinned": sorted(kept)})
        return entry

    def undo(self, rule_id: str) -> Entry:
        """Turn off a rule learnt from the user's runs (the kind goes back to the rules it
        had); a shipped rule or an action's part is not undone but disabled."""
        entry = self.find(rule_id)
        if entry.rule.source != "mined":
            raise BadInput(
                f"Rule {rule_id} was not learnt from your runs; `layerpath rules disable "
                f"{rule_id}` turns it off."
            )
        return self.set_enabled(rule_id, False)

    def add_mined(self, rules: Iterable[Rule], learned_at_runs: int | None = None) -> None:
        """Keep mined rules (and, after an induction, how many runs it had seen)."""
        with store_lock(self.rules_path):
            data = self._read(self.rules_path)
            kept = {r.id: r for r in self.mined()}
            for rule in rules:
                kept[rule.id] = rule
            mined = [
                r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in kept.values()
            ]
            update: dict[str, Any] = {"version": RULES_VERSION, "rules": mined}
            if learned_at_runs is not None:
                update["learned_at_runs"] = learned_at_runs
            self._write(self.rules_path, {**data, **update})

    def learning_due(self, runs: int, every: int) -> bool:
        """Whether `every` runs have been recorded since the last induction."""
        if every <= 0:
            return False
        try:
            last = int(self._read(self.rules_path).get("learned_at_runs", 0))
        except (BadInput, TypeError, ValueError):
            return False
        return runs - last >= every

    def rejected_before(self) -> set[str]:
        """The ids of proposals verification turned down (learning.json)."""
        kept = self._decisions()
        return {
            str(d["rule"]["id"])
            for d in kept
            if isinstance(d, dict)
            and not d.get("accepted")
            and d.get("benefit") is not None
            and isinstance(d.get("rule"), dict)
            and "id" in d["rule"]
        }

    def record_decisions(self, decisions: Iterable[Decision]) -> None:
        """Keep what verification decided (learning.json, the latest MAX_DECISIONS)."""
        with store_lock(self.learning_path):
            kept = self._decisions()
            kept += [d.to_json() for d in decisions]
            self._write(self.learning_path, {"version": 1, "decisions": kept[-MAX_DECISIONS:]})

    def _decisions(self) -> list[Any]:
        """learning.json's decisions. It is layerpath's own record, not the user's work:
        one that cannot be read is moved aside (and said so) and learning starts afresh."""
        try:
            return list(self._list(self.learning_path, "decisions"))
        except BadInput as exc:
            backup = backed_up(self.learning_path)
            log.warning("%s It was kept as %s; learning starts afresh.", exc, backup)
            return []

    def _save_actions(self, actions: Iterable[Action]) -> None:
        self._write(
            self.actions_path,
            {"version": ACTIONS_VERSION, "actions": [a.to_json() for a in actions]},
        )

    def _check_free(self, action: Action) -> None:
        """An action's name (and its parts' ids) name no shipped or learnt rule: `rules
        disable NAME` must mean one rule."""
        taken = {r.id for r in [*self.shipped(), *self.mined()]}
        clash = sorted({part.id for part in action.parts} & taken)
        if clash:
            raise BadInput(
                f"'{shown(clash[0], 80)}' is the name of one of layerpath's rules "
                "(`layerpath rules show` it); give the action another name."
            )
        others = {
            part.id: other.name
            for other in self.actions().values()
            if other.name != action.name
            for part in other.parts
        }
        for part in action.parts:
            if part.id in others:
                raise BadInput(
                    f"'{shown(part.id, 80)}' already names a part of your action "
                    f"'{shown(others[part.id], 80)}'; give the action another name."
                )

    def save_action(self, action: Action) -> None:
        """Keep the action (saving a name again replaces that action)."""
        with store_lock(self.actions_path):  # (checked and saved in one hold)
            self._check_free(action)
            actions = self.actions()
            actions[action.name] = action
            self._save_actions(actions.values())

    def import_action(self, data: bytes, name: str | None = None, replace: bool = False) -> Action:
        """Add an action from an exported file's bytes (under `name` when given); a bad
        file, or a name already taken without `replace`, changes nothing."""
        action = import_json(data, self.registry)
        action = action.renamed(name or action.name)  # (its parts named after it, as saved)
        with store_lock(self.actions_path):
            if action.name in self.actions() and not replace:
                raise BadInput(
                    f"There is already an action '{action.name}'; import it under another "
                    "name (--as NAME), or replace it (--replace)."
                )
            self.save_action(action)
        return action

    def export_action(self, name: str, path: Path, replace: bool = False) -> Path:
        """Write the action to `path` as schema-versioned JSON: never into layerpath's
        own folders, nor over an existing file unless `replace`."""
        text = export_json(self.action(name)).encode("utf-8")
        check_output(path, replace=replace)
        return write_atomically(path, lambda file: file.write(text))

    def action(self, name: str) -> Action:
        actions = self.actions()
        if name not in actions:
            known = ", ".join(sorted(actions)) or "none yet"
            raise BadInput(f"No action '{shown(name, 80)}' (saved actions: {known}).")
        return actions[name]

    def _carry(self, ids: dict[str, str | None]) -> None:
        """Rule ids an action's parts had, now renamed (old -> new) or gone (old -> None),
        in the disabled and pinned lists: a renamed action keeps its state, and a new
        action later given a gone id starts on and unpinned."""
        with store_lock(self.rules_path):
            data = self._read(self.rules_path)
            if not data:
                return
            kept = {}
            for key in ("disabled", "pinned"):
                now = (ids.get(str(i), str(i)) for i in self._list(self.rules_path, key))
                kept[key] = sorted({i for i in now if i is not None})
            self._write(self.rules_path, {**data, **kept})

    def delete_action(self, name: str) -> None:
        with store_lock(self.actions_path):
            gone = self.action(name)
            self._save_actions(a for a in self.actions().values() if a.name != name)
        self._carry({part.id: None for part in gone.parts})

    def rename_action(self, old: str, new: str) -> Action:
        with store_lock(self.actions_path):
            actions = self.actions()
            renamed = self.action(old).renamed(new)
            if renamed.name != old and renamed.name in actions:
                raise BadInput(
                    f"There is already an action '{renamed.name}'; delete or rename it first."
                )
            self._check_free(renamed)
            self._save_actions(renamed if a.name == old else a for a in actions.values())
        was = actions[old].parts
        self._carry({a.id: b.id for a, b in zip(was, renamed.parts, strict=True) if a.id != b.id})
        return renamed


def _from_version_1(item: dict[str, Any]) -> dict[str, Any]:
    """An action as layerpath saved them before rules had provenance: one subtask, its
    parameters one per layer (dropped when they do not line up with the tools)."""
    tools = list(item["tools"])
    params = list(item.get("params", ()))
    return {
        "name": item["name"],
        "parts": [
            {
                "id": item["name"],
                "subtask": item["subtask"],
                "tools": tools,
                "params": params if len(params) == len(tools) else None,
                "source": "user",
                "note": "saved by you",
                "target": item.get("target"),
                "to": item.get("to"),
            }
        ],
    }
