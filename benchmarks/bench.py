"""`layerpath bench SUITE`: fast-slow vs A* vs fast-only on a scene suite with ground truth.

Every task runs once per (mode, alpha). Runs are repeatable: the engine is built with
CostBasis.TABLE (the search charges each call the benchmark table's expected cost, and
learns nothing), so what a run does depends on the seed and the tools, not on the
machine's timing. A tool call that one (mode, alpha) already made on the same inputs is
replayed from a per-task cache with the seconds it took when it ran, so each distinct
call runs once per task however many settings share it; cost is still the wall seconds
of tool execution. Tasks run in parallel worker processes (--jobs).

The report: a markdown table (per mode and alpha: accuracy, tool seconds and calls per
task, the fast path's share and the fallback reasons), the same per complexity bucket
and per subtask kind, a JSON file with every task's scores, and a PNG of the cost /
accuracy Pareto front across alpha for each mode.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from layerpath.benchmarks.score import TaskScore, score_task
from layerpath.benchmarks.suite import BUCKETS, Task, describe, make_suite
from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import CostBasis, EditRequest, Mode, RunResult
from layerpath.errors import BadInput, LayerpathError
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.base import Tool
from layerpath.tools.registry import Registry

SUITES = {
    "scenes": "generated scenes (walls, skies, grass, patterns; objects; signs)",
    "sizes": "the demo edit at camera sizes (wall, tool seconds, peak memory)",
    "checks": "the quality checks on labelled good and bad results in real photos",
    "photos": "edits on real photos at their native size, scored against the truth",
}
WARM_UP_POINTS = (0, 40, 80, 120, 160, 200)


@dataclass
class TaskRun:
    """One task under one (mode, alpha): its scores, cost and how it was solved."""

    task_id: str
    bucket: str
    mode: str
    alpha: float
    kinds: list[str]
    scores: list[float]
    reasons: list[str]
    accuracy: float
    seconds: float
    calls: int
    fast: int  # subtasks solved by a rule (the fast path)
    fallbacks: dict[str, int] = field(default_factory=dict)  # why fast-slow searched
    kind_seconds: dict[str, float] = field(default_factory=dict)  # tool seconds per kind
    error: str | None = None


# --- replaying tool calls across settings ----------------------------------------------


def _fingerprint(value: Any) -> str:
    if isinstance(value, np.ndarray):
        digest = hashlib.sha1(np.ascontiguousarray(value).view(np.uint8).data).hexdigest()
        return f"{value.shape}{value.dtype}{digest}"
    return repr(value)


class ReplayedTool(Tool):
    """A tool whose calls are kept: the same call (inputs, params, subtask words) again
    returns the kept outputs and reports the seconds the first call took."""

    def __init__(self, inner: Tool, kept: dict[str, tuple[Mapping[ArtifactKind, Any], float]]):
        super().__init__(inner.spec, None)
        self.inner = inner
        self.kept = kept

    def availability(self) -> Any:
        return self.inner.availability()

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        key = "|".join(
            [
                self.name,
                json.dumps(params, sort_keys=True, default=str),
                ctx.words(),
                *(f"{k.value}={_fingerprint(v)}" for k, v in sorted(inputs.items())),
            ]
        )
        if key in self.kept:
            outputs, seconds = self.kept[key]
            return ToolResult(outputs, cost=seconds)
        started = time.perf_counter()
        result = self.inner.run(ctx, inputs, params)  # a failure is not kept: it runs again
        seconds = result.cost if result.cost is not None else time.perf_counter() - started
        self.kept[key] = (result.outputs, seconds)
        return ToolResult(result.outputs, cost=seconds)


# --- running tasks ---------------------------------------------------------------------


@dataclass
class Settings:
    suite: str
    seed: int
    tasks: int
    modes: tuple[Mode, ...]
    alphas: tuple[float, ...]


_WORKER: dict[str, Any] = {}


def _worker_setup(settings: Settings) -> None:
    """Each worker process: the suite (rebuilt from the seed: cheaper than sending it),
    the registry with replayed tools, and one engine (it learns nothing, so every mode
    and alpha can share it; they are per request)."""
    kept: dict[str, tuple[Mapping[ArtifactKind, Any], float]] = {}
    registry = Registry(ReplayedTool(t, kept) for t in Registry.from_catalogue())
    _WORKER.update(
        suite=make_suite(settings.seed, settings.tasks),
        kept=kept,
        engine=Engine(registry, costs=CostBasis.TABLE),
        settings=settings,
    )


def run_task(task: Task, engine: Engine, mode: Mode, alpha: float) -> TaskRun:
    """One task under one setting, scored."""
    request = EditRequest(task.instruction, task.snapshot(), alpha=alpha, mode=mode)
    try:
        result = engine.run(request)
    except LayerpathError as exc:  # the planner could not read the instruction
        kinds = [t.kind.value for t in task.truths]
        zero = [0.0] * len(kinds)
        return TaskRun(
            task.id,
            task.bucket,
            mode.value,
            alpha,
            kinds,
            zero,
            [str(exc)] * len(kinds),
            0.0,
            0.0,
            0,
            0,
            error=str(exc),
        )
    scored = score_task(task, result)
    return task_run(task, mode, alpha, result, scored)


def task_run(task: Task, mode: Mode, alpha: float, result: RunResult, scored: TaskScore) -> TaskRun:
    fallbacks = Counter(o.fallback_reason for o in result.outcomes if o.fallback_reason)
    kind_of = {o.subtask.id: o.subtask.kind.value for o in result.outcomes}
    kind_seconds: dict[str, float] = defaultdict(float)
    for call in result.calls:
        if call.subtask_id in kind_of:
            kind_seconds[kind_of[call.subtask_id]] += call.seconds
    return TaskRun(
        task.id,
        task.bucket,
        mode.value,
        alpha,
        [s.kind.value for s in scored.scores],
        [s.score for s in scored.scores],
        [s.reason for s in scored.scores],
        scored.accuracy,
        sum(c.seconds for c in result.calls),
        len(result.calls),
        sum(1 for o in result.outcomes if o.solved_by.startswith(("rule", "action"))),
        dict(fallbacks),
        dict(kind_seconds),
    )


def _run_index(index: int) -> list[TaskRun]:
    """Every setting on task `index` (in a worker); its kept calls go with it."""
    settings: Settings = _WORKER["settings"]
    task: Task = _WORKER["suite"][index]
    engine: Engine = _WORKER["engine"]
    _WORKER["kept"].clear()
    return [
        run_task(task, engine, mode, alpha) for mode in settings.modes for alpha in settings.alphas
    ]


def run_bench(
    settings: Settings, jobs: int, progress: Callable[[int, int], None] | None = None
) -> list[TaskRun]:
    """Every task under every setting, on `jobs` processes; results in task order."""
    count = settings.tasks
    out: list[list[TaskRun]] = [[] for _ in range(count)]
    done = 0
    if jobs <= 1:
        _worker_setup(settings)
        for i in range(count):
            out[i] = _run_index(i)
            done += 1
            if progress:
                progress(done, count)
    else:
        with ProcessPoolExecutor(jobs, initializer=_worker_setup, initargs=(settings,)) as pool:
            futures = {pool.submit(_run_index, i): i for i in range(count)}
            for future in as_completed(futures):
                out[futures[future]] = future.result()
                done += 1
                if progress:
                    progress(done, count)
    return [run for runs in out for run in runs]


# --- the report ------------------------------------------------------------------------


def _rows(runs: Iterable[TaskRun], key: Callable[[TaskRun], Any]) -> dict[Any, list[TaskRun]]:
    groups: dict[Any, list[TaskRun]] = defaultdict(list)
    for run in runs:
        groups[key(run)].append(run)
    return groups


def summary(runs: Sequence[TaskRun]) -> dict[str, Any]:
    subtasks = sum(len(r.kinds) for r in runs)
    reasons: Counter[str] = Counter()
    for r in runs:
        reasons.update(r.fallbacks)
    searched = sum(reasons.values())
    return {
        "tasks": len(runs),
        "accuracy": float(np.mean([r.accuracy for r in runs])),
        "seconds_per_task": float(np.mean([r.seconds for r in runs])),
        "calls_per_task": float(np.mean([r.calls for r in runs])),
        "fast_share": sum(r.fast for r in runs) / subtasks if subtasks else 0.0,
        "fallback_rate": searched / subtasks if subtasks else 0.0,
        "fallback_reasons": {
            "no rule": reasons.get("no rule", 0),
            "rule failed": searched - reasons.get("no rule", 0),
        },
    }


def report(runs: Sequence[TaskRun], settings: Settings) -> dict[str, Any]:
    """Every aggregate the tables show, as data."""
    by_setting = _rows(runs, lambda r: (r.mode, r.alpha))
    kinds: dict[str, dict[str, list[float]]] = defaultdict(dict)  # [accuracy, seconds]
    for (mode, alpha), group in by_setting.items():
        scores: dict[str, list[float]] = defaultdict(list)
        seconds: dict[str, float] = defaultdict(float)
        for r in group:
            for kind, score in zip(r.kinds, r.scores, strict=True):
                scores[kind].append(score)
            for kind, spent in r.kind_seconds.items():
                seconds[kind] += spent
        for kind, values in scores.items():
            per_subtask = seconds[kind] / len(values)
            kinds[kind][f"{mode} a={alpha:g}"] = [float(np.mean(values)), per_subtask]
    return {
        "settings": {
            "suite": settings.suite,
            "seed": settings.seed,
            "tasks": settings.tasks,
            "modes": [m.value for m in settings.modes],
            "alphas": list(settings.alphas),
        },
        "machine": machine(),
        "date": date.today().isoformat(),
        "by_setting": [
            {"mode": mode, "alpha": alpha, **summary(group)}
            for (mode, alpha), group in by_setting.items()
        ],
        "by_bucket": [
            {"mode": mode, "alpha": alpha, "bucket": bucket, **summary(sub)}
            for (mode, alpha), group in by_setting.items()
            for bucket, sub in sorted(_rows(group, lambda r: r.bucket).items())
        ],
        "by_kind": kinds,
        "runs": [asdict(r) for r in runs],
    }


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def table(title: str, header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A markdown table under a title line (none when the title is empty)."""
    lines = [title, ""] if title else []
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows] + [""]


