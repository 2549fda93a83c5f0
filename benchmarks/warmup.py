"""The warm-up curve with learning: `layerpath bench --warm-up --learn --out DIR`.

A stream of generated scenes-suite tasks runs fast-slow as a user's runs would (measured
costs: the benchmark table learns each tool's seconds and quality; every attempt goes to
a real SQLite trace store). After 0, 40, ... 200 tasks the offline inducer learns from
the traces (engine/learn/induction.py: proposals verified on a replay set of other tasks, B =
dC% - dQ%) and the table so far is frozen and measured on held-out tasks: the share of
subtasks the fast path solved, the share that fell back to search because a rule's
result failed the checks, tool seconds per task and accuracy against the truth. Two
curves: from the shipped rule table, and from an empty one (the inducer alone). The slow
mode's accuracy on the same held-out tasks is the bar.

Writes DIR/warm-up.json ({"points": [...]} from the shipped table, "from_empty" the
other curve, "slow_accuracy") and DIR/learning.json (every decision, with the point it
was made at); the table on stdout.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from layerpath.benchmarks.bench import WARM_UP_POINTS, TaskRun, machine, run_task, table
from layerpath.benchmarks.replay import suite_replay
from layerpath.benchmarks.suite import make_suite
from layerpath.engine.execute.executor import Engine
from layerpath.engine.execute.subroutines import RuleTable
from layerpath.engine.learn.induction import Decision, learn
from layerpath.engine.learn.traces import TraceStore
from layerpath.engine.types import CostBasis, EditRequest, Mode
from layerpath.errors import LayerpathError
from layerpath.tools.registry import Registry

#: held-out tasks measured at each point
PROBE_TASKS = 20
#: replay tasks per kind of subtask a proposal is verified on
REPLAY_PER_KIND = 4


def _point(experience: int, runs: Sequence[TaskRun]) -> dict[str, float]:
    """fast_path: the share of subtasks the slow path (the search) never ran for, as
    FaSTA* counts it; solved_by_rule: the share a rule solved (the rest of the fast path
    are subtasks reported failed on the rule's own attempt: ground the checks cannot
    vouch for, where searching would not help)."""
    subtasks = sum(len(r.kinds) for r in runs) or 1
    searched = sum(sum(r.fallbacks.values()) for r in runs)
    rule_failed = sum(n for r in runs for reason, n in r.fallbacks.items() if reason != "no rule")
    return {
        "experience": experience,
        "fast_path": 1.0 - searched / subtasks,
        "solved_by_rule": sum(r.fast for r in runs) / subtasks,
        "fallback_rule_failed": rule_failed / subtasks,
        "tool_seconds": sum(r.seconds for r in runs) / max(1, len(runs)),
        "accuracy": sum(r.accuracy for r in runs) / max(1, len(runs)),
    }


def curve(
    seed: int,
    start: str,
    registry: Registry,
    decisions: list[dict[str, Any]],
    points: Sequence[int] = WARM_UP_POINTS,
    probe: int = PROBE_TASKS,
    learning: bool = True,
    replay_per_kind: int = REPLAY_PER_KIND,
) -> list[dict[str, float]]:
    """The warm-up curve from the `start` table ('shipped' or 'empty'); without
    `learning` only the benchmark table learns (measured costs)."""
    rules = RuleTable.load(registry) if start == "shipped" else RuleTable([], registry)
    stream = make_suite(seed, max(points))
    held_out = make_suite(seed + 1_000, probe)
    with tempfile.TemporaryDirectory(prefix="layerpath-warm-up-") as folder:
        store = TraceStore(Path(folder) / "traces.sqlite")
        engine = Engine(registry, rules=rules, traces=store)
        out: list[dict[str, float]] = []
        done = 0
        rejected: set[str] = set()  # (the replay set stays the same: not replayed again)
        for point in points:
            started = time.perf_counter()
            for task in stream[done:point]:
                try:
                    engine.run(EditRequest(task.instruction, task.snapshot(), mode=Mode.FAST_SLOW))
                except LayerpathError:
                    continue
            done = point
            if point and learning:
                replay = suite_replay(registry, engine.table, per_kind=replay_per_kind)

                def keep(decision: Decision, at: int = point) -> None:
                    decisions.append({"start": start, "experience": at, **decision.to_json()})

                accepted, _ = learn(
                    store.attempts(), engine.rules, replay, on_decision=keep, rejected=rejected
                )
                engine.rules = RuleTable([*engine.rules.rules, *accepted], registry)
            frozen = Engine(
                registry,
                rules=RuleTable(engine.rules.rules, registry),
                table=engine.table.copy(),
                costs=CostBasis.TABLE,
            )
            seen = _point(point, [run_task(t, frozen, Mode.FAST_SLOW, 1.0) for t in held_out])
            out.append(seen)
            print(
                f"{start}: after {point} tasks fast path {seen['fast_path']:.0%}, "
                f"rules failed {seen['fallback_rule_failed']:.0%}, accuracy "
                f"{seen['accuracy']:.3f} ({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
        return out


def bench_warm_up(out: Path, seed: int = 0) -> dict[str, Any]:
    registry = Registry.from_catalogue()
    started = time.perf_counter()
    decisions: list[dict[str, Any]] = []
    shipped = curve(seed, "shipped", registry, decisions)
    empty = curve(seed, "empty", registry, decisions)
    slow = Engine(registry, costs=CostBasis.TABLE)
    held_out = make_suite(seed + 1_000, PROBE_TASKS)
    slow_runs = [run_task(t, slow, Mode.SLOW, 1.0) for t in held_out]
    data: dict[str, Any] = {
        "seed": seed,
        "machine": machine(),
        "points": shipped,
        "from_empty": {"points": empty},
        "slow_accuracy": sum(r.accuracy for r in slow_runs) / len(slow_runs),
        "wall_seconds": time.perf_counter() - started,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "warm-up.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    (out / "learning.json").write_text(
        json.dumps({"decisions": decisions}, indent=1), encoding="utf-8"
    )
    try:
        plot(data, out / "warm-up.png")
    except ImportError:
        print("(no plot: it needs matplotlib, pip install 'layerpath[bench]')", file=sys.stderr)
    print(markdown(data))
    return data


def plot(data: dict[str, Any], path: Path) -> None:
    """Fast path share and rule failures against experience, both curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4), dpi=120)
    for label, points, style in (
        ("from the shipped rules", data["points"], "-"),
        ("from an empty table", data["from_empty"]["points"], "--"),
    ):
        xs = [p["experience"] for p in points]
        axes.plot(
            xs, [p["fast_path"] for p in points], style, marker="o", label=f"fast path, {label}"
        )
        axes.plot(
            xs,
            [p["fallback_rule_failed"] for p in points],
            style,
            marker="x",
            label=f"rule failed, searched, {label}",
        )
    axes.set_xlabel("tasks of experience")
    axes.set_ylabel("share of held-out subtasks")
    axes.set_ylim(0, 1.02)
    axes.set_title("Warm-up with rule learning (offline inducer, verified)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def markdown(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for title, points in (
        ("From the shipped rules", data["points"]),
        ("From an empty table (the offline inducer alone)", data["from_empty"]["points"]),
    ):
        lines += table(
            f"{title}: held-out tasks, fast-slow, alpha 1 (slow mode's accuracy "
            f"{data['slow_accuracy']:.3f})",
            (
                "after tasks",
                "fast path (no search)",
                "solved by a rule",
                "rule failed, searched",
                "tool s / task",
                "accuracy",
            ),
            (
                (
                    str(p["experience"]),
                    f"{p['fast_path']:.0%}",
                    f"{p['solved_by_rule']:.0%}",
                    f"{p['fallback_rule_failed']:.0%}",
                    f"{p['tool_seconds']:.2f}",
                    f"{p['accuracy']:.3f}",
                )
                for p in points
            ),
        )
    lines.append(f"{data['wall_seconds']:.0f} s in all")
    return "\n".join(lines)
