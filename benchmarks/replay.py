"""The replay set rule verification runs on: the generated scenes suite, whose ground
truth is known (`layerpath learn` and the warm-up benchmark hand it to the engine's
`learn`; the engine itself never imports the benchmarks)."""

from __future__ import annotations

import json

import numpy as np

from layerpath.benchmarks.score import score_task
from layerpath.benchmarks.suite import make_suite
from layerpath.engine.execute.executor import Engine
from layerpath.engine.execute.subroutines import RuleTable
from layerpath.engine.learn.induction import Measured, ReplayRun, charged
from layerpath.engine.learn.knowledge import BenchmarkTable
from layerpath.engine.types import CostBasis, EditRequest, Mode, RunResult, SubtaskKind
from layerpath.errors import LayerpathError
from layerpath.tools.registry import Registry


def suite_replay(
    registry: Registry, table: BenchmarkTable, seed: int = 7_919, tasks: int = 40, per_kind: int = 6
) -> ReplayRun:
    """Replays on the generated scenes suite (ground truth known): the tasks with a
    subtask of the kind, run fast-slow with the table's costs (repeatable); a table's
    runs are kept, so the current table runs once per kind."""
    suite = make_suite(seed, tasks)
    kept: dict[tuple[str, SubtaskKind], Measured] = {}

    def replay(rules: RuleTable, kind: SubtaskKind, rule_id: str | None) -> Measured:
        key = (json.dumps(sorted(r.id for r in rules.rules)), kind)
        if key in kept:
            return kept[key]
        chosen = [t for t in suite if any(truth.kind == kind for truth in t.truths)][:per_kind]
        engine = Engine(
            registry,
            rules=rules,
            table=table.copy(),
            costs=CostBasis.TABLE,
        )
        cost, accuracy, applied = 0.0, [], 0
        for task in chosen:
            try:
                result: RunResult = engine.run(
                    EditRequest(task.instruction, task.snapshot(), mode=Mode.FAST_SLOW)
                )
            except LayerpathError:
                accuracy.append(0.0)
                continue
            cost += charged(result, engine.table, registry)
            accuracy.append(score_task(task, result).accuracy)
            applied += sum(
                1 for o in result.outcomes if rule_id and o.solved_by.endswith(f":{rule_id}")
            )
        measured = Measured(cost, float(np.mean(accuracy)) if accuracy else 0.0, applied)
        kept[key] = measured
        return measured

    return replay
