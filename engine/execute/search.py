"""Cost-sensitive A* over a subtask's tool subgraph (CoSTA*).

    g(x) = (sum c_i)^alpha * (2 - prod q_i)^(2 - alpha)   over the executed path
    h(x) = min over successors y of (h_C(y) + C(y))^alpha * (2 - Q(y) * h_Q(y))^(2 - alpha)
    f(x) = g(x) + h(x)

C and Q come from the benchmark table; alpha in [0, 2] (0 = quality, 2 = cost).
Lazy (default): a node's tool runs only when the node is popped; the executed node goes
back on the queue with its real f, and is expanded when popped again. Eager (the
CoSTA* paper's Algorithm 1): every neighbour runs as soon as its parent is expanded.
A node failing its quality check is retried along its parameter schedule (StepRunner),
then dropped, so the next-best path comes off the queue.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from layerpath.engine.execute.steps import State, StepResult, StepRunner
from layerpath.engine.learn.knowledge import BenchmarkTable
from layerpath.engine.types import ArtifactKind, SubtaskKind
from layerpath.tools.base import Tool

#: Longest tool path considered for one subtask.
MAX_DEPTH = 5


def combine(cost: float, quality: float, alpha: float) -> float:
    """The cost/quality trade-off C^alpha * (2 - Q)^(2 - alpha)."""
    return float(cost**alpha * (2.0 - quality) ** (2.0 - alpha))


@dataclass(eq=False)
class Node:
    """A path prefix: the tools run so far and the artifacts they hold."""

    tool: Tool | None
    parent: Node | None
    state: State
    costs: tuple[float, ...] = ()
    qualities: tuple[float, ...] = ()
    result: StepResult | None = None
    used: frozenset[str] = frozenset()
    finished: bool = False

    def path(self) -> list[Node]:
        nodes: list[Node] = []
        node: Node | None = self
        while node is not None and node.tool is not None:
            nodes.append(node)
            node = node.parent
        return nodes[::-1]

    def g(self, alpha: float) -> float:
        return combine(sum(self.costs), math.prod(self.qualities), alpha)

    def child(self, tool: Tool, result: StepResult, kind: SubtaskKind) -> Node:
        """The node after `tool` ran here and passed; finished when it completes `kind`."""
        return Node(
            tool,
            self,
            {**self.state, **result.produced},
            self.costs + (result.cost,),
            self.qualities + (result.quality,),
            result,
            self.used | {tool.name},
            kind in tool.spec.subtasks,
        )


@dataclass
class SearchResult:
    """The accepted path (empty when none passed) and what the search did."""

    path: list[Node]
    expanded: int
    executed: int
    reason: str = ""
    tried: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.path)


class Heuristic:
    """h from the benchmark table over abstract states (artifact kinds held, tools used)."""

    def __init__(
        self, tools: Sequence[Tool], kind: SubtaskKind, table: BenchmarkTable, alpha: float
    ) -> None:
        self.tools, self.kind, self.table, self.alpha = list(tools), kind, table, alpha
        self._best = lru_cache(maxsize=None)(self._best_uncached)

    def successors(self, held: frozenset[ArtifactKind], used: frozenset[str]) -> list[Tool]:
        return [
            t
            for t in self.tools
            if t.name not in used
            and set(t.spec.inputs) <= held
            and (
                self.kind in t.spec.subtasks
                or not set(t.spec.outputs) <= held
                or ArtifactKind.IMAGE in t.spec.outputs
            )
        ]

    def _best_uncached(
        self, held: frozenset[ArtifactKind], used: frozenset[str]
    ) -> tuple[float, float] | None:
        """(h_C, h_Q) of the best continuation from this abstract state; None = dead end."""
        best: tuple[float, float, float] | None = None
        if len(used) >= MAX_DEPTH:
            return None
        for tool in self.successors(held, used):
            prior = self.table.prior(tool, self.kind)
            if self.kind in tool.spec.subtasks:
                rest: tuple[float, float] | None = (0.0, 1.0)
            else:
                rest = self._best(held | set(tool.spec.outputs), used | {tool.name})
            if rest is None:
                continue
            cost, quality = rest[0] + prior.cost, prior.quality * rest[1]
            value = combine(cost, quality, self.alpha)
            if best is None or value < best[0]:
                best = (value, cost, quality)
        return None if best is None else (best[1], best[2])

    def h(self, node: Node) -> float:
        if node.finished:
            return 0.0
        rest = self._best(frozenset(node.state), node.used)
        return math.inf if rest is None else combine(rest[0], rest[1], self.alpha)

    def estimate_after(self, node: Node, tool: Tool) -> float:
        """f of the child that would run `tool`, before running it (priors for the tool)."""
        prior = self.table.prior(tool, self.kind)
        finished = self.kind in tool.spec.subtasks
        held = frozenset(node.state) | set(tool.spec.outputs)
        g = combine(
            sum(node.costs) + prior.cost, math.prod(node.qualities) * prior.quality, self.alpha
        )
        if finished:
            return g
        rest = self._best(held, node.used | {tool.name})
        return math.inf if rest is None else g + combine(rest[0], rest[1], self.alpha)


def astar(
    tools: Sequence[Tool],
    kind: SubtaskKind,
    start: Mapping[ArtifactKind, object],
    runner: StepRunner,
    table: BenchmarkTable,
    alpha: float,
    eager: bool = False,
) -> SearchResult:
    """Find the path of tools that completes the subtask with the lowest f."""
    heuristic = Heuristic(tools, kind, table, alpha)
    counter = itertools.count()
    root = Node(None, None, dict(start))
    # queue entries: (f, tie, node, pending tool or None when the node is executed)
    queue: list[tuple[float, int, Node, Tool | None]] = [
        (heuristic.h(root), next(counter), root, None)
    ]
    executed_before = runner.executed
    expanded = 0
    tried: list[str] = []

    def execute(parent: Node, tool: Tool) -> Node | None:
        result = runner.run(tool, parent.state)
        tried.append(f"{tool.name}:{result.quality:.2f}{'' if result.passed else '!'}")
        if not result.passed:
            return None  # dropped after its retry schedule: the next-best path takes over
        return parent.child(tool, result, kind)

    while queue:
        _, _, node, pending = heapq.heappop(queue)
        if pending is not None:  # lazy: run the tool now that its node is cheapest
            child = execute(node, pending)
            if child is not None:
                heapq.heappush(
                    queue, (child.g(alpha) + heuristic.h(child), next(counter), child, None)
                )
            continue
        if node.finished:
            return SearchResult(
                node.path(), expanded, runner.executed - executed_before, tried=tried
            )
        expanded += 1
        for tool in heuristic.successors(frozenset(node.state), node.used):
            if eager:
                child = execute(node, tool)
                if child is not None:
                    heapq.heappush(
                        queue, (child.g(alpha) + heuristic.h(child), next(counter), child, None)
                    )
            else:
                estimate = heuristic.estimate_after(node, tool)
                if math.isfinite(estimate):
                    heapq.heappush(queue, (estimate, next(counter), node, tool))
    reason = "no result passed the quality check" if tried else "no available tool can do this"
    return SearchResult([], expanded, runner.executed - executed_before, reason, tried)
