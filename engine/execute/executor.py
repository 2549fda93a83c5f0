"""The fast-slow executor (FaSTA* Algorithm 4) and `engine.run`.

plan  -> for each subtask:
    probe features -> pick the cheapest active subroutine rule
    run it, checking quality after every tool
    on failure or no rule: local A* over the subtask's tool subgraph
    emit one StepLayer per executed tool step of the accepted path
    record the attempt as a trace
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from layerpath.engine import events
from layerpath.engine.events import OnEvent
from layerpath.engine.execute.deepsteps import DeepTrack
from layerpath.engine.execute.layers import rejected_layer, step_layers
from layerpath.engine.execute.preview import Preview, preview
from layerpath.engine.execute.probe import probe, regions_touch
from layerpath.engine.execute.search import Node, astar
from layerpath.engine.execute.steps import (
    TOOL_TIMEOUT_S,
    USER_ERRORS,
    BeyondChecking,
    BudgetExceeded,
    Rejected,
    RunLedger,
    State,
    StepRunner,
)
from layerpath.engine.execute.subroutines import Rule, RuleTable
from layerpath.engine.judge.critics import Critic
from layerpath.engine.judge.experts import Earlier
from layerpath.engine.judge.quality import judge
from layerpath.engine.kinds import kind_spec
from layerpath.engine.learn.knowledge import BenchmarkTable, subtask_tools
from layerpath.engine.learn.traces import TraceStore
from layerpath.engine.plan.planner import Plan, Planner, offline_planner, order_subtasks
from layerpath.engine.plan.references import Transcriber, ground, rewrite, traced_words
from layerpath.engine.types import (
    Artifact,
    ArtifactKind,
    CostBasis,
    EditRequest,
    Failure,
    Mode,
    Opinion,
    RunResult,
    StepLayer,
    Subtask,
    SubtaskKind,
    SubtaskOutcome,
    TextBox,
    ToolContext,
)
from layerpath.errors import BadInput, Cancelled, ToolUnavailable, UnsupportedInstruction, shown
from layerpath.kit.imaging import moved_edge
from layerpath.kit.names import user_region
from layerpath.kit.regions import union_box
from layerpath.tools.base import Tool
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SubtaskRun:
    """What solving one subtask shares with the run it belongs to: the request, the plan
    and the subtask's place in it, the run's ledger (memo, calls, budget), where events
    go, whether the user asked to stop, the run's id for the traces, a 16-bit photo's
    picture step by step, and what the subtasks done before it did (their checks run
    again where a later step overlaps them; this one's is added once it is done)."""

    request: EditRequest
    plan: Sequence[Subtask]
    index: int
    ledger: RunLedger
    emit: OnEvent
    cancelled: Callable[[], bool]
    run_id: str
    track: DeepTrack | None = None
    earlier: list[Earlier] | None = None

    @property
    def subtask(self) -> Subtask:
        return self.plan[self.index]


@dataclass
class _Attempt:
    """One try at a subtask: the accepted path (empty on failure) and why it failed."""

    route: str
    path: list[Node]
    failure: str = ""  # why it found no path, in words
    tried: tuple[str, ...] | None = None  # what the search tried, with the scores
    region: str = ""  # the target, when nothing found it (a mask of it would do)

    @property
    def told(self) -> str:
        """The failure as the traces keep it: the reason and what was tried."""
        failed = self.failure or self.tried is not None
        return str(Failure(self.failure, self.tried)) if failed else ""


class Engine:
    """Tools, rules, benchmark table and traces: everything a run needs."""

    def __init__(
        self,
        registry: Registry,
        rules: RuleTable | None = None,
        table: BenchmarkTable | None = None,
        traces: TraceStore | None = None,
        planner: Planner = offline_planner,
        critic: Critic | None = None,
        costs: CostBasis = CostBasis.MEASURED,
        tool_timeout_s: float = TOOL_TIMEOUT_S,
        transcriber: Transcriber | None = None,
    ) -> None:
        self.registry = registry
        self.tool_timeout_s = tool_timeout_s
        self.transcriber = transcriber  # a voice memo's words, through the endpoint
        self.critic = critic
        self.rules = rules or RuleTable.load(registry)
        self.table = table or BenchmarkTable.from_tools(registry)
        self.traces = traces
        self.planner = planner
        self.costs = costs
        if traces is not None:
            self.table.load_observed(traces.tool_stats())

    # --- the run --------------------------------------------------------------------

    def run(
        self,
        request: EditRequest,
        on_event: OnEvent | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> RunResult:
        """Plan the instruction and solve every subtask; events report progress.

        Raises UnsupportedInstruction / PlannerError before any tool runs; later
        problems end single subtasks (their outcome says why), never the whole run.
        """
        if not 0.0 <= request.alpha <= 2.0:
            raise BadInput(
                f"alpha {request.alpha} is outside 0..2 (0 = best quality, 2 = cheapest)."
            )
        with self.registry.settled():  # which tools can run is asked once per run
            return self._run(request, on_event or (lambda e: None), cancel or (lambda: False))

    def plan(self, request: EditRequest, emit: OnEvent) -> Plan:
        """The subtasks a request runs, in order: a previewed plan as confirmed, an
        action's parts in the order they were saved (the order they ran), else the
        planner's, ordered now that the masks are at hand (a removal that touches a
        recoloured region waits for the recolour, so its fill takes the new colour)."""
        if request.plan is not None:  # previewed and confirmed: no second planning
            return Plan(request.plan, (), "previewed")
        if request.action is not None:
            return request.action.plan()
        references = request.references
        if references:  # the planner reads a reference's placeholder, never its words
            request = dataclasses.replace(request, prompt=rewrite(request.prompt, references))
        plan = self.planner(request, emit)
        subtasks = ground(plan.subtasks, references, self.transcriber)
        touch = lambda a, b: regions_touch(a, b, request.snapshot)  # noqa: E731
        return Plan(tuple(order_subtasks(subtasks, touch)), plan.warnings, plan.planner)

    def _run(self, request: EditRequest, emit: OnEvent, cancelled: Callable[[], bool]) -> RunResult:
        started = time.perf_counter()
        run_id = uuid.uuid4().hex[:12]

        plan = self.plan(request, emit)
        self._refuse_undoable(request, plan.subtasks)
        for warning in plan.warnings:
            emit(events.PlanWarning(warning))
        emit(events.PlanReady(plan.subtasks, plan.planner))

        ledger = RunLedger(max_calls=request.max_tool_calls)
        image = Artifact(ArtifactKind.IMAGE, request.snapshot.image, "input")
        track = DeepTrack(request.snapshot.deep)  # a 16-bit photo's picture, step by step
        outcomes: list[SubtaskOutcome] = []
        earlier: list[Earlier] = []  # what the done subtasks did, for the later steps' checks
        was_cancelled = False
        for index in range(len(plan.subtasks)):
            run = SubtaskRun(
                request, plan.subtasks, index, ledger, emit, cancelled, run_id, track, earlier
            )
            try:
                outcome, image = self.solve(run, image)
            except Cancelled as exc:
                was_cancelled = True
                emit(events.RunFailed(str(exc)))
                break
            outcomes.append(outcome)
            emit(events.SubtaskDone(outcome) if outcome.ok else events.SubtaskFailed(outcome))

        result = RunResult(
            request,
            plan.subtasks,
            tuple(outcomes),
            tuple(ledger.calls),
            image.value,
            time.perf_counter() - started,
            plan.warnings,
            was_cancelled,
        )
        if not was_cancelled:
            emit(events.RunDone(result))
        return result

    def _refuse_undoable(self, request: EditRequest, subtasks: Sequence[Subtask]) -> None:
        """Refuse, before any tool runs, a request none of whose subtasks any tool here
        will take on (every tool that could finish it declines, saying why: 'straighten'
        with no angle). A request with some doable subtasks runs; the others fail."""
        reasons = []
        for subtask in subtasks:
            finishers = [t for t in self.registry.available() if subtask.kind in t.spec.subtasks]
            ctx = self._runner(request, subtask, RunLedger(), lambda e: None, lambda: False).ctx
            said = [t.declines(ctx) for t in finishers]
            if not finishers or not all(said):
                return
            reasons.append(f"{subtask.describe()}: {said[0]}")
        if reasons:
            raise UnsupportedInstruction("; ".join(reasons) + ".")

    def solve(self, run: SubtaskRun, image: Artifact) -> tuple[SubtaskOutcome, Artifact]:
        """FaSTA* Algorithm 4 for one subtask, from `image`: rule first, A* when it fails
        or none fits. A step that undoes an earlier subtask fails the consistency expert;
        this one joins `run.earlier` when it is done."""
        request, plan, index, emit = run.request, run.plan, run.index, run.emit
        subtask = run.subtask
        runner = self._runner(request, subtask, run.ledger, emit, run.cancelled, run.earlier or ())
        start: State = {ArtifactKind.IMAGE: image}
        features: Mapping[str, Any] = {}
        attempts: list[_Attempt] = []
        fallback_reason: str | None = None  # why fast-slow fell back to search, if it did
        try:
            features = probe(
                subtask, request.snapshot, image.value, plan, self._text_reader(runner, start)
            )
            rule = (
                self._pick_rule(request, subtask, features)
                if request.action is None
                else request.action.parts[index]  # exactly what the user saved
            )
            fallback = "no rule"
            if rule is not None:
                emit(events.SubtaskStarted(subtask, index, len(plan), rule.route))
                attempts.append(self._run_rule(rule, runner, start))
                fallback = attempts[-1].failure
                if rule.source == "mined" and attempts[-1].path:
                    # a learnt rule that served never changes results silently
                    emit(events.LearntRuleUsed(subtask, rule.id, learnt_rule_words(rule)))
            if (
                not (attempts and attempts[-1].path)
                and request.mode != Mode.FAST
                and request.action is None
            ):
                if request.mode == Mode.FAST_SLOW:
                    fallback_reason = fallback
                    emit(events.FallbackToSearch(subtask, fallback))
                emit(events.SubtaskStarted(subtask, index, len(plan), "search"))
                attempts.append(self._search(request, subtask, runner, start))
            elif not attempts:
                attempts.append(
                    _Attempt("failed", [], "no subroutine rule matches and mode is 'fast'")
                )
        except (*USER_ERRORS, BudgetExceeded, BeyondChecking, ToolUnavailable) as exc:
            attempts.append(_Attempt("failed", [], str(exc)))

        rejected = runner.best_rejected or runner.doubted
        concluded = self._conclude(
            run, attempts, fallback_reason, features, image, rejected, runner.ctx
        )
        run.ledger.memo.clear()  # a later subtask's calls differ by its words: none would match
        accepted = next((a for a in attempts if a.path), None)
        if run.earlier is not None and accepted is not None:
            done = self._earlier(request, subtask, index + 1, accepted.path, image, runner)
            run.earlier.extend([done] if done is not None else [])
        return concluded

    # --- a user's second opinion -----------------------------------------------------

    def alternatives(self, kind: SubtaskKind, tools: Sequence[str], index: int) -> list[str]:
        """Available tools that can stand in for tools[index] of a subtask's path: fed by
        what the earlier tools made, in the same role (finishing the subtask or not), and
        making at least what the replaced tool made."""
        current = self.registry.get(tools[index])
        held = {ArtifactKind.IMAGE}
        for name in tools[:index]:
            held |= set(self.registry.get(name).spec.outputs)
        finishes = kind in current.spec.subtasks
        return [
            t.name
            for t in subtask_tools(self.registry.available(), kind)
            if t.name != current.name
            and set(t.spec.inputs) <= held
            and (kind in t.spec.subtasks) == finishes
            and set(current.spec.outputs) <= set(t.spec.outputs)
        ]

    def rerun(
        self,
        request: EditRequest,
        subtask: Subtask,
        tools: Sequence[str],
        on_event: OnEvent | None = None,
        cancel: Callable[[], bool] | None = None,
        params: Sequence[Mapping[str, Any]] | None = None,
    ) -> SubtaskOutcome:
        """Run one subtask again along a tool path the user chose, starting from
        request.snapshot (the picture the subtask first started from); with `params`
        (one mapping per tool) exactly those parameters, as the step first ran with."""
        emit: OnEvent = on_event or (lambda e: None)
        ledger = RunLedger(max_calls=request.max_tool_calls)
        cancelled = cancel or (lambda: False)
        track = DeepTrack(request.snapshot.deep)  # (a 16-bit photo's steps at 16 bits)
        run = SubtaskRun(
            request, [subtask], 0, ledger, emit, cancelled, uuid.uuid4().hex[:12], track
        )
        runner = self._runner(request, subtask, ledger, emit, cancelled)
        start = Artifact(ArtifactKind.IMAGE, request.snapshot.image, "input")
        rule = Rule(
            id="user",
            subtask=subtask.kind,
            tools=list(tools),
            params=None if params is None else [dict(p) for p in params],
        )
        try:
            attempt = self._run_rule(rule, runner, {ArtifactKind.IMAGE: start})
        except (*USER_ERRORS, BudgetExceeded, BeyondChecking) as exc:
            attempt = _Attempt("failed", [], str(exc))
        outcome, _ = self._conclude(
            run, [attempt], None, {}, start, runner.best_rejected or runner.doubted, runner.ctx
        )
        return outcome

    # --- the steps of Algorithm 4 ---------------------------------------------------

    def preview(self, request: EditRequest) -> Preview:
        """The plan and the tools it is expected to use, nothing run (engine/execute/preview.py)."""
        return preview(self, request)

    def _earlier(
        self,
        request: EditRequest,
        subtask: Subtask,
        number: int,
        path: Sequence[Node],
        start: Artifact,
        runner: StepRunner,
    ) -> Earlier | None:
        """A done subtask as the later steps' consistency expert sees it: where it
        changed the picture and its check, to run again on a later picture (None: it
        changed the picture's size, or nothing; or it is not a local edit a later step
        could undo: a background removal, an adjustment of the whole picture)."""
        if not kind_spec(subtask.kind).kept:
            return None
        pictures = [n.result for n in path if n.result and ArtifactKind.IMAGE in n.result.produced]
        windows = [r.window for r in pictures]
        if not windows or any(w is None for w in windows):
            return None
        where = union_box(windows)
        if where is None:
            return None
        values = {k: a.value for k, a in path[-1].state.items()}
        colours, selection = runner.ctx.colour, request.snapshot.selection

        def recheck(picture: np.ndarray) -> tuple[Opinion, ...]:
            """Its checker's opinions on a later picture (judged as its own kind: the
            checker only, no other expert)."""
            found = judge(
                subtask,
                {ArtifactKind.IMAGE: picture},
                values,
                start.value,
                as_kind=subtask.kind,
                window=where,
                colours=colours,
                selection=selection,
            )
            return found.opinions

        return Earlier(number, subtask, where, recheck)

    def _runner(
        self,
        request: EditRequest,
        subtask: Subtask,
        ledger: RunLedger,
        emit: OnEvent,
        cancelled: Callable[[], bool],
        earlier: Sequence[Earlier] = (),
    ) -> StepRunner:
        snapshot = request.snapshot
        ctx = request.context(subtask, cancelled)
        critic = self.critic
        finders = [t for t in self.registry.available() if t.finds_regions or t.reads_user_region]
        return StepRunner(
            subtask,
            ctx,
            ledger,
            lambda *args, **given: judge(
                *args,
                **given,
                critic=critic,
                colours=ctx.colour,
                selection=snapshot.selection,
                earlier=earlier,
            ),
            request.quality_threshold,
            emit,
            cancelled,
            request.max_retries,
            request.reflect,
            target_fatal=len(finders) <= 1,
            charge=self._charge(subtask.kind),
            timeout_s=self.tool_timeout_s,
            reshape_region=_moved_edge(subtask),
        )

    def _removal_advice(self, subtask: Subtask) -> str:
        """What would help a removal the checks could not vouch for: a tighter mask, the
        brush, and a learnt fill where this install has none."""
        if subtask.kind != SubtaskKind.OBJECT_REMOVAL:
            return ""
        advice = (
            "What would help: a mask painted closer around the object (less to make up), "
            "or painting the rest over with the editor's brush"
        )
        learnt = [t for t in self.registry if t.spec.model and subtask.kind in t.spec.subtasks]
        if learnt and not any(
            t.name in {a.name for a in self.registry.available()} for t in learnt
        ):
            advice += (
                f"; a learnt fill, {learnt[0].spec.label} (`layerpath models download "
                f"{learnt[0].spec.model}`), makes up busy ground the offline fills cannot"
            )
        return advice

    def _charge(self, kind: SubtaskKind) -> Callable[[Tool, float], float] | None:
        """What the search is charged for a call (None: its measured seconds)."""
        if self.costs == CostBasis.MEASURED:
            return None
        return lambda tool, seconds: self.table.prior(tool, kind).cost

    def _text_reader(
        self, runner: StepRunner, start: State
    ) -> Callable[[], tuple[TextBox, ...]] | None:
        """OCR for probing text features, through the runner so the rule or search that
        follows reuses the memoised result instead of reading the text again."""
        if "rapidocr" not in self.registry or self.registry.why_unavailable("rapidocr"):
            return None

        def read() -> tuple[TextBox, ...]:
            result = runner.run(self.registry.get("rapidocr"), start)
            produced = result.produced.get(ArtifactKind.TEXT_BOXES)
            return produced.value if produced is not None else ()

        return read

    def _pick_rule(
        self, request: EditRequest, subtask: Subtask, features: Mapping[str, Any]
    ) -> Rule | None:
        if request.mode not in (Mode.FAST_SLOW, Mode.FAST):
            return None
        return self.rules.select(subtask.kind, features, self.table, request.alpha)

    def _run_rule(self, rule: Rule, runner: StepRunner, start: State) -> _Attempt:
        """Run the rule's tools in order; the first failed quality check ends it."""
        route = rule.route
        node = Node(None, None, dict(start))
        ctx = runner.ctx
        given = user_region(runner.subtask.target, ctx.masks, ctx.selection)
        for index, name in enumerate(rule.tools):
            tool = self.registry.get(name)
            if given is not None and (reason := declines(tool, ctx, given)) is not None:
                return _Attempt(route, [], f"rule {rule.id} failed: {name}: {reason}")
            missing = set(tool.spec.inputs) - set(node.state)
            if missing:
                return _Attempt(
                    route,
                    [],
                    f"rule {rule.id} failed: {name} lacks {', '.join(k.value for k in missing)}",
                )
            result = runner.run(tool, node.state, rule.params_for(index))
            if not result.passed:
                why = result.error or f"quality {result.quality:.2f} below threshold"
                return _Attempt(route, [], f"rule {rule.id} failed: {name}: {why}")
            node = node.child(tool, result, runner.subtask.kind)
        if not node.finished:
            return _Attempt(
                route, [], f"rule {rule.id} failed: its last tool does not finish the subtask"
            )
        return _Attempt(route, node.path())

    def _search(
        self, request: EditRequest, subtask: Subtask, runner: StepRunner, start: State
    ) -> _Attempt:
        available = self.registry.available()
        graph = subtask_tools(available, subtask.kind)
        if not any(subtask.kind in t.spec.subtasks for t in graph):
            raise_unavailable(subtask, self.registry)
        # a tool that says it cannot do this (a finder asked for what it never finds, a
        # crop to a ratio asked for a region, a finder where the user gave the region) is
        # not tried, nor what only it would need
        declined: dict[str, str] = {}
        given = user_region(subtask.target, runner.ctx.masks, runner.ctx.selection)
        for tool in graph:
            reason = declines(tool, runner.ctx, given)
            if reason is None:
                continue
            declined[tool.name] = reason
            if given is not None:
                log.info("%s declined %s: %s", tool.name, subtask.id, reason)
            elif {ArtifactKind.MASK, ArtifactKind.BOXES} & set(tool.spec.outputs):
                runner.not_found[tool.name] = reason  # a finder's: what would find it
            else:
                log.info("%s declined %s: %s", tool.name, subtask.id, reason)
        tools = subtask_tools([t for t in available if t.name not in declined], subtask.kind)
        result = astar(
            tools,
            subtask.kind,
            start,
            runner,
            self.table,
            request.alpha,
            eager=request.mode == Mode.SLOW_EAGER,
        )
        if result.ok:
            return _Attempt("search", result.path)
        if runner.not_found and not runner.found_any:
            return _Attempt(
                "search",
                result.path,
                not_found_message(runner.not_found),
                region=subtask.target or "region",
            )
        if not result.tried and declined:
            # every tool that could finish it said why it cannot: that is the failure
            # ('straighten the horizon' and more: the angle it needs)
            return _Attempt("search", result.path, " ".join(dict.fromkeys(declined.values())))
        return _Attempt("search", result.path, result.reason, tuple(result.tried))

    def _conclude(
        self,
        run: SubtaskRun,
        attempts: list[_Attempt],
        fallback_reason: str | None,
        features: Mapping[str, Any],
        image: Artifact,
        rejected: Rejected | None = None,
        ctx: ToolContext | None = None,
    ) -> tuple[SubtaskOutcome, Artifact]:
        """Emit the accepted path's layers (on failure, the best result the checks turned
        down, hidden), learn from the calls, write the traces. On a 16-bit photo the
        accepted steps' layers carry their 16-bit pixels too (`run.track`)."""
        request, subtask, ledger, emit = run.request, run.subtask, run.ledger, run.emit
        track = run.track
        accepted = next((a for a in attempts if a.path), None)
        if accepted is not None:
            steps: list[StepLayer] = step_layers(subtask, accepted.path)
            if track is not None and ctx is not None:
                steps = track.deepen(steps, accepted.path, ctx)
        else:
            hidden = rejected_layer(subtask, rejected) if rejected is not None else None
            steps = [hidden] if hidden is not None else []
        for step in steps:
            emit(events.StepDone(subtask, step))
        own_calls = [c for c in ledger.calls if c.subtask_id == subtask.id]
        for call in own_calls:
            if call.error is None and self.costs == CostBasis.MEASURED:
                self.table.observe(call.tool, subtask.kind, call.seconds, call.quality)
                if self.traces is not None:
                    self.traces.record_tool(call.tool, subtask.kind, call.seconds, call.quality)
        failed = [a for a in attempts if a.told]
        if self.traces is not None:
            # a rule the checks turned down is recorded with the path it tried
            tried = {r.route: list(r.tools) for r in self.rules.rules}
            for attempt in attempts:
                nodes = attempt.path
                self.traces.record_attempt(
                    run.run_id,
                    subtask.kind,
                    attempt.route,
                    request.mode.value,
                    request.alpha,
                    [n.tool.name for n in nodes if n.tool] or tried.get(attempt.route, []),
                    [n.result.params for n in nodes if n.result],
                    features,
                    sum(n.result.cost for n in nodes if n.result),
                    math.prod(nodes[-1].qualities) if nodes else 0.0,
                    bool(nodes),
                    [attempt.told] if attempt.told else [],
                    traced_words(subtask),
                )
        if accepted is None:
            failure = _failure(
                failed[-1] if failed else None,
                rejected,
                bool(steps),
                subtask,
                self._removal_advice(subtask),
            )
            outcome = SubtaskOutcome(
                subtask,
                "failed",
                (),
                tuple(steps),
                sum(c.seconds for c in own_calls),
                0.0,
                fallback_reason=fallback_reason,
                error=str(failure),
                features=features,
                start_image=image.value,
                opinions=rejected.result.opinions if rejected is not None else (),
                failure=failure,
            )
            return outcome, image
        final = accepted.path[-1]
        quality = math.prod(final.qualities)
        served = next((r for r in self.rules.rules if r.route == accepted.route), None)
        outcome = SubtaskOutcome(
            subtask,
            accepted.route,
            tuple(n.tool.name for n in accepted.path if n.tool),
            tuple(steps),
            sum(c.seconds for c in own_calls),
            quality,
            fallback_reason=fallback_reason,
            features=features,
            start_image=image.value,
            params=tuple(dict(n.result.params) for n in accepted.path if n.result),
            settled=tuple(dict(n.result.settled) for n in accepted.path if n.result),
            opinions=final.result.opinions if final.result is not None else (),
            origin=rule_origin(served) if served is not None else "",
        )
        new_image = final.state.get(ArtifactKind.IMAGE, image)
        return outcome, new_image


def _moved_edge(subtask: Subtask) -> Callable[[np.ndarray], np.ndarray] | None:
    """A found region's edge moved by the pixels the user asked (the panel's Edge
    slider, kept in the subtask as 'edge'), or None when it was not moved."""
    edge = int(subtask.params.get("edge") or 0)
    return (lambda found: moved_edge(found, edge)) if edge else None


def declines(tool: Tool, ctx: ToolContext, given: str | None) -> str | None:
    """Why a tool is not tried for a subtask: its own reason, or, where the user gave the
    region (`given`: their mask's name or 'selection'), that a finder would replace it.
    The user's region is the region on every path: a finder runs only where there is none."""
    if given is not None and tool.finds_regions:
        shown_as = "selection" if given == "selection" else f"mask '{given}'"
        return f"your {shown_as} is the region; no finder replaces it"
    return tool.declines(ctx)


def rule_origin(rule: Rule) -> str:
    """Where a rule comes from, in words: shipped, learnt from the user's runs (when,
    from how many), or the user's action."""
    if rule.source == "mined":
        when = f", accepted {rule.accepted}" if rule.accepted else ""
        return f"rule {rule.id}, learnt from your runs ({rule.support} traces{when})"
    if rule.source == "user":
        return f"your action's rule {rule.id}"
    return f"shipped rule {rule.id}"


def learnt_rule_words(rule: Rule) -> str:
    """What a run says when a learnt rule serves a subtask, and how to go back."""
    return (
        f"{rule_origin(rule)[0].upper()}{rule_origin(rule)[1:]} does this "
        f"{rule.subtask.label}: {' → '.join(rule.tools)}. `layerpath rules undo {rule.id}` "
        "goes back to the rules it had; `--rules shipped` leaves learnt rules out."
    )


def _failure(
    last: _Attempt | None,
    rejected: Rejected | None,
    kept: bool,
    subtask: Subtask,
    advice: str = "",
) -> Failure:
    """Why a subtask failed: the `last` failed attempt's reason and what it tried, and,
    when the checks turned results down, what they found wrong with the best one, and
    that it is `kept` as a hidden layer. A region a finder found that the checks
    doubted is said as such, with what to do instead."""
    produced = rejected.result.produced if rejected is not None else {}
    if (
        rejected is not None
        and rejected.tool.finds_regions
        and ArtifactKind.MASK in produced
        and ArtifactKind.IMAGE not in produced
    ):
        named = shown(subtask.target or "region")
        reason = (
            f"The {named} found in the photo may be the wrong region ({rejected.result.reason}): "
            f"select the {named} (a rough box is enough) or name a mask '{named}'"
        )
        return Failure(reason, kept="the region it found" if kept else "", region=named)
    said = (
        Failure(last.failure, last.tried, region=last.region)
        if last is not None
        else Failure("failed")
    )
    turned_down = by = ""
    if rejected is not None and rejected.result.reason:
        found = rejected.result.reason
        if found.split("; ")[0] not in str(said):  # (not said twice)
            turned_down, by = found, rejected.tool.name
    return dataclasses.replace(
        said,
        turned_down=turned_down,
        by=by,
        helps=advice if rejected is not None else "",
        kept="the best attempt" if kept else "",
    )


def not_found_message(said: Mapping[str, str]) -> str:
    """Why nothing found the target, once: the request's masks (what it has) and what
    would find it (the offline finder's or a detector's advice)."""
    masks = said.get("named_masks", "")
    others = [message for tool, message in said.items() if tool != "named_masks"]
    advice = max(others, key=len) if others else ""
    if masks and advice:
        return masks.split(". Select it")[0] + ". " + advice
    return masks or advice


def raise_unavailable(subtask: Subtask, registry: Registry) -> None:
    """A typed error naming the tools that could do the subtask and why they cannot."""
    candidates = [t for t in registry if subtask.kind in t.spec.subtasks]
    if candidates:
        reasons = "; ".join(f"{t.name}: {registry.why_unavailable(t.name)}" for t in candidates)
        raise ToolUnavailable(f"No tool for {subtask.kind.label} can run here ({reasons}).")
    raise ToolUnavailable(
        f"{subtask.kind.label} needs a model-based tool that this install does not have yet; "
        "the other steps of the instruction still run."
    )
