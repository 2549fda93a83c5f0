"""`layerpath bench reflection`: the same tasks with no retries, with each tool's fixed
retry schedule, and with reflection (a retry's parameters answering what the experts
found), on the suites with ground truth and on everyday adjustments of real photos.

Per policy: how many tool runs (a tool on one input, with its retries) passed their
first try and within three tries, the tries a run took, the subtasks reported done, and
for the suites with truth the accuracy and the share of done subtasks that are wrong.
The adjustments have no truth; for them the share of the changed pixels the done results
pushed into the clip is measured instead (what the aesthetics expert looks at).
Calls the policies share (a first try) run once per task and are replayed for the
others, with the seconds they took.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from layerpath.benchmarks.bench import ReplayedTool, machine, table
from layerpath.benchmarks.photos import Photo, all_photos
from layerpath.benchmarks.photos_suite import PhotoTask, photo_tasks, score_photo_task
from layerpath.benchmarks.score import score_task
from layerpath.benchmarks.suite import Task, make_suite
from layerpath.engine.execute.executor import Engine
from layerpath.engine.judge.experts import clipped_shares
from layerpath.engine.types import CostBasis, EditRequest, RunResult, Snapshot, ToolCall
from layerpath.tools.registry import Registry

#: (name, retries after the first try, reflection)
POLICIES = (("no retries", 0, False), ("fixed retries", 2, False), ("reflection", 2, True))
#: everyday adjustments a photographer types, on every photo
EVERYDAY = (
    "brighten the photo",
    "brighten the photo a lot",
    "make it warmer",
    "make the colours pop",
    "increase the saturation",
    "sharpen the photo",
    "correct the white balance",
)


@dataclass
class Row:
    """One task (or one edit of a photo) under one policy."""

    suite: str
    task: str
    policy: str
    runs: int  # tool runs: a tool on one input, with its retries
    first_try: int  # of them, passed at the first try
    within: int  # passed at some try
    tries: int  # tries in all
    subtasks: int
    done: int
    scores: list[float] = field(default_factory=list)  # per subtask, against the truth
    wrong_done: int = 0  # done and scored 0
    clipped: float | None = None  # everyday: share of changed pixels pushed into the clip
    seconds: float = 0.0


def tool_runs(calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
    """The calls grouped into tool runs: a first try and the retries after it."""
    runs: list[list[ToolCall]] = []
    for call in calls:
        if call.attempt == 1 or not runs:
            runs.append([call])
        else:
            runs[-1].append(call)
    return runs


def _row(suite: str, task: str, policy: str, result: RunResult) -> Row:
    runs = [r for r in tool_runs(result.calls) if r[0].error is None or len(r) > 1]
    return Row(
        suite,
        task,
        policy,
        len(runs),
        sum(r[0].passed for r in runs),
        sum(any(c.passed for c in r[:3]) for r in runs),
        sum(len(r) for r in runs),
        len(result.outcomes),
        sum(o.ok for o in result.outcomes),
        seconds=sum(c.seconds for c in result.calls),
    )


_WORKER: dict[str, Any] = {}


def _setup() -> None:
    kept: dict[str, Any] = {}
    registry = Registry(ReplayedTool(t, kept) for t in Registry.from_catalogue())
    _WORKER.update(kept=kept, engine=Engine(registry, costs=CostBasis.TABLE))


def _request(instruction: str, snapshot: Snapshot, retries: int, reflect: bool) -> EditRequest:
    return EditRequest(instruction, snapshot, max_retries=retries, reflect=reflect)


def _scene_task(task: Task) -> list[Row]:
    engine: Engine = _WORKER["engine"]
    _WORKER["kept"].clear()
    rows = []
    for policy, retries, reflect in POLICIES:
        result = engine.run(_request(task.instruction, task.snapshot(), retries, reflect))
        row = _row("scenes", task.id, policy, result)
        scored = score_task(task, result)
        row.scores = [s.score for s in scored.scores]
        # a failed subtask leaves the picture as it was, so it scores 0: the zeros of a
        # kind beyond its failed subtasks are done ones
        for kind in {s.kind for s in scored.scores}:
            zeros = sum(s.score == 0 for s in scored.scores if s.kind == kind)
            failed = sum(not o.ok for o in result.outcomes if o.subtask.kind == kind)
            row.wrong_done += max(0, zeros - failed)
        rows.append(row)
    return rows


def _photo_task(task: PhotoTask) -> list[Row]:
    engine: Engine = _WORKER["engine"]
    _WORKER["kept"].clear()
    rows = []
    for policy, retries, reflect in POLICIES:
        snapshot = Snapshot(task.image, task.masks)
        result = engine.run(_request(task.instruction, snapshot, retries, reflect))
        row = _row("photos", task.id, policy, result)
        scored = score_photo_task(task, result)
        row.scores = [s.score for s in scored]
        row.wrong_done = sum(s.score == 0 and s.reported == "done" for s in scored)
        rows.append(row)
    return rows


def _everyday(item: tuple[Photo, str]) -> list[Row]:
    photo, instruction = item
    engine: Engine = _WORKER["engine"]
    _WORKER["kept"].clear()
    image = np.dstack([photo.rgb, np.full(photo.rgb.shape[:2], 255, np.uint8)])
    rows = []
    for policy, retries, reflect in POLICIES:
        result = engine.run(_request(instruction, Snapshot(image), retries, reflect))
        row = _row("everyday", f"{photo.name}: {instruction}", policy, result)
        if result.ok:
            shares = clipped_shares(image, result.image, np.zeros((2, 3), bool))
            row.clipped = float(sum(shares.values()))
        rows.append(row)
    return rows


def _each(jobs: int, work: Any, items: Sequence[Any], label: str) -> list[Row]:
    rows: list[Row] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(max(1, jobs), initializer=_setup) as pool:
        for number, found in enumerate(pool.map(work, items), start=1):
            rows += found
            elapsed = time.perf_counter() - started
            print(f"\r{label}: {number}/{len(items)}, {elapsed:.0f} s", end="", file=sys.stderr)
    print(file=sys.stderr)
    return rows


def summary(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """Per suite and policy: the rates the table shows."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.suite, row.policy), []).append(row)
    out = []
    for (suite, policy), group in groups.items():
        runs = sum(r.runs for r in group)
        subtasks = sum(r.subtasks for r in group)
        done = sum(r.done for r in group)
        scores = [s for r in group for s in r.scores]
        clipped = [r.clipped for r in group if r.clipped is not None]
        out.append(
            {
                "suite": suite,
                "policy": policy,
                "tasks": len(group),
                "tool_runs": runs,
                "first_try": sum(r.first_try for r in group) / max(1, runs),
                "within_3": sum(r.within for r in group) / max(1, runs),
                "tries_per_run": sum(r.tries for r in group) / max(1, runs),
                "subtasks": subtasks,
                "done": done / max(1, subtasks),
                "accuracy": float(np.mean(scores)) if scores else None,
                "wrong_when_done": (
                    sum(r.wrong_done for r in group) / max(1, done) if scores else None
                ),
                "clipped": float(np.mean(clipped)) if clipped else None,
                "tool_seconds_per_task": float(np.mean([r.seconds for r in group])),
            }
        )
    return out


