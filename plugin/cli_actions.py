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
from layerpath.engine.types import Mode, SubtaskKind
from layerpath.errors import BadInput
from layerpath.files import read_bytes, read_json
from layerpath.settings import load_settings
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry


def add_parsers(sub: Any) -> None:
    rules = sub.add_parser("rules", help="the subroutine rules: shipped, mined and your actions")
    command = rules.add_subparsers(dest="rules_command", required=True)
    listing = command.add_parser("list", help="every rule, where it comes from, on or off")
    listing.add_argument("--json", action="store_true")
    show = command.add_parser("show", help="one rule whole")
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    for name, text in (
        ("disable", "stop the fast path using a rule"),
        ("enable", "use it again"),
        ("pin", "let this rule serve its kind whatever rule is learnt later"),
        ("unpin", "let the cheapest rule serve its kind again"),
        ("undo", "turn off a rule learnt from your runs: its kind goes back to what it had"),
    ):
        command.add_parser(name, help=text).add_argument("id")

    learn = sub.add_parser(
        "learn", help="learn rules from your runs' traces, each verified before it is used"
    )
    learn.add_argument("--json", action="store_true", help="every proposal and decision as JSON")
    learn.add_argument(
        "--replay-tasks", type=int, default=6, help="replay tasks per kind of subtask (default 6)"
    )
    learn.add_argument(
        "--inducer",
        choices=["offline", "llm", "both"],
        default=None,
        help="who proposes rules (default: both when the LLM planner is set, else offline)",
    )

    actions = sub.add_parser("actions", help="your saved actions: save, run, share")
    command = actions.add_subparsers(dest="actions_command", required=True)
    save = command.add_parser("save", help="save what a run did (its report) as an action")
    save.add_argument("name")
    save.add_argument("--from", dest="source", type=Path, required=True, metavar="RUN.json")
    save.add_argument("--subtask", metavar="ID", help="only this subtask (e.g. s2)")
    listing = command.add_parser("list", help="every saved action")
    listing.add_argument("--json", action="store_true")
    show = command.add_parser("show", help="one action whole")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")
    run = command.add_parser("run", help="replay an action on an image, without planning")
    run.add_argument("name")
    run.add_argument("image", type=Path)
    run.add_argument(
        "--mask", action="append", default=[], metavar="NAME=PNG", help="a named mask (repeatable)"
    )
    run.add_argument("-o", "--output", type=Path, required=True, help="OUT.ora, .psd, .png, ...")
    run.add_argument("--report", type=Path, help="write the run report (JSON) here")
    run.add_argument("--threshold", type=float, default=None, help="quality threshold 0..1")
    run.add_argument("--no-traces", action="store_true", help="do not record traces")
    run.set_defaults(alpha=1.0, mode=Mode.FAST_SLOW.value, planner=None)
    export = command.add_parser("export", help="write an action to a file to share")
    export.add_argument("name")
    export.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.json")
    export.add_argument("--force", action="store_true", help="replace FILE.json if it exists")
    imported = command.add_parser("import", help="add an action from a file")
    imported.add_argument("file", type=Path)
    imported.add_argument("--as", dest="rename", metavar="NAME", help="save it under this name")
    imported.add_argument("--replace", action="store_true", help="replace an action of that name")
    command.add_parser("delete", help="delete an action").add_argument("name")
    rename = command.add_parser("rename", help="rename an action")
    rename.add_argument("name")
    rename.add_argument("new_name")


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
        llm = LlmInducer(
            LlmPlanner(settings.llm, get_api_key(settings.llm.base_url)), book.registry
        )
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