def markdown(data: dict[str, Any]) -> str:
    """The comparison tables."""
    settings = data["settings"]
    lines = [
        f"Suite `{settings['suite']}`, seed {settings['seed']}, {settings['tasks']} tasks; "
        f"{data['machine']}; {data['date']}.",
        "",
    ]

    def fallback(row: dict[str, Any]) -> str:
        if row["mode"] != Mode.FAST_SLOW.value:
            return "-"
        reasons = row["fallback_reasons"]
        return f"{row['fallback_rate']:.0%} ({reasons['no rule']} / {reasons['rule failed']})"

    lines += table(
        "",
        ("mode", "alpha", "accuracy", "tool s / task", "calls / task", "fast path")
        + ("fallback (no rule / rule failed)",),
        (
            (
                row["mode"],
                f"{row['alpha']:g}",
                f"{row['accuracy']:.3f}",
                f"{row['seconds_per_task']:.2f}",
                f"{row['calls_per_task']:.1f}",
                f"{row['fast_share']:.0%}",
                fallback(row),
            )
            for row in data["by_setting"]
        ),
    )
    buckets = [f"{lo}-{hi}" for lo, hi in BUCKETS]
    cells: dict[tuple[str, float], dict[str, str]] = defaultdict(dict)
    for row in data["by_bucket"]:
        cells[(row["mode"], row["alpha"])][row["bucket"]] = (
            f"{row['accuracy']:.2f} / {row['seconds_per_task']:.2f}"
        )
    lines += table(
        "Per complexity bucket (subtasks per task): accuracy / tool seconds per task",
        ["mode", "alpha", *buckets],
        (
            [mode, f"{alpha:g}", *(by.get(b, "-") for b in buckets)]
            for (mode, alpha), by in cells.items()
        ),
    )
    columns = list(next(iter(data["by_kind"].values())).keys()) if data["by_kind"] else []
    lines += table(
        "Per subtask kind: accuracy / tool seconds per subtask",
        ["subtask", *columns],
        (
            [kind]
            + [
                f"{data['by_kind'][kind][c][0]:.2f} / {data['by_kind'][kind][c][1]:.2f}"
                if c in data["by_kind"][kind]
                else "-"
                for c in columns
            ]
            for kind in sorted(data["by_kind"])
        ),
    )
    if data.get("warm_up"):
        lines += table(
            "Warm-up without rule learning (fast-slow, alpha 1, on held-out tasks)",
            ("after tasks", "fast path (no search)", "tool s / task", "accuracy"),
            (
                (
                    str(p["experience"]),
                    f"{p['fast_path']:.0%}",
                    f"{p['tool_seconds']:.2f}",
                    f"{p['accuracy']:.3f}",
                )
                for p in data["warm_up"]
            ),
        )
    return "\n".join(lines).rstrip()