def markdown(data: Mapping[str, Any]) -> str:
    lines = [
        f"Reflection, seed {data['seed']}: {data['scenes']} generated tasks, "
        f"{data['photo_tasks']} photo tasks and {data['everyday']} everyday edits on "
        f"{data['photos']} photos; fast-slow, alpha 1; {data['machine']}; {data['date']}.",
        "",
    ]
    pct = lambda v: "–" if v is None else f"{v:.1%}"  # noqa: E731
    lines += table(
        "",
        ("suite", "policy", "tool runs", "first try", "within 3 tries", "tries / run")
        + ("done", "accuracy", "wrong when done", "clipped (done)", "tool s / task"),
        (
            (
                r["suite"],
                r["policy"],
                str(r["tool_runs"]),
                pct(r["first_try"]),
                pct(r["within_3"]),
                f"{r['tries_per_run']:.2f}",
                pct(r["done"]),
                "–" if r["accuracy"] is None else f"{r['accuracy']:.3f}",
                pct(r["wrong_when_done"]),
                pct(r["clipped"]),
                f"{r['tool_seconds_per_task']:.2f}",
            )
            for r in data["summary"]
        ),
    )
    return "\n".join(lines).rstrip()


def bench_reflection(
    out: Path, seed: int = 0, tasks: int = 120, debian: bool = True, jobs: int = 2
) -> dict[str, Any]:
    """Every suite under every policy; the table on stdout, every row in the JSON."""
    started = time.perf_counter()
    photos = all_photos(out / "photos-cache", debian=debian)
    scenes = make_suite(seed, tasks)
    photo_work = list(photo_tasks(photos, seed))
    everyday = [(p, i) for p in photos for i in EVERYDAY]
    rows = _each(jobs, _scene_task, scenes, "scenes")
    rows += _each(jobs, _photo_task, photo_work, "photos")
    rows += _each(jobs, _everyday, everyday, "everyday")
    data = {
        "suite": "reflection",
        "seed": seed,
        "scenes": len(scenes),
        "photo_tasks": len(photo_work),
        "everyday": len(everyday),
        "photos": len(photos),
        "machine": machine(),
        "date": date.today().isoformat(),
        "summary": summary(rows),
        "rows": [asdict(r) for r in rows],
        "wall_seconds": time.perf_counter() - started,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench-reflection.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(markdown(data))
    return data
