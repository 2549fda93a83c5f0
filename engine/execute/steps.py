"""Running one tool step: memoised by (tool, input artifacts, params), quality-checked,
retried along the tool's parameter schedule, then given up."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from layerpath.deadline import Abandoned, Overdue, limited
from layerpath.engine import events
from layerpath.engine.judge import reflection
from layerpath.engine.judge.checks.removal import Trial, tried_nearby
from layerpath.engine.judge.checks.texture import foreign
from layerpath.engine.judge.checks.verdict import Opinion, Verdict
from layerpath.engine.judge.experts import objections
from layerpath.engine.judge.reflection import SCHEDULED, NextTry, complaints, next_scheduled
from layerpath.engine.types import (
    Artifact,
    ArtifactKind,
    Box,
    Subtask,
    SubtaskKind,
    ToolCall,
    ToolContext,
    ToolResult,
)
from layerpath.errors import BadInput, Cancelled, LayerpathError, TargetNotFound, ToolFailed
from layerpath.kit.colours import to_lab
from layerpath.kit.imaging import dilate, erode, mask_box, rgb
from layerpath.kit.names import user_region
from layerpath.kit.regions import changed_window, confined, crop, grow_box
from layerpath.tools.base import Tool

log = logging.getLogger(__name__)

State = Mapping[ArtifactKind, Artifact]


class Scorer(Protocol):
    """Judges one step (engine/judge/quality.judge with the run's critic and colours):
    (subtask, produced values, state values, image before, judge-as kind, the window
    outside which the image did not change, whether a finder found its region rather
    than the user giving it; a removal's trial on ground nearby) -> q and what is
    wrong."""

    def __call__(
        self,
        subtask: Subtask,
        produced: Mapping[ArtifactKind, Any],
        state: Mapping[ArtifactKind, Any],
        before: np.ndarray,
        as_kind: SubtaskKind | None,
        window: Box | None,
        found: bool,
        *,
        trial: Callable[[], Trial] | None = None,
    ) -> Verdict: ...


#: how long one tool call may take by default (the tool_timeout_s setting), and how many
#: times that a tool with a model or one made for a GPU gets (loading, a CPU fallback)
TOOL_TIMEOUT_S = 300.0
MODEL_TIMES = 4.0
#: Errors that no other tool or parameter can fix: they end the subtask at once.
USER_ERRORS = (TargetNotFound, BadInput)


class BudgetExceeded(LayerpathError):
    """The run used up its tool-call budget."""


class BeyondChecking(LayerpathError):
    """The checks can vouch for no result of this subtask here, whatever the tool (the
    ground behind an object too varied to say what a fill should show): the subtask
    ends failed at once instead of trying every tool."""


@dataclass(frozen=True, eq=False)
class StepResult:
    """One tool run (or memo hit) with the artifacts it produced."""

    tool: str
    params: Mapping[str, Any]
    produced: Mapping[ArtifactKind, Artifact]
    cost: float
    quality: float
    passed: bool
    error: str | None = None
    window: Box | None = None  # where the produced image may differ from the input
    reason: str = ""  # what the checks found wrong with it, in plain words
    opinions: tuple[Opinion, ...] = ()  # each expert's verdict (engine/judge/experts.py)
    everywhere: bool = False  # the whole picture worked over as one (ToolResult's)
    # what the tool chose for itself from this input (ToolResult's): the same tool run
    # again elsewhere to stand for this result (a LUT's lattice) works the same way
    settled: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Rejected:
    """A finishing step the checks turned down: what it started from and made."""

    tool: Tool
    state: State
    result: StepResult


@dataclass
class RunLedger:
    """What a whole run shares across subtasks: the memo, the call log, the budget."""

    memo: dict[tuple[str, tuple[tuple[str, str], ...], str, str], StepResult] = field(
        default_factory=dict
    )
    calls: list[ToolCall] = field(default_factory=list)
    max_calls: int = 200


def memo_key(
    tool: Tool, state: State, params: Mapping[str, Any], ctx: ToolContext
) -> tuple[str, tuple[tuple[str, str], ...], str, str]:
    """What makes a tool call the same call: the tool, its input artifacts, its params
    and the subtask's words (a tool reads its target from them: 'ball' and 'wall' are
    different masks from the same inputs; and a result's quality is judged for its
    subtask's kind)."""
    inputs = tuple(sorted((k.value, state[k].id) for k in tool.spec.inputs))
    return tool.name, inputs, json.dumps(params, sort_keys=True, default=str), ctx.words()


def _artifact_id(key: tuple[Any, ...], kind: ArtifactKind) -> str:
    return hashlib.sha1(repr((key, kind.value)).encode()).hexdigest()[:16]


class StepRunner:
    """Runs tools for one subtask; every path of that subtask (rule or search) shares it."""

    def __init__(
        self,
        subtask: Subtask,
        ctx: ToolContext,
        ledger: RunLedger,
        scorer: Scorer,
        threshold: float,
        on_event: events.OnEvent = lambda e: None,
        cancelled: Callable[[], bool] = lambda: False,
        max_retries: int = 5,
        reflect: bool = True,
        target_fatal: bool = True,
        charge: Callable[[Tool, float], float] | None = None,
        timeout_s: float = TOOL_TIMEOUT_S,
        reshape_region: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        self.subtask = subtask
        self.ctx = ctx
        self.ledger = ledger
        self.scorer = scorer
        self.threshold = threshold
        self.on_event = on_event
        self.cancelled = cancelled
        self.max_retries = max_retries
        # a failed try's next parameters answer what the experts found (else the
        # tool's fixed retry schedule)
        self.reflect = reflect
        # a target one tool cannot find ends the subtask, unless another tool may find it
        self.target_fatal = target_fatal
        # what each finder said when it could not find the subtask's target
        self.not_found: dict[str, str] = {}
        self.found_any = False  # some step found it (a mask or boxes), whatever came after
        self.executed = 0  # tool executions for this subtask (memo hits excluded)
        # the best finishing step the checks turned down: kept to show, hidden, on failure
        self.best_rejected: Rejected | None = None
        # the best region a finder found that the checks could not vouch for: shown,
        # hidden, when no path passed, so the user sees what was found
        self.doubted: Rejected | None = None
        # the cost the search is charged for a call that took these seconds
        self.charge = charge or (lambda tool, seconds: seconds)
        # how long a call may take (a model tool MODEL_TIMES as long) before it is given up
        self.timeout_s = timeout_s
        # what becomes of a region a step found before it is judged and handed on (the
        # user moved its edge: the executor's runner says so; None: kept as found)
        self.reshape_region = reshape_region

    def run(self, tool: Tool, state: State, params: Mapping[str, Any] | None = None) -> StepResult:
        """Run the tool on the state; while the checks turn its result down, try again
        (at most `max_retries` times, and no more than its retry schedule has entries)
        with the parameters reflection draws from what the experts found, else the next
        entry of its retry schedule. The passing result, or the best one when none
        passes. With `params` (a saved action's), exactly those, once."""
        if params is not None:
            return self._run_once(tool, state, {**tool.spec.param_schedule()[0], **params})
        # as many tries as the tool's fixed schedule has (one retry at least): reflection
        # directs them, it does not add to them
        schedule = tool.spec.param_schedule()
        tries = min(1 + self.max_retries, max(2, len(schedule)))
        current = schedule[0]
        tried = [current]
        result = best = self._run_once(tool, state, current, 1)
        answered: str | None = None  # what the last try, reflection's, answered
        while not result.passed and len(tried) < tries:
            # reflection again only while it helps: after a reflected try that scored no
            # better, or that still shows what it answered, the schedule goes on
            worst = self._worst(result)
            again = answered is None or (result is best and worst != answered)
            following = self._next_try(tool, result, tried, tries, again)
            if following is None:
                break
            answered = None if following.why.startswith(SCHEDULED) else worst
            self.on_event(
                events.Retry(
                    self.subtask, tool.name, result.quality, dict(following.params), following.why
                )
            )
            current = following.params
            tried.append(current)
            result = self._run_once(tool, state, current, len(tried), following.why)
            if result.passed or result.quality > best.quality:
                best = result
        return result if result.passed else best

    def _worst(self, result: StepResult) -> str | None:
        """The worst of what the experts found wrong with a result."""
        found = complaints(objections(result.opinions, self.threshold))
        return found[0][1] if found else None

    def _next_try(
        self,
        tool: Tool,
        result: StepResult,
        tried: list[Mapping[str, Any]],
        tries: int,
        reflecting: bool = True,
    ) -> NextTry | None:
        """Reflection's answer to what the experts found wrong with `result` (its changes
        laid over that try's parameters), else the schedule's next entry."""
        found = objections(result.opinions, self.threshold)
        if self.reflect and reflecting and result.error is None and found:
            answered = reflection.reflect(tool.spec, dict(result.params), found, tried)
            if answered is not None:
                return answered
        return next_scheduled(tool.spec, tried, tries)

    def _trial(
        self,
        tool: Tool,
        ctx: ToolContext,
        params: Mapping[str, Any],
        values: Mapping[ArtifactKind, Any],
    ) -> Callable[[], Trial] | None:
        """For a removal: the same tool and parameters tried on holes of the mask's shape
        in the ground nearby (asked for by the check only where the ground is too varied
        for it to say what belongs in the hole)."""
        after, mask = values.get(ArtifactKind.IMAGE), values.get(ArtifactKind.MASK)
        if self.subtask.kind != SubtaskKind.OBJECT_REMOVAL or not isinstance(mask, np.ndarray):
            return None
        if not isinstance(after, np.ndarray) or mask.shape != after.shape[:2]:
            return None
        quiet = replace(ctx, progress=lambda share: None)

        def fill(picture: np.ndarray, hole: np.ndarray) -> np.ndarray:
            inputs = {**values, ArtifactKind.IMAGE: picture, ArtifactKind.MASK: hole}
            made = tool.run(quiet, {k: inputs[k] for k in tool.spec.inputs}, params)
            return np.asarray(made.outputs[ArtifactKind.IMAGE])

        return lambda: tried_nearby(fill, after, mask.astype(bool))

    def _run_once(
        self,
        tool: Tool,
        state: State,
        params: Mapping[str, Any],
        attempt: int = 1,
        why: str = "",
    ) -> StepResult:
        """One try: the tool called (or its memo), its result judged, the try recorded."""
        key = memo_key(tool, state, params, self.ctx)
        if key in self.ledger.memo:
            return self.ledger.memo[key]
        if self.cancelled():
            raise Cancelled("Cancelled by the user; the steps already done are kept.")
        if len(self.ledger.calls) >= self.ledger.max_calls:
            raise BudgetExceeded(
                f"The run reached its budget of {self.ledger.max_calls} tool calls; "
                "raise the budget or split the instruction."
            )
        self.on_event(events.ToolStarted(self.subtask, tool.name, dict(params)))
        called = self._call(tool, state, params, key)
        judged = _Judged() if called.error is not None else self._judge(tool, state, called)
        return self._record(tool, state, called, judged, attempt, why)

    def _call(
        self, tool: Tool, state: State, params: Mapping[str, Any], key: tuple[Any, ...]
    ) -> _Called:
        """Run the tool on the state within its time limit: what it made (kept within a
        user's mask painted with a margin; a found region as the re-run asks), or the
        error that stopped it in words. A user's error, Ctrl-C or Cancel is raised."""
        started = time.perf_counter()
        limit = self.timeout_s * (MODEL_TIMES if tool.spec.model or tool.spec.needs_gpu else 1)
        given_up = threading.Event()  # told to a tool that checks ctx.cancelled
        ctx = replace(
            self.ctx,
            progress=lambda share: self.on_event(
                events.ToolProgress(self.subtask, tool.name, min(1.0, max(0.0, share)))
            ),
            cancelled=lambda: given_up.is_set() or self.ctx.cancelled(),
        )
        called = _Called(key, params, ctx)
        try:
            values = {k: state[k].value for k in tool.spec.inputs}
            bound = removal_bound(tool, ctx, {k: a.value for k, a in state.items()})
            out = limited(
                limit,
                lambda: tool.run(ctx, values, params),
                given_up.set,
                abandon=self.ctx.cancelled,  # Ctrl-C, Cancel: given up within a second or two
            )
            wrong = _malformed(tool, out, state)
            if wrong is not None:
                raise ToolFailed(f"{tool.name} {wrong}")
            called.reported, called.settled = out.cost, dict(out.settled)
            outputs = dict(out.outputs)
            found = outputs.get(ArtifactKind.MASK)
            if self.reshape_region is not None and isinstance(found, np.ndarray):
                outputs[ArtifactKind.MASK] = self.reshape_region(found)
            made = outputs.get(ArtifactKind.IMAGE)
            before = state[ArtifactKind.IMAGE].value if ArtifactKind.IMAGE in state else None
            if (
                bound is not None
                and isinstance(made, np.ndarray)
                and before is not None
                and made.shape == before.shape
                and bound.shape == made.shape[:2]
            ):
                # (only the window the tool reported can differ: grown a pixel, as below)
                told = None if out.window is None else grow_box(out.window, 1, made.shape)
                outputs[ArtifactKind.IMAGE] = confined(before, made, bound, within=told)
            else:
                called.everywhere = out.everywhere
            called.produced = {k: Artifact(k, v, _artifact_id(key, k)) for k, v in outputs.items()}
            called.window = _image_window(state, outputs, out.window)
        except TargetNotFound as exc:
            if self.target_fatal:
                raise
            called.error = str(exc)
            self.not_found[tool.name] = called.error
        except USER_ERRORS:
            raise
        except Cancelled:
            raise
        except Abandoned as exc:
            raise Cancelled(
                f"Cancelled by the user during {tool.name}; the steps already done are kept."
            ) from exc
        except ToolFailed as exc:
            called.error = str(exc)
        except Overdue:
            log.warning("%s ran past %g s and was given up", tool.name, limit)
            called.error = (
                f"{tool.name} took longer than {limit:g} s and was given up (the "
                "tool_timeout_s setting)"
            )
        except (Exception, SystemExit) as exc:  # a tool bug must not take the host down
            # the reason goes in the run and its report; the traceback with -v
            log.info("tool %s crashed", tool.name, exc_info=True)
            called.error = f"{tool.name} crashed: {type(exc).__name__}: {exc}"
        called.seconds = time.perf_counter() - started
        return called

    def _judge(self, tool: Tool, state: State, called: _Called) -> _Judged:
        """The checks' verdict on what a call made: a finishing step by its subtask's
        kind (a removal with trial fills nearby), a helper step by its own kind."""
        produced = called.produced
        values = {k: a.value for k, a in {**state, **produced}.items()}
        before = state[ArtifactKind.IMAGE].value
        finisher = self.subtask.kind in tool.spec.subtasks
        judge_as = None if finisher or not tool.spec.subtasks else tool.spec.subtasks[0]
        settled = {**called.params, **called.settled}
        try:
            verdict = self.scorer(
                self.subtask,
                {k: a.value for k, a in produced.items()},
                values,
                before,
                judge_as,
                called.window,
                tool.finds_regions,
                trial=self._trial(tool, called.ctx, settled, values) if finisher else None,
            )
        except Exception as exc:  # a result the checks cannot read is not vouched for
            log.info("checking %s's result failed", tool.name, exc_info=True)
            return _Judged(error=f"the checks could not judge {tool.name}'s result: {exc}")
        return _Judged(verdict.score, verdict.reason, verdict.final, verdict.opinions)

    def _record(
        self,
        tool: Tool,
        state: State,
        called: _Called,
        judged: _Judged,
        attempt: int,
        why: str,
    ) -> StepResult:
        """The try as a StepResult: memoised, logged in the run's calls, kept as the best
        turned-down result when it is; a final verdict ends the subtask."""
        error = called.error or judged.error
        quality = judged.quality
        if error is None and {ArtifactKind.MASK, ArtifactKind.BOXES} & set(called.produced):
            self.found_any = True
        # the tool knows better than the clock (a replayed call)
        seconds = called.seconds if called.reported is None else called.reported
        passed = error is None and quality >= self.threshold
        result = StepResult(
            tool.name,
            dict(called.params),
            called.produced,
            self.charge(tool, seconds),
            quality,
            passed,
            error,
            called.window,
            judged.reason,
            judged.opinions,
            called.everywhere,
            dict(called.settled),
        )
        self.ledger.memo[called.key] = result
        if error is None and not passed and self.subtask.kind in tool.spec.subtasks:
            best = self.best_rejected
            if best is None or quality > best.result.quality:
                self.best_rejected = Rejected(tool, state, result)
        elif error is None and not passed and tool.finds_regions:
            doubted = self.doubted
            if doubted is None or quality > doubted.result.quality:
                self.doubted = Rejected(tool, state, result)
        call = ToolCall(
            tool.name, self.subtask.id, seconds, quality, passed, dict(called.params), error,
            attempt, why, judged.opinions,
        )  # fmt: skip
        self.ledger.calls.append(call)
        self.executed += 1
        log.info(
            "%s on %s: q=%.2f %s (%.2fs)",
            tool.name,
            self.subtask.id,
            quality,
            "ok" if passed else "fail",
            seconds,
        )
        if judged.final and not passed:  # (a final verdict's reason names the cause first)
            raise BeyondChecking(f"{judged.reason.split('; ')[0]}, so no other tool was tried")
        return result


@dataclass
class _Called:
    """What one call of a tool gave: its outputs as artifacts, or the error in words."""

    key: tuple[Any, ...]  # its memo key (memo_key)
    params: Mapping[str, Any]
    ctx: ToolContext  # the context the tool ran with (its progress and cancel wired)
    produced: dict[ArtifactKind, Artifact] = field(default_factory=dict)
    window: Box | None = None
    everywhere: bool = False
    reported: float | None = None  # seconds the tool says the work took
    settled: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class _Judged:
    """The checks' verdict on a call's result (all zero when the call failed)."""

    quality: float = 0.0
    reason: str = ""
    final: bool = False
    opinions: tuple[Opinion, ...] = ()
    error: str | None = None


#: a user's mask is drawn tight when more than this share of its edge (the pixels up to
#: EDGE inside it) has colours the ground just outside lacks: the object runs up to the
#: mask's edge (and its antialiased rim past it)
TIGHT, EDGE = 0.25, 3


def removal_bound(
    tool: Tool, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any]
) -> np.ndarray | None:
    """The user's own mask, where a removal's fill must stay inside it: a mask painted
    with a margin of ground around the object (its edge lies on ground) is kept to
    exactly, as GIMP's Heal selection keeps to a selection. None where the region was
    found, not given, or the mask is drawn tight on the object (its edge is the
    object's): there the tool's own margin takes the object's rim."""
    if ctx.subtask != SubtaskKind.OBJECT_REMOVAL or ctx.subtask not in tool.spec.subtasks:
        return None
    mask, image = inputs.get(ArtifactKind.MASK), inputs.get(ArtifactKind.IMAGE)
    if not isinstance(mask, np.ndarray) or not isinstance(image, np.ndarray):
        return None
    if user_region(ctx.target, ctx.masks, ctx.selection) is None:
        return None
    mask = mask.astype(bool)
    window = mask_box(mask, pad=2 * EDGE + 2)
    if window is None or mask.shape != image.shape[:2]:
        return None
    part = crop(mask, window)
    edge = part & ~erode(part, EDGE)
    outside = dilate(part, EDGE) & ~part
    if edge.sum() < 8 or outside.sum() < 8:
        return mask
    lab = to_lab(rgb(crop(image, window)))
    if float(foreign(lab[edge], lab[outside]).mean()) > TIGHT:
        return None
    return mask


def _malformed(tool: Tool, out: object, state: State) -> str | None:
    """What is wrong with a tool's answer (None when it is usable): not a ToolResult, an
    output it promised missing, a picture that is not RGBA bytes, a mask not the
    picture's size. Such an answer fails that attempt, like a tool error."""
    if not isinstance(out, ToolResult) or not isinstance(out.outputs, Mapping):
        return f"returned {type(out).__name__} instead of its results"
    missing = [k.value for k in tool.spec.outputs if k not in out.outputs]
    if missing:
        return f"did not return its {', '.join(missing)}"
    given = state[ArtifactKind.IMAGE].value if ArtifactKind.IMAGE in state else None
    if not isinstance(given, np.ndarray):
        return None  # (a plan worked out on symbols, not pictures: nothing to compare)
    picture = out.outputs.get(ArtifactKind.IMAGE)
    if ArtifactKind.IMAGE in out.outputs and not (
        isinstance(picture, np.ndarray)
        and picture.dtype == np.uint8
        and picture.ndim == 3
        and picture.shape[2] == 4
        and min(picture.shape[:2]) > 0
    ):
        shape = getattr(picture, "shape", None)
        return f"returned a picture that is not RGBA bytes ({type(picture).__name__} {shape})"
    mask = out.outputs.get(ArtifactKind.MASK)
    if ArtifactKind.MASK in out.outputs:
        size = given.shape[:2]
        if not isinstance(mask, np.ndarray) or mask.shape != size:
            shape = getattr(mask, "shape", None)
            return f"returned a mask of shape {shape} for a picture of {size}"
    return None


def _image_window(
    state: State, outputs: Mapping[ArtifactKind, Any], told: Box | None
) -> Box | None:
    """Where a produced image may differ from the input image: the window the tool
    reported (grown by a pixel against rounding at its edge), else what really changed
    (also for a picture worked over as one: the checks judge where it changed); None
    when no same-size image was produced."""
    after = outputs.get(ArtifactKind.IMAGE)
    before = state[ArtifactKind.IMAGE].value if ArtifactKind.IMAGE in state else None
    if not isinstance(after, np.ndarray) or before is None or after.shape != before.shape:
        return None
    if told is not None:
        return grow_box(told, 1, after.shape)
    found = changed_window(before, after)
    return found if found is not None else Box(0, 0, 0, 0)