def pareto_front(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The (cost, accuracy) points no other point beats on both (cheaper and better)."""
    front: list[tuple[float, float]] = []
    for cost, accuracy in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or accuracy > front[-1][1]:
            front.append((cost, accuracy))
    return front


def plot(data: dict[str, Any], path: Path) -> None:
    """Cost against accuracy for each mode across alpha, with the overall Pareto front."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5), dpi=120)
    rows = data["by_setting"]
    for mode in dict.fromkeys(r["mode"] for r in rows):
        mine = sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["alpha"])
        xs = [r["seconds_per_task"] for r in mine]
        ys = [r["accuracy"] for r in mine]
        axes.plot(xs, ys, marker="o", label=mode)
        # the line runs from the smallest alpha to the largest: label its two ends
        for r, x, y, below in ((mine[0], xs[0], ys[0], False), (mine[-1], xs[-1], ys[-1], True)):
            axes.annotate(
                f"α={r['alpha']:g}",
                (x, y),
                fontsize=7,
                xytext=(4, -10 if below else 4),
                textcoords="offset points",
            )
    front = pareto_front([(r["seconds_per_task"], r["accuracy"]) for r in rows])
    axes.plot(*zip(*front, strict=True), color="black", linestyle=":", label="Pareto front")
    axes.set_xlabel("tool seconds per task")
    axes.set_ylabel("accuracy (mean subtask score)")
    axes.set_title(f"{data['settings']['suite']}: cost vs quality across α ({data['date']})")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


