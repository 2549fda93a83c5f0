"""The plan before it runs: each subtask, the tools expected to do it and about how
long they take, for the panel's Run / Edit preview. Nothing runs: the planner plans,
the rule table (without OCR: probing text would be a tool run) or else the benchmark
table names the likeliest tool path, and the table's costs, scaled to the picture's
size, give the seconds. What then runs is exactly this plan (EditRequest.plan); the
tools may still differ when a rule's check fails and the search takes over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from layerpath.engine.execute.probe import probe
from layerpath.engine.execute.search import combine
from layerpath.engine.learn.knowledge import subtask_tools
from layerpath.engine.plan.planner import Plan
from layerpath.engine.types import ArtifactKind, EditRequest, Subtask, ToolContext
from layerpath.errors import LayerpathError
from layerpath.kit.names import resolve_mask
from layerpath.tools.base import Tool

if TYPE_CHECKING:
    from layerpath.engine.execute.executor import Engine

#: the picture size the catalogue's costs were measured at (about 1 megapixel)
COST_PIXELS = 1_000_000


@dataclass(frozen=True)
class PlannedStep:
    """One subtask as it is expected to run."""

    subtask: Subtask
    tools: tuple[str, ...]  # tool names, in order ('' path: nothing here can do it)
    labels: tuple[str, ...]  # the same in a photographer's words
    seconds: float
    route: str  # 'rule:SR4', 'search', 'action:NAME'
    problem: str = ""  # why nothing here can do it (what would), when `tools` is empty


@dataclass(frozen=True)
class Preview:
    plan: Plan
    steps: tuple[PlannedStep, ...]


def preview(engine: Engine, request: EditRequest) -> Preview:
    """What `engine` would do with the request, without running a tool."""
    plan = engine.plan(request, lambda event: None)
    h, w = request.snapshot.image.shape[:2]
    scale = max(0.25, h * w / COST_PIXELS)
    steps = []
    for index, subtask in enumerate(plan.subtasks):
        if request.action is not None:
            rule = request.action.parts[index]
            tools, route = tuple(rule.tools), rule.route
        else:
            features = probe(subtask, request.snapshot, request.snapshot.image, plan.subtasks)
            rule = engine.rules.select(subtask.kind, features, engine.table, request.alpha)
            ctx = request.context(subtask)
            if rule is not None and all(_may(engine.registry.get(t), ctx) for t in rule.tools):
                tools, route = tuple(rule.tools), rule.route
            else:
                tools, route = _likeliest(engine, request, subtask), "search"
        found = [engine.registry.get(name) for name in tools]
        seconds = sum(engine.table.prior(t, subtask.kind).cost for t in found) * scale
        labels = tuple(t.spec.label or t.name for t in found)
        problem = "" if tools else _problem(engine, request, subtask)
        steps.append(PlannedStep(subtask, tools, labels, seconds, route, problem))
    return Preview(plan, tuple(steps))


def _likeliest(engine: Engine, request: EditRequest, subtask: Subtask) -> tuple[str, ...]:
    """The tool path the search would most likely settle on: the finishing tool best by
    the table at the request's alpha, and for each input it needs the producer best by
    the table among those that can produce it for this target."""
    ctx = request.context(subtask)
    tools = [t for t in subtask_tools(engine.registry.available(), subtask.kind) if _may(t, ctx)]

    def score(tool: Tool) -> float:
        prior = engine.table.prior(tool, subtask.kind)
        return combine(prior.cost, prior.quality, request.alpha)

    def path_to(tool: Tool, depth: int = 0) -> list[Tool] | None:
        needed = [k for k in tool.spec.inputs if k != ArtifactKind.IMAGE]
        path: list[Tool] = []
        for kind in needed:
            makers = [t for t in tools if kind in t.spec.outputs and t is not tool]
            chosen = None
            for maker in sorted(makers, key=score):
                before = path_to(maker, depth + 1) if depth < 3 else None
                if before is not None:
                    chosen = before + [maker]
                    break
            if chosen is None:
                return None
            path += [t for t in chosen if t not in path]
        return path

    finishing = sorted((t for t in tools if subtask.kind in t.spec.subtasks), key=score)
    for tool in finishing:
        before = path_to(tool)
        if before is not None:
            return tuple(t.name for t in [*before, tool])
    return ()


def _problem(engine: Engine, request: EditRequest, subtask: Subtask) -> str:
    """Why no tool path can do the subtask here: what the finders say they cannot find,
    else which tools are missing."""
    ctx = request.context(subtask)
    said = [
        reason
        for tool in subtask_tools(engine.registry.available(), subtask.kind)
        if (reason := tool.declines(ctx)) is not None
    ]
    if said:
        return max(said, key=len)
    return f"No tool for {subtask.kind.label} can run here; Tools lists what to install."


def _may(tool: Tool, ctx: ToolContext) -> bool:
    """Whether the tool could do its part for this target: a finder that never finds it
    declines, the request's masks only serve when one fits (or there is a selection)."""
    if tool.declines(ctx) is not None:
        return False
    if tool.name == "named_masks":
        try:
            resolve_mask(ctx.target, ctx.masks, ctx.selection)
        except LayerpathError:
            return False
    return True


def describe(steps: Sequence[PlannedStep]) -> list[str]:
    """One line per step, for a log: 's1 Region Adjustment 'face': Find it -> ... ~0.8 s'."""
    return [
        f"{s.subtask.id} {s.subtask.describe()}: {' → '.join(s.labels) or 'nothing can do it here'}"
        f" (~{s.seconds:.1f} s)"
        for s in steps
    ]
