"""`layerpath rules ...`, `layerpath learn` and `layerpath actions ...`: the rule book,
rules learnt from traces, and saved actions."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from layerpath.engine.learn.actions import MAX_FILE_BYTES, action_from_report
from layerpath.engine.learn.induction import Decision
from layerpath.engine.learn.learning import learning_lock
from layerpath.engine.learn.rulebook import Entry, RuleBook
from layerpath.engine.types import SubtaskKind
from layerpath.errors import BadInput
from layerpath.files import read_bytes, read_json
from layerpath.settings import load_settings
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry


def rule_book() -> RuleBook:
    return RuleBook(Registry.from_catalogue(models=ModelManager.from_settings(load_settings())))


def _line(entry: Entry, pinned: bool = False) -> str:
    rule = entry.rule
    state = ("on" if entry.enabled else "off") + (", pinned" if pinned else "")
    if entry.unavailable:
        state += f", cannot run here: {entry.unavailable}"
    label = SubtaskKind(rule.subtask).label
    return f"{rule.id:<16} {rule.source:<8} {label:<22} {' → '.join(rule.tools)}  [{state}]"


def cmd_rules(args: argparse.Namespace) -> int:
    book = rule_book()
    if args.rules_command == "list":
        entries = book.entries()
        if args.json:
            print(json.dumps({"rules": [e.to_json() for e in entries]}, indent=2))
        else:
            pinned = book.pinned()
            for entry in entries:
                print(_line(entry, entry.rule.id in pinned))
        return 0
    if args.rules_command == "show":
        entry = book.find(args.id)
        if args.json:
            print(json.dumps(entry.to_json(), indent=2))
            return 0
        print(_line(entry))
        rule = entry.rule
        for condition in rule.conditions:
            print(f"  when {condition.model_dump(by_alias=True, exclude_none=True)}")
        if rule.note:
            print(f"  {rule.note}")
        if entry.action:
            print(f"  part of your action '{entry.action}'")
        return 0
    if args.rules_command in ("pin", "unpin"):
        entry = book.set_pinned(args.id, args.rules_command == "pin")
        said = (
            "pinned: it serves"
            if args.rules_command == "pin"
            else "unpinned: the cheapest rule serves"
        )
        pinned = args.rules_command == "pin"
        print(f"{_line(entry, pinned)}\n  {said} {entry.rule.subtask.label} from now on")
        return 0
    if args.rules_command == "undo":
        print(_line(book.undo(args.id)))
        return 0
    entry = book.set_enabled(args.id, args.rules_command == "enable")
    print(_line(entry))
    return 0


def cmd_learn(args: argparse.Namespace) -> int:
    """Induce rules from the trace store, verify each on the replay set, keep the
    accepted ones as mined rules and every decision in learning.json."""
    from layerpath.benchmarks.replay import suite_replay
    from layerpath.engine.learn.induction import Inducer, OfflineInducer, learn
    from layerpath.engine.learn.knowledge import BenchmarkTable
    from layerpath.engine.learn.llm_induction import LlmInducer
    from layerpath.engine.learn.traces import user_traces
    from layerpath.engine.plan.llm_planner import LlmPlanner
    from layerpath.settings.endpoints import chosen as chosen_endpoint
    from layerpath.settings.secrets import get_api_key

    book = rule_book()
    store = user_traces(None)
    assert store is not None
    rows = store.attempts() if store.usable else []
    table = BenchmarkTable.from_tools(book.registry)
    table.load_observed(store.tool_stats())

    def said(decision: Decision) -> None:
        rule = decision.rule
        print(
            f"{rule.get('id', '-')} {rule.get('subtask', '?')}: "
            f"{' → '.join(map(str, rule.get('tools') or []))} "
            f"(try {decision.attempt + 1}): {decision.reason}",
            file=sys.stderr,
            flush=True,
        )

    settings = load_settings()
    chosen = args.inducer or ("both" if settings.planner == "llm" else "offline")
    inducers: list[Inducer] = []
    if chosen in ("offline", "both"):
        inducers.append(OfflineInducer())
    llm = None
    if chosen in ("llm", "both"):
        endpoint = chosen_endpoint(settings.llm)
        llm = LlmInducer(LlmPlanner(endpoint, get_api_key(endpoint.base_url)), book.registry)
        inducers.append(llm)
    runs = store.runs()
    rejected = book.rejected_before()
    print(f"learning from {len(rows)} recorded attempts…", file=sys.stderr, flush=True)
    with learning_lock(book.folder):
        accepted, decisions = learn(
            rows,
            book.table(),
            suite_replay(book.registry, table, per_kind=max(1, args.replay_tasks)),
            inducers,
            on_decision=said,
            rejected=rejected,
        )
        if llm is not None:  # what the model proposed that did not validate
            for dropped in llm.rejected:
                said(dropped)
            decisions += llm.rejected
        book.add_mined(accepted, learned_at_runs=runs)
        book.record_decisions(decisions)
    if args.json:
        print(
            json.dumps(
                {
                    "attempts": len(rows),
                    "decisions": [d.to_json() for d in decisions],
                    "accepted": [r.id for r in accepted],
                },
                indent=2,
            )
        )
    else:
        print(f"{len(decisions)} proposals, {len(accepted)} accepted")
        for rule in accepted:
            print(f"  {rule.id} {rule.subtask.value}: {' → '.join(rule.tools)}")
    return 0


def _read_report(path: Path) -> Any:
    if not path.exists() and not path.is_symlink():
        raise BadInput(f"No run report at {path}; write one with `layerpath edit ... --report`.")
    return read_json(path, "run report")


def cmd_actions(args: argparse.Namespace, edit: Callable[..., int]) -> int:
    book = rule_book()
    command = args.actions_command
    if command == "save":
        action = action_from_report(
            args.name, _read_report(args.source), args.subtask, book.registry
        )
        book.save_action(action)
        print(f"saved action '{action.name}': {action.describe()}")
        return 0
    if command == "list":
        actions = book.actions()
        if args.json:
            print(json.dumps({"actions": [a.to_json() for a in actions.values()]}, indent=2))
        elif not actions:
            print("no saved actions yet: `layerpath actions save NAME --from RUN.json`")
        else:
            for action in actions.values():
                print(f"{action.name}: {action.describe()}")
        return 0
    if command == "show":
        action = book.action(args.name)
        if args.json:
            print(json.dumps(action.to_json(), indent=2))
            return 0
        print(action.name)
        for part in action.parts:
            print(f"  {part.id}: {SubtaskKind(part.subtask).label} '{part.target}'", end="")
            print(f" -> '{part.to}'" if part.to else "")
            for index, tool in enumerate(part.tools):
                print(f"    {tool} {json.dumps(part.params_for(index) or {})}")
        return 0
    if command == "run":
        action = book.action(args.name)
        args.instruction = f"action: {action.name}"
        return edit(args, action)
    if command == "export":
        book.export_action(args.name, args.output, args.force)
        print(f"exported '{args.name}' to {args.output}")
        return 0
    if command == "import":
        data = read_bytes(args.file, "action file", MAX_FILE_BYTES)
        action = book.import_action(data, args.rename, args.replace)
        print(f"imported action '{action.name}': {action.describe()}")
        return 0
    if command == "delete":
        book.delete_action(args.name)
        print(f"deleted action '{args.name}'")
        return 0
    renamed = book.rename_action(args.name, args.new_name)
    print(f"renamed '{args.name}' to '{renamed.name}'")
    return 0