# --- the command -----------------------------------------------------------------------


def parse_modes(text: str) -> tuple[Mode, ...]:
    try:
        return tuple(Mode(m.strip()) for m in text.split(",") if m.strip())
    except ValueError as exc:
        known = ", ".join(m.value for m in Mode)
        raise BadInput(f"Unknown mode in {text!r}; the modes are {known}.") from exc


def parse_alphas(text: str) -> tuple[float, ...]:
    try:
        alphas = tuple(float(a) for a in text.split(",") if a.strip())
    except ValueError as exc:
        raise BadInput(
            f"alpha must be numbers between 0 and 2, e.g. 0,1,2 (got {text!r})."
        ) from exc
    if not alphas or any(not 0.0 <= a <= 2.0 for a in alphas):
        raise BadInput(f"alpha must be numbers between 0 and 2, e.g. 0,1,2 (got {text!r}).")
    return alphas


def bench(
    suite: str,
    modes: tuple[Mode, ...],
    alphas: tuple[float, ...],
    seed: int,
    tasks: int,
    jobs: int,
    out: Path,
    warm_up: Callable[[], list[dict[str, float]]] | None = None,
) -> dict[str, Any]:
    """Run, report (markdown on stdout, JSON + PNG in `out`), return the data; with the
    rule-learning curve `warm_up` draws (benchmarks/warmup.py) when one is given."""
    if suite not in SUITES:
        raise BadInput(f"Unknown suite {suite!r}; suites: {', '.join(SUITES)}.")
    if tasks < 1:
        raise BadInput("--tasks must be at least 1.")
    settings = Settings(suite, seed, tasks, modes, alphas)
    started = time.perf_counter()

    def progress(done: int, count: int) -> None:
        elapsed = time.perf_counter() - started
        print(f"\r{done}/{count} tasks, {elapsed:.0f} s", end="", file=sys.stderr, flush=True)

    runs = run_bench(settings, jobs, progress)
    print(file=sys.stderr)
    data = report(runs, settings)
    data["tasks"] = [describe(t) for t in make_suite(seed, tasks)]
    if warm_up is not None:
        data["warm_up"] = warm_up()
    data["wall_seconds"] = time.perf_counter() - started
    out.mkdir(parents=True, exist_ok=True)
    (out / f"bench-{suite}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    written = [out / f"bench-{suite}.json"]
    try:
        plot(data, out / f"bench-{suite}.png")
        written.append(out / f"bench-{suite}.png")
    except ImportError:
        print("(no plot: it needs matplotlib, pip install 'layerpath[bench]')", file=sys.stderr)
    print(markdown(data))
    print(f"\n{data['wall_seconds']:.0f} s in all; wrote {', '.join(map(str, written))}")
    return data
