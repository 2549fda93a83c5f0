"""A* on small synthetic tool graphs (tools built in the test; costs and qualities set by
the test so the expected paths can be worked out by hand)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from layerpath.engine.execute.search import astar, combine
from layerpath.engine.execute.steps import RunLedger, StepRunner
from layerpath.engine.judge.checks.verdict import Verdict
from layerpath.engine.learn.knowledge import BenchmarkTable
from layerpath.engine.types import (
    Artifact,
    ArtifactKind,
    Prior,
    Subtask,
    SubtaskKind,
    ToolContext,
    ToolResult,
    ToolSpec,
)
from layerpath.tools.base import Tool

A = ArtifactKind
KIND = SubtaskKind.OBJECT_REMOVAL


class FakeTool(Tool):
    """A tool whose cost and quality are fixed by the test; it counts its runs."""

    runs: Counter[str] = Counter()

    def __init__(
        self,
        name: str,
        inputs: tuple[ArtifactKind, ...],
        outputs: tuple[ArtifactKind, ...],
        cost: float,
        quality: float,
        finisher: bool,
        retries: int = 0,
    ) -> None:
        super().__init__(
            ToolSpec(
                name=name,
                impl="",
                backend="test",
                description="",
                subtasks=(KIND,) if finisher else (SubtaskKind.OBJECT_SEGMENTATION,),
                inputs=inputs,
                outputs=outputs,
                priors={KIND: Prior(cost, quality)},
                params={"attempt": 0},
                retry_params=tuple({"attempt": i + 1} for i in range(retries)),
            )
        )
        self.cost, self.quality = cost, quality

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        FakeTool.runs[self.name] += 1
        return ToolResult({k: f"{self.name}:{k.value}" for k in self.spec.outputs}, cost=self.cost)


def make_runner(qualities: Mapping[str, float]) -> tuple[StepRunner, RunLedger]:
    """The quality a tool scores comes from `qualities` (else its prior)."""
    ledger = RunLedger()

    def score(
        subtask: Subtask,
        produced: Mapping[ArtifactKind, Any],
        state: Any,
        before: Any,
        as_kind: Any,
        window: Any,
        found: bool,
        **given: Any,
    ) -> Verdict:
        name = next(iter(produced.values())).split(":")[0]
        return Verdict(qualities[name])

    runner = StepRunner(
        Subtask(KIND, "thing", id="s1"), ToolContext(KIND), ledger, score, threshold=0.5
    )
    return runner, ledger


def start() -> dict[ArtifactKind, Artifact]:
    """The search works on symbols here: the fake tools' artifacts are names."""
    return {A.IMAGE: Artifact(A.IMAGE, "input:image", "input")}


def graph() -> list[FakeTool]:
    """image -> {cheap_mask | good_mask} -> mask -> {fast_fill | best_fill} -> image."""
    return [
        FakeTool("cheap_mask", (A.IMAGE,), (A.MASK,), cost=1.0, quality=0.7, finisher=False),
        FakeTool("good_mask", (A.IMAGE,), (A.MASK,), cost=6.0, quality=0.98, finisher=False),
        FakeTool("fast_fill", (A.IMAGE, A.MASK), (A.IMAGE,), cost=1.0, quality=0.6, finisher=True),
        FakeTool("best_fill", (A.IMAGE, A.MASK), (A.IMAGE,), cost=9.0, quality=0.99, finisher=True),
    ]


def path_names(result: Any) -> list[str]:
    return [n.tool.name for n in result.path]


@pytest.fixture(autouse=True)
def reset_runs() -> None:
    FakeTool.runs.clear()


def qualities_from_priors(tools: list[FakeTool]) -> dict[str, float]:
    return {t.name: t.quality for t in tools}


def test_g_is_the_papers_formula() -> None:
    assert combine(4.0, 0.5, 1.0) == pytest.approx(4.0 * 1.5)
    assert combine(4.0, 0.5, 0.0) == pytest.approx(1.5**2)
    assert combine(4.0, 0.5, 2.0) == pytest.approx(16.0)


