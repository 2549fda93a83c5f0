"""Knowledge: Model Description Table, Tool Dependency Graph and Benchmark Table.

All three are derived from the tools' own data (tools/data/catalogue.json): the MDT
is the tool records, the TDG has an edge a->b when outputs(a) meet inputs(b), and the
benchmark table starts from the catalogue priors and moves towards observed runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from layerpath.engine.types import ArtifactKind, Prior, SubtaskKind
from layerpath.tools.base import Tool
from layerpath.tools.registry import Registry

#: Prior used where neither the catalogue nor observations say anything (cold start).
PLACEHOLDER = Prior(cost=1.0, quality=0.8)
#: How many observations the catalogue prior is worth when blending.
PRIOR_WEIGHT = 3.0


def model_description_table(registry: Registry) -> list[dict[str, object]]:
    """The MDT as rows (for `layerpath tools`, reports and the LLM prompt): what each
    tool does, with what, and whether it can run here (else why, and the fix)."""
    rows: list[dict[str, object]] = []
    for t in registry:
        found = t.availability()
        model: dict[str, object] | None = None
        if t.spec.model is not None and t.spec.model in t.models.catalogue:
            status = t.models.status(t.spec.model)
            model = {
                "name": t.spec.model,
                "size": status.spec.size,
                "licence": status.spec.licence,
                "state": status.state.value,
            }
        rows.append(
            {
                "name": t.name,
                "description": t.spec.description,
                "subtasks": [s.value for s in t.spec.subtasks],
                "helps": [s.value for s in t.spec.helps],
                "inputs": [a.value for a in t.spec.inputs],
                "outputs": [a.value for a in t.spec.outputs],
                "backend": t.spec.backend,
                "model": model,
                "requires": list(t.spec.requires),
                "needs_gpu": t.spec.needs_gpu,
                "available": found.ok,
                "unavailable_reason": found.reason,
                "fix": found.fix,
            }
        )
    return rows


def dependency_edges(tools: Iterable[Tool]) -> dict[str, set[str]]:
    """The TDG: a -> b when some output kind of a is an input kind of b."""
    tools = list(tools)
    return {
        a.name: {b.name for b in tools if b is not a and set(a.spec.outputs) & set(b.spec.inputs)}
        for a in tools
    }


def subtask_tools(tools: Iterable[Tool], kind: SubtaskKind) -> list[Tool]:
    """The subtask's tool subgraph: tools that finish it or help it, plus every tool
    that produces a non-image input they need (recursively)."""
    tools = list(tools)
    chosen = [t for t in tools if kind in t.spec.subtasks or kind in t.spec.helps]
    needed = {k for t in chosen for k in t.spec.inputs} - {ArtifactKind.IMAGE}
    while True:
        producers = [t for t in tools if t not in chosen and set(t.spec.outputs) & needed]
        if not producers:
            return chosen
        chosen.extend(producers)
        needed |= {k for t in producers for k in t.spec.inputs} - {ArtifactKind.IMAGE}


@dataclass
class BenchmarkTable:
    """Expected cost (s) and quality per (tool, subtask): catalogue prior blended with
    observed runs, so a cold start works and experience takes over."""

    priors: dict[tuple[str, SubtaskKind], Prior]
    observed: dict[tuple[str, SubtaskKind], tuple[int, float, float]] = field(default_factory=dict)

    @classmethod
    def from_tools(cls, tools: Iterable[Tool]) -> BenchmarkTable:
        return cls({(t.name, k): p for t in tools for k, p in t.spec.priors.items()})

    def copy(self) -> BenchmarkTable:
        """A table of its own, for runs that must not learn into this one."""
        return BenchmarkTable(dict(self.priors), dict(self.observed))

    def prior(self, tool: Tool, kind: SubtaskKind) -> Prior:
        """The blended estimate; a tool used outside its own subtasks (a mask source in
        a removal) falls back to its best-known entry, then to the placeholder."""
        base = self.priors.get((tool.name, kind))
        if base is None:
            own = [p for (name, _), p in self.priors.items() if name == tool.name]
            base = min(own, key=lambda p: p.cost) if own else PLACEHOLDER
        n, cost_sum, quality_sum = self.observed.get((tool.name, kind), (0, 0.0, 0.0))
        if n == 0:
            return base
        weight = PRIOR_WEIGHT + n
        return Prior(
            (base.cost * PRIOR_WEIGHT + cost_sum) / weight,
            (base.quality * PRIOR_WEIGHT + quality_sum) / weight,
        )

    def observe(self, tool: str, kind: SubtaskKind, cost: float, quality: float) -> None:
        n, c, q = self.observed.get((tool, kind), (0, 0.0, 0.0))
        self.observed[(tool, kind)] = (n + 1, c + cost, q + quality)

    def load_observed(
        self, rows: Mapping[tuple[str, SubtaskKind], tuple[int, float, float]]
    ) -> None:
        self.observed.update(rows)