def test_alpha_moves_the_chosen_path_between_cheap_and_good() -> None:
    tools = graph()
    chosen = {}
    for alpha in (0.0, 2.0):
        runner, _ = make_runner(qualities_from_priors(tools))
        result = astar(tools, KIND, start(), runner, BenchmarkTable.from_tools(tools), alpha)
        chosen[alpha] = path_names(result)
    assert chosen[0.0] == ["good_mask", "best_fill"]  # quality only
    assert chosen[2.0] == ["cheap_mask", "fast_fill"]  # cost only


def test_lazy_runs_fewer_tools_than_eager_and_finds_the_same_path() -> None:
    tools = graph()
    results = {}
    for eager in (False, True):
        FakeTool.runs.clear()
        runner, ledger = make_runner(qualities_from_priors(tools))
        result = astar(
            tools, KIND, start(), runner, BenchmarkTable.from_tools(tools), 1.0, eager=eager
        )
        results[eager] = (path_names(result), len(ledger.calls))
    assert results[False][0] == results[True][0]
    assert results[False][1] < results[True][1]
    assert (
        results[True][1] == 4
    )  # eager ran every neighbour: both masks and both fills (memo for the rest)


def test_memoisation_never_reruns_a_shared_prefix() -> None:
    tools = graph()
    # the cheap fill fails, so both fills are tried after the same mask
    qualities = qualities_from_priors(tools) | {"fast_fill": 0.1}
    runner, ledger = make_runner(qualities)
    result = astar(tools, KIND, start(), runner, BenchmarkTable.from_tools(tools), 2.0)
    assert path_names(result) == ["cheap_mask", "best_fill"]
    assert FakeTool.runs["cheap_mask"] == 1
    # a second search on the same inputs (a rule's fallback, say) reuses everything
    before = sum(FakeTool.runs.values())
    astar(tools, KIND, start(), runner, BenchmarkTable.from_tools(tools), 2.0)
    assert sum(FakeTool.runs.values()) == before


def test_failing_node_is_retried_then_dropped_for_the_next_best_path() -> None:
    tools = graph()
    tools[2] = FakeTool(
        "fast_fill", (A.IMAGE, A.MASK), (A.IMAGE,), cost=1.0, quality=0.6, finisher=True, retries=2
    )
    qualities = qualities_from_priors(tools) | {"fast_fill": 0.2}
    runner, ledger = make_runner(qualities)
    result = astar(tools, KIND, start(), runner, BenchmarkTable.from_tools(tools), 2.0)
    # default params + two retry entries, on each of the two masks it was offered
    fills = [c for c in ledger.calls if c.tool == "fast_fill"]
    assert [c.params["attempt"] for c in fills] == [0, 1, 2, 0, 1, 2]
    assert not any(c.passed for c in fills)
    # dropped: the cheapest path left is the cheap mask with the expensive fill
    assert path_names(result) == ["cheap_mask", "best_fill"]


def test_no_passing_path_reports_what_was_tried() -> None:
    tools = graph()
    qualities = {t.name: 0.1 if t.spec.subtasks == (KIND,) else 0.9 for t in tools}
    runner, _ = make_runner(qualities)
    result = astar(tools, KIND, start(), runner, BenchmarkTable.from_tools(tools), 1.0)
    assert not result.ok
    assert "quality" in result.reason
    assert any(t.startswith("best_fill") for t in result.tried)


def test_node_runs_only_when_popped() -> None:
    tools = graph()
    runner, _ = make_runner(qualities_from_priors(tools))
    astar(tools, KIND, start(), runner, BenchmarkTable.from_tools(tools), 2.0)
    # cost-only search never needs the expensive tools
    assert FakeTool.runs["good_mask"] == 0 and FakeTool.runs["best_fill"] == 0
