"""A run session: one document's runs, without Qt.

The panel (in the editor and in Krita's docker), the CLI and batch are views over it.
It builds the engine from the settings (the one builder, `engine_for`, with the one
trace store, `user_traces`), runs a request against a Document, places every step
layer in the run's group as it comes, keeps the run's record with the document, makes
a step again (another tool, another amount, another region edge) and saves actions.

Hosts whose document must be touched on one thread (Qt, Krita) run `job(...)` on a
worker and hand each event to `place` and the result to `finish` on their own thread;
everyone else calls `run`, which does all three in turn.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from layerpath.engine import events
from layerpath.engine.execute.deep import sixteen_bit
from layerpath.engine.execute.executor import Engine
from layerpath.engine.execute.preview import Preview
from layerpath.engine.files.io import picture_beneath
from layerpath.engine.files.report import build_report
from layerpath.engine.hosts.document import Document
from layerpath.engine.kinds import kind_spec
from layerpath.engine.learn.actions import Action, action_from_outcomes
from layerpath.engine.learn.rulebook import RuleBook
from layerpath.engine.learn.traces import TraceStore, user_traces
from layerpath.engine.plan.references import Reference
from layerpath.engine.types import (
    ArtifactKind,
    Box,
    EditRequest,
    LayerKind,
    Mode,
    RunResult,
    Snapshot,
    StepLayer,
    Subtask,
    SubtaskOutcome,
    ToolSpec,
)
from layerpath.errors import BadInput, LayerpathError, shown
from layerpath.kit.adjustments import ADJUSTMENTS
from layerpath.kit.regions import grow_box, overlap
from layerpath.settings import Settings
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)

#: what a worker thread runs: (emit an event, asked to stop?) -> RunResult | SubtaskOutcome
Job = Callable[[events.OnEvent, Callable[[], bool]], object]
#: how far a found region's edge may be moved, in pixels either way
EDGE_RANGE = 60
#: the events of a step made again that a host shows (its layers come at the end)
_PROGRESS = (events.ToolStarted, events.ToolProgress)


@dataclass
class Placed:
    """A step layer the session added, with the subtask outcome it belongs to."""

    group: str
    step: StepLayer
    outcome: SubtaskOutcome | None = None


@dataclass(frozen=True)
class Amount:
    """An adjustment step's amount as a slider offers it: its name (with its unit),
    its range and the value it ran with."""

    name: str
    low: float
    high: float
    value: float


@dataclass(frozen=True)
class StepControls:
    """What a step layer lets the user change: the amount of an adjustment, the edge of
    a region the step found (pixels moved so far); each None when the step has none."""

    amount: Amount | None = None
    edge: int | None = None


@dataclass
class _Rerun:
    group: str
    old: SubtaskOutcome
    old_layers: list[str]


@dataclass(frozen=True)
class Remade:
    """The later steps of a run made again after steps of it were hidden, shown or
    deleted: each subtask's outcome before and after, in plan order."""

    group: str
    pairs: tuple[tuple[SubtaskOutcome, SubtaskOutcome], ...]


def step_window(step: StepLayer) -> Box | None:
    """Where a step layer's pixels lie (None: it has none)."""
    if step.pixels is None:
        return None
    x, y = step.offset
    h, w = step.pixels.shape[:2]
    return Box(x, y, x + w, y + h)


def layered(outcome: SubtaskOutcome) -> list[StepLayer]:
    """The steps of an outcome a document holds as layers (those with pixels)."""
    return [s for s in outcome.steps if s.pixels is not None]


def _run_of(
    report: Mapping[str, Any], steps: Sequence[tuple[str, StepLayer]], start: Snapshot
) -> RunResult:
    """A run as a file's record of it tells it (see RunSession.adopt)."""
    plan = tuple(Subtask.from_json(s) for s in _listed(report.get("plan")))
    entries = {str(e.get("id")): e for e in _listed(report.get("subtasks"))}
    outcomes = []
    for subtask in plan:
        entry = entries.get(subtask.id, {})
        outcomes.append(
            SubtaskOutcome(
                subtask,
                str(entry.get("solved_by") or "failed"),
                tuple(str(t) for t in _listed(entry.get("tools"), str)),
                tuple(step for _, step in steps if step.subtask_id == subtask.id),
                float(entry.get("seconds") or 0.0),
                float(entry.get("quality") or 0.0),
                error=str(entry["error"]) if entry.get("error") else None,
                params=tuple(dict(s.get("params") or {}) for s in _listed(entry.get("steps"))),
            )
        )
    request = EditRequest(
        str(report.get("prompt") or ""), start, alpha=float(report.get("alpha") or 1.0)
    )
    return RunResult(request, plan, tuple(outcomes), (), start.image, 0.0)


def _listed(value: object, kind: type = Mapping) -> list[Any]:
    """The items of a record's list that are of `kind` (none when it is not a list)."""
    return [v for v in value if isinstance(v, kind)] if isinstance(value, list) else []


def _recipe(
    outcome: SubtaskOutcome,
) -> tuple[Subtask, tuple[str, ...], tuple[Mapping[str, Any], ...]]:
    return outcome.subtask, tuple(outcome.tools), tuple(outcome.params)


def known_tools(engine: Engine, tools: Sequence[str]) -> None:
    """A clear error when a step names a tool this install does not have (a file made
    elsewhere, or with a newer layerpath)."""
    missing = [t for t in tools if t not in engine.registry]
    if missing:
        raise BadInput(
            f"This step was made with {', '.join(shown(t, 60) for t in missing)}, which "
            "this install of layerpath does not have; it cannot be made again here."
        )


def beneath(
    base: np.ndarray,
    steps: Sequence[tuple[StepLayer, SubtaskOutcome | None, bool]],
    order: Mapping[str, int],
    index: int,
    deep: np.ndarray | None = None,
) -> np.ndarray:
    """The picture beneath a run's `index`-th subtask: its first picture `base` and the
    shown pixel steps (step, its subtask's outcome, shown?) of the subtasks before it;
    at 16 bits with `deep` (the first picture's 16-bit pixels). A step that changed the
    frame (a crop, a border, an upscale) holds the whole picture in its new frame: the
    steps after it lie over that (hidden, the picture beneath it moved into its frame,
    as the document's canvas stays as the step made it)."""
    earlier = [
        (step, seen)
        for step, outcome, seen in steps
        if outcome is not None
        and order.get(outcome.subtask.id, index) < index
        and step.kind == LayerKind.PIXELS
    ]
    picture, deeper = base, deep
    pending: list[StepLayer] = []
    for step, seen in [*earlier, (None, False)]:
        if step is not None and step.canvas is None:
            if seen:
                pending.append(step)
            continue
        if pending:  # (the steps since the last frame, laid over it at once)
            if deeper is not None:
                deeper = picture_beneath(picture, pending, deeper)
            picture = picture_beneath(picture, pending)
            pending = []
        if step is None or step.pixels is None or step.canvas is None:
            continue
        if seen:
            picture = step.pixels
            if deeper is not None:
                deeper = step.deep if step.deep is not None else sixteen_bit(step.pixels)
        else:
            picture = reframed(picture, step.canvas, step.shift)
            if deeper is not None:
                deeper = reframed(deeper, step.canvas, step.shift)
    return picture if deeper is None else deeper


def _same_frame(old: SubtaskOutcome, new: SubtaskOutcome) -> SubtaskOutcome:
    """A step made again that changes the frame must change it as it did (the document's
    canvas is as it made it): one that now crops or grows otherwise is failed, said."""
    frames = [(s.canvas, s.shift) for s in old.steps if s.canvas is not None]
    again = [(s.canvas, s.shift) for s in new.steps if s.canvas is not None]
    if frames == again or not new.ok:
        return new
    return dataclasses.replace(
        new,
        solved_by="failed",
        error="made again from the picture beneath it, it frames the picture otherwise "
        f"({again[0][0] if again else 'no new frame'} instead of {frames[0][0] if frames else 'none'})",
    )


def reframed(picture: np.ndarray, canvas: tuple[int, int], shift: tuple[int, int]) -> np.ndarray:
    """`picture` on a canvas of another size (width, height), moved by `shift` (what a
    crop or a grown canvas does to the layers beneath it); transparent where it does not
    reach."""
    w, h = canvas
    dx, dy = shift
    out = np.zeros((h, w, picture.shape[2]), picture.dtype)
    ph, pw = picture.shape[:2]
    x0, y0, x1, y1 = max(0, dx), max(0, dy), min(w, dx + pw), min(h, dy + ph)
    if x0 < x1 and y0 < y1:
        out[y0:y1, x0:x1] = picture[y0 - dy : y1 - dy, x0 - dx : x1 - dx]
    return out


class RunSession:
    """One document's runs. `engine_factory` replaces the settings' engine (tests, a
    benchmark's stand-in tools); `traces` the settings' trace store."""

    def __init__(
        self,
        document: Document,
        settings: Settings | None = None,
        *,
        engine_factory: Callable[[], Engine] | None = None,
        planner: str | None = None,
        traces: TraceStore | None | bool = True,
    ) -> None:
        self.document = document
        self.settings = settings or Settings()
        self._engine_factory = engine_factory
        self._planner = planner
        self._traces = traces
        self.planner_name = "offline"
        self.group: str | None = None
        self.group_name = ""
        self.last_result: RunResult | None = None
        self.placed: dict[str, Placed] = {}  # every step layer this session added
        self._rerun: _Rerun | None = None
        # a plan shown before it runs (the instruction and the preview), waiting for the
        # user to run it; and, once confirmed, what the preview said would do each step
        self.previewed: tuple[str, Preview] | None = None
        self._expected: dict[str, str] = {}
        self.runs: dict[str, RunResult] = {}  # each run's group -> the run as it stands
        self._hidden_by_checks: set[str] = set()  # re-made steps the checks turned down
        # (group, subtask id) -> how a run's step is made: the subtask, its tools and the
        # parameters each ran with, as it last passed (a step made again that the checks
        # turn down keeps the recipe: showing the earlier step again makes it once more)
        self._recipes: dict[
            tuple[str, str], tuple[Subtask, tuple[str, ...], tuple[Mapping[str, Any], ...]]
        ] = {}
        # a step made again elsewhere (another edge, another tool): where it was, which
        # the later steps must be made again over too
        self._was_at: dict[str, Box] = {}
        self._without_references: set[str] = set()  # reopened runs whose references are gone
        # a run's steps the host keeps live (id of the run's result -> by subtask id),
        # worked out in the run's worker for `finish` to place
        self._live: dict[int, dict[str, Any]] = {}

    # --- the engine --------------------------------------------------------------------

    @property
    def traces(self) -> TraceStore | None:
        """The trace store runs record into (the settings say whether there is one)."""
        if isinstance(self._traces, bool):
            return user_traces(self.settings) if self._traces else None
        return self._traces

    def engine(self) -> Engine:
        """The engine for the settings as they are now (saved settings apply from the
        next run on)."""
        if self._engine_factory is not None:
            return self._engine_factory()
        from layerpath.engine.factory import engine_for

        engine, self.planner_name = engine_for(self.settings, self.traces, self._planner)
        return engine

    def request(
        self,
        prompt: str,
        *,
        alpha: float = 1.0,
        mode: Mode = Mode.FAST_SLOW,
        action: Action | None = None,
        plan: tuple[Subtask, ...] | None = None,
        threshold: float | None = None,
        references: Mapping[str, Reference] | None = None,
    ) -> EditRequest:
        """The request for the document as it is now. An action's objects are the masks
        the document names, or its selection ('this')."""
        snapshot = self.document.snapshot()
        if action is not None:
            selected = ["this"] if snapshot.selection is not None else []
            action = action.on_masks([*snapshot.masks, *selected])
        return EditRequest(
            prompt,
            snapshot,
            alpha=alpha,
            mode=mode,
            quality_threshold=self.settings.quality_threshold if threshold is None else threshold,
            max_retries=self.settings.retries,
            reflect=self.settings.reflection,
            action=action,
            plan=plan,
            references=dict(references or {}),
        )

    # --- a run -------------------------------------------------------------------------

    def job(self, request: EditRequest, group_name: str | None = None) -> Job:
        """Start a run: what a worker runs. Its step layers go into a new group named
        after the instruction (made when the first step arrives)."""
        self.group = None
        self.group_name = shown((group_name or request.prompt).strip(), 200)
        self.last_result = None
        self._rerun = None
        engine = self.engine()
        if request.action is not None:
            self.planner_name = "action"
        keeps_live = getattr(self.document, "keeps_live", False)
        if not keeps_live or request.snapshot.deep is not None:  # (live layers are 8-bit)
            return lambda emit, cancelled: engine.run(request, emit, cancelled)

        def run(emit: events.OnEvent, cancelled: Callable[[], bool]) -> RunResult:
            result = engine.run(request, emit, cancelled)
            if not result.cancelled:  # (worked out here, in the worker: finish places it)
                from layerpath.engine.files.live import live_outcomes

                self._live[id(result)] = live_outcomes(result, engine.registry)
            return result

        return run

    def preview_job(self, request: EditRequest) -> Job:
        """Plan only: the steps, their tools and about how long (nothing runs)."""
        engine = self.engine()
        return lambda emit, cancelled: engine.preview(request)

    def show_preview(self, prompt: str, preview: Preview) -> None:
        """The plan of `prompt` is shown: it waits for the user to run it as it is."""
        self.previewed = (prompt, preview)

    def drop_preview(self) -> None:
        """The shown plan is gone (the user edits the instruction, or a run starts)."""
        self.previewed = None

    def confirm_preview(self) -> tuple[str, tuple[Subtask, ...]] | None:
        """The shown plan, to run exactly as shown (None: none is shown); each step's
        tools as the preview named them wait for the run's plan (expected_tools)."""
        if self.previewed is None:
            return None
        prompt, preview = self.previewed
        self._expected = {s.subtask.id: " → ".join(s.labels) for s in preview.steps}
        return prompt, preview.plan.subtasks

    def expected_tools(self) -> dict[str, str]:
        """Subtask id -> what the confirmed preview said would do it (once, for the run
        that follows the confirmation; empty otherwise). The preview is over."""
        expected, self._expected = self._expected, {}
        self.previewed = None
        return expected

    def place(self, event: object) -> str | None:
        """Take an engine event on the host's thread: a finished step becomes a layer in
        the run's group (the id returned); a finished subtask is tied to its layers."""
        if isinstance(event, events.StepDone):
            if self._rerun is not None:
                group = self._rerun.group
            else:
                if self.group is None:
                    self.group = self.document.add_group(self.group_name)
                group = self.group
            layer = self.document.add_step(group, event.step)
            self.placed[layer] = Placed(group, event.step)
            return layer
        if isinstance(event, (events.SubtaskDone, events.SubtaskFailed)):
            self._tie(event.outcome, self._rerun.group if self._rerun else self.group)
        return None

    def _tie(self, outcome: SubtaskOutcome, group: str | None = None) -> None:
        for placed in self.placed.values():
            if (
                placed.outcome is None
                and placed.step.subtask_id == outcome.subtask.id
                and group in (None, placed.group)
            ):
                placed.outcome = outcome

    def finish(self, result: RunResult) -> str | None:
        """The run is over: keep its record with the document. What went wrong keeping
        it (the run's layers stay either way), or None."""
        self.last_result = result
        live = self._live.pop(id(result), {})
        if self.group is not None:
            self.runs[self.group] = result
            for outcome in result.outcomes:
                if outcome.ok and outcome.tools:
                    self._recipes[(self.group, outcome.subtask.id)] = _recipe(outcome)
        try:
            self.document.record_run(build_report(result, self.planner_name), self.group)
        except LayerpathError as exc:
            return f"could not record the run in the document: {exc}"
        self._go_live(live)
        return None

    def _go_live(self, live: Mapping[str, Any]) -> None:
        """In a host that keeps steps live (Krita), the run's steps that are tone curves
        or only their own change become the host's own live layers (engine/files/live.py),
        which work on whatever lies beneath them after the document is saved and
        reopened, with no layerpath running (`live`: by subtask id)."""
        for layer, placed in list(self.placed.items()):
            outcome = placed.outcome
            if placed.group != self.group or outcome is None or not placed.step.visible:
                continue
            if outcome.subtask.id in live and list(outcome.tools) == [placed.step.tool]:
                try:
                    self.document.make_live(layer, live[outcome.subtask.id])
                except Exception:  # (the step stays the layer of pixels it is)
                    log.warning("could not keep %s live", placed.step.name, exc_info=True)

    def run(
        self,
        request: EditRequest,
        on_event: events.OnEvent | None = None,
        cancel: Callable[[], bool] | None = None,
        group_name: str | None = None,
    ) -> RunResult:
        """A whole run on this thread: layers placed as they come, `on_event` told after."""

        def emit(event: events.Event) -> None:
            self.place(event)
            if on_event is not None:
                on_event(event)

        result = self.job(request, group_name)(emit, cancel or (lambda: False))
        assert isinstance(result, RunResult)
        problem = self.finish(result)
        if problem is not None:
            log.warning("%s", problem)
        return result

    def layers(self, group: str | None = None) -> list[str]:
        """The step layers placed (in one group)."""
        return [k for k, p in self.placed.items() if group is None or p.group == group]

    # --- a step made again -------------------------------------------------------------

    def outcome_of(self, layer: str) -> tuple[Placed, SubtaskOutcome, int]:
        """The finished subtask a step layer belongs to, and the step's place in it."""
        placed = self.placed.get(layer)
        if placed is None or placed.outcome is None or not placed.outcome.ok:
            raise BadInput("Pick a step of a finished subtask first.")
        return placed, placed.outcome, placed.outcome.tools.index(placed.step.tool)

    def rerun_options(self, layer: str) -> list[str]:
        """The other tools that could have made this step."""
        _, outcome, index = self.outcome_of(layer)
        return self.engine().alternatives(outcome.subtask.kind, outcome.tools, index)

    def step_controls(self, layer: str | None, specs: Mapping[str, ToolSpec]) -> StepControls:
        """What the step `layer` lets the user change: an adjustment's amount (not one
        with nothing to choose), a found region's edge; nothing for a step of a subtask
        that failed, or one this session did not add."""
        placed = self.placed.get(layer) if layer else None
        outcome = placed.outcome if placed else None
        if outcome is None or not outcome.ok:
            return StepControls()
        params = outcome.subtask.params
        amount = None
        op = ADJUSTMENTS.get(str(params.get("op")))
        if kind_spec(outcome.subtask.kind).adjustment and op is not None and op.low != op.high:
            value = op.default if params.get("amount") is None else float(params["amount"])
            name = op.name + (f" ({op.unit})" if op.unit else "")
            amount = Amount(name, op.low, op.high, value)
        edge = int(params.get("edge", 0)) if self.finds_region(outcome, specs) else None
        return StepControls(amount, edge)

    @staticmethod
    def finds_region(outcome: SubtaskOutcome, specs: Mapping[str, ToolSpec]) -> bool:
        """Whether a tool of the subtask found a region (a mask came out of it)."""
        return any(t in specs and ArtifactKind.MASK in specs[t].outputs for t in outcome.tools)

    def with_tool(self, layer: str, tool: str) -> tuple[Subtask, list[str]]:
        """The step's subtask and its tools with `tool` in this step's place."""
        _, outcome, index = self.outcome_of(layer)
        tools = list(outcome.tools)
        tools[index] = tool
        return outcome.subtask, tools

    def with_amount(self, layer: str, amount: float) -> tuple[Subtask, list[str]]:
        """An adjustment step's subtask at another amount, its tools unchanged."""
        _, outcome, _ = self.outcome_of(layer)
        if not kind_spec(outcome.subtask.kind).adjustment:
            raise BadInput("Only an adjustment step has an amount to change.")
        op = ADJUSTMENTS.get(str(outcome.subtask.params.get("op")))
        if op is not None and not op.low <= amount <= op.high:
            raise BadInput(f"{op.name} goes from {op.low:g} to {op.high:g}, not {amount:g}.")
        params = {**outcome.subtask.params, "amount": round(amount, 3)}
        return dataclasses.replace(outcome.subtask, params=params), list(outcome.tools)

    def with_edge(
        self, layer: str, pixels: int, specs: Mapping[str, ToolSpec]
    ) -> tuple[Subtask, list[str]]:
        """The step's subtask with the region it found grown (shrunk) by `pixels`."""
        _, outcome, _ = self.outcome_of(layer)
        if not self.finds_region(outcome, specs):
            raise BadInput("This step's subtask has no region to grow or shrink.")
        if abs(pixels) > EDGE_RANGE:
            raise BadInput(f"Move a region's edge by at most {EDGE_RANGE} pixels either way.")
        params = {**outcome.subtask.params, "edge": int(pixels)}
        return dataclasses.replace(outcome.subtask, params=params), list(outcome.tools)

    def start_picture(
        self, group: str, outcome: SubtaskOutcome
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The picture a subtask of a run starts from now, and on a 16-bit photo the same
        at 16 bits: what the run's first picture and the shown steps of the subtasks
        before it make (so a step made again follows the steps hidden beneath it, in the
        frame it works in); the one it first started from where the run is not known
        (None: neither; no 16-bit picture then)."""
        result = self.runs.get(group)
        placed = [(k, p) for k, p in self.placed.items() if p.group == group]
        if result is None:
            return outcome.start_image, None
        order = {o.subtask.id: i for i, o in enumerate(result.outcomes)}
        if outcome.subtask.id not in order:
            return outcome.start_image, None
        steps = [(p.step, p.outcome, self.shown(k)) for k, p in placed]
        first, index = result.request.snapshot, order[outcome.subtask.id]
        deep = None
        if first.deep is not None:
            deep = beneath(first.image, steps, order, index, first.deep)
        return beneath(first.image, steps, order, index), deep

    def rerun_job(
        self, layer: str, subtask: Subtask, tools: list[str], *, alpha: float = 1.0
    ) -> Job | None:
        """Make the layer's subtask again as `subtask` with `tools`, from the picture it
        started from (no new plan); None when that picture was not kept."""
        placed, outcome, _ = self.outcome_of(layer)
        start, deep = self.start_picture(placed.group, outcome)
        if start is None:
            return None
        current = self.document.snapshot()
        request = EditRequest(
            subtask.describe(),
            Snapshot(start, current.masks, current.selection, deep=deep),
            alpha=alpha,
            quality_threshold=self.settings.quality_threshold,
            max_retries=self.settings.retries,
            reflect=self.settings.reflection,
        )
        old = [k for k, p in self.placed.items() if p.outcome is outcome]
        engine = self.engine()
        known_tools(engine, tools)
        self._rerun = _Rerun(placed.group, outcome, old)
        return lambda emit, cancelled: engine.rerun(request, subtask, tools, emit, cancelled)

    def finish_rerun(self, outcome: SubtaskOutcome) -> list[str]:
        """A step made again is over. When it passed, its layers take the old ones'
        places (the old layers hold the new pixels, shown or hidden as the user left
        them, so the steps above stay above) and the run's record keeps the new
        parameters: the ids of the layers that went are returned, and the later steps
        it reaches are to be made again (remake_job). When it did not pass, the new
        attempt's layers are what the engine kept hidden and the old ones stay."""
        rerun, self._rerun = self._rerun, None
        if rerun is None or not outcome.ok:
            return []
        new = [
            k
            for k, p in self.placed.items()
            if k not in rerun.old_layers
            and p.group == rerun.group
            and p.step.subtask_id == outcome.subtask.id
            and p.outcome in (None, outcome)
        ]
        gone = []
        for old, fresh in zip(rerun.old_layers, new, strict=False):  # each in its place
            if (window := step_window(self.placed[old].step)) is not None:
                self._was_at[old] = window
            self.document.replace_step(old, self.placed[fresh].step)
            self.placed[old] = Placed(rerun.group, self.placed[fresh].step)
            self.document.remove(fresh)
            self.placed.pop(fresh)
            gone.append(fresh)
        for layer in rerun.old_layers[len(new) :]:  # (fewer steps now: the rest go)
            self.document.remove(layer)
            self.placed.pop(layer)
            gone.append(layer)
        self._tie(outcome, rerun.group)
        self._remember(rerun.group, outcome)
        return gone

    # --- a run reopened from a file -----------------------------------------------------

    def adopt(
        self,
        group: str,
        report: Mapping[str, Any],
        steps: Sequence[tuple[str, StepLayer]],
        start: Snapshot,
    ) -> RunResult:
        """A run a reopened file keeps (its group, its report, its step layers and the
        picture the layers below the group make) is this session's again: its steps are
        listed with what they let the user change, and are made again when one is
        hidden. Pictures given as references are not in the file: such a run's steps
        are not made again (said when asked). The record is data from a file: one that
        is not what layerpath writes is a clear error, and nothing of it is taken."""
        try:
            result = _run_of(report, steps, start)
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
            raise BadInput(f"The record of the run is not one layerpath wrote ({exc}).") from exc
        by_id = {o.subtask.id: o for o in result.outcomes}
        for layer, step in steps:
            self.placed[layer] = Placed(group, step, by_id.get(step.subtask_id))
        self.runs[group] = result
        for outcome in result.outcomes:
            if outcome.ok and outcome.tools:
                self._recipes[(group, outcome.subtask.id)] = _recipe(outcome)
        if report.get("references"):
            self._without_references.add(group)
        return result

    def forget(self) -> None:
        """Another document: nothing of this one's runs is kept."""
        self.placed.clear()
        self.runs.clear()
        self._hidden_by_checks.clear()
        self._without_references.clear()
        self._recipes.clear()
        self._was_at.clear()
        self.group, self.last_result, self._rerun, self.previewed = None, None, None, None

    # --- the later steps made again when steps are hidden -----------------------------

    def layers_of(self, outcome: SubtaskOutcome) -> list[str]:
        """The step layers of one subtask, bottom to top."""
        return [k for k, p in self.placed.items() if p.outcome is outcome]

    def reorder_job(self, group: str, order: Sequence[str]) -> Job | None:
        """The run's step layers now lie in `order` (ids, bottom first), moved in the
        editor's Layers dock or Krita's: its subtasks apply in the order of their layers
        from now on, and each from the first one out of its place is made again over
        the steps now beneath it (the checks judge them again). None when the order is
        the run's. A run that changes the picture's frame keeps its order (a clear
        error: its frame came from the steps in theirs)."""
        result = self.runs.get(group)
        if result is None:
            return None
        placed = {k: p for k, p in self.placed.items() if p.group == group}
        moved: list[SubtaskOutcome] = []
        for layer in order:
            outcome = placed[layer].outcome if layer in placed else None
            if outcome is not None and all(o is not outcome for o in moved):
                moved.append(outcome)
        now = [*moved, *(o for o in result.outcomes if all(o is not m for m in moved))]
        if all(a is b for a, b in zip(now, result.outcomes, strict=True)):
            return None
        if any(p.step.canvas is not None for p in placed.values()):
            raise BadInput(
                "This run crops or grows the picture: its steps keep their order, as the "
                "frame came from them in theirs. Move the layers back, or run the steps "
                "again in the order you want."
            )
        first = next(
            i for i, (a, b) in enumerate(zip(now, result.outcomes, strict=True)) if a is not b
        )
        plan = tuple(o.subtask for o in now)
        self.runs[group] = dataclasses.replace(result, outcomes=tuple(now), plan=plan)
        if self.last_result is result:
            self.last_result = self.runs[group]
        try:
            report = dict(build_report(self.runs[group], self.planner_name))
            self.document.record_run(report, group)
        except LayerpathError as exc:
            log.warning("could not record the new order in the document: %s", exc)
        return self.remake_job(list(placed), start=first)

    def remake_job(self, changed: Sequence[str], start: int | None = None) -> Job | None:
        """After the step layers `changed` (of one run) were hidden, shown or deleted:
        the later steps of their run that what changed reaches, made again from the
        picture the shown steps below them make now, with the tools and parameters they
        last passed with (the checks judge them again). None when no later step is
        reached. A clear error when the run cannot be made again this way (its
        references are gone, or a step names a tool this install lacks). On a 16-bit
        photo the steps are made again at 16 bits, from the 16-bit picture beneath them.
        Past a crop, a border or an upscale, the steps work on the picture in its new
        frame; the frame step made again must frame it as before (_same_frame). With
        `start` (the steps moved: reorder_job), every step from that one on is made
        again, wherever it lies."""
        groups = {self.placed[k].group for k in changed if k in self.placed}
        if len(groups) != 1:
            return None
        group = groups.pop()
        result = self.runs.get(group)
        if result is None:  # (the run is not over)
            return None
        if group in self._without_references:
            raise BadInput(
                "This run used reference pictures, which the file does not keep: hiding "
                "one of its steps hides only that layer; the later steps keep what they made."
            )
        placed = {k: p for k, p in self.placed.items() if p.group == group}
        order = {o.subtask.id: i for i, o in enumerate(result.outcomes)}
        firsts = [
            order[p.outcome.subtask.id]
            for k in changed
            if (p := placed.get(k)) and p.outcome and p.outcome.subtask.id in order
        ]
        if not firsts and start is None:
            return None
        later = [
            (o, self._recipes[(group, o.subtask.id)])
            for o in result.outcomes[min(firsts) + 1 if start is None else start :]
            if (group, o.subtask.id) in self._recipes
        ]
        if not later:
            return None
        shown = {k: self.shown(k) for k in placed}
        reach = [w for k in changed if k in placed and (w := step_window(placed[k].step))]
        reach += [self._was_at.pop(k) for k in changed if k in self._was_at]
        if start is not None:  # (moved: everything beneath a moved step may differ)
            h, w = result.request.snapshot.image.shape[:2]
            reach = [Box(0, 0, w, h)]
        engine = self.engine()
        for _, (_, tools, _) in later:
            known_tools(engine, tools)
        finders = {t.name for t in engine.registry if t.finds_regions}
        snapshot = result.request.snapshot
        shape = snapshot.image.shape

        def job(emit: events.OnEvent, cancelled: Callable[[], bool]) -> Remade:
            steps = {k: p.step for k, p in placed.items()}
            dirty = list(reach)  # where the picture beneath a later step may differ
            pairs = []
            for outcome, (subtask, tools, params) in later:
                ids = [k for k, p in placed.items() if p.outcome is outcome]
                windows = [w for k in ids if (w := step_window(steps[k]))]
                reached = (
                    finders & set(tools)
                    or not windows
                    or any(
                        overlap(grow_box(w, max(w.width, w.height), shape), d) > 0
                        for w in windows
                        for d in dirty
                    )
                )
                if not reached or cancelled():
                    continue
                below = [(steps[k], p.outcome, shown[k]) for k, p in placed.items()]
                index = order[outcome.subtask.id]
                start = beneath(snapshot.image, below, order, index)
                deep = None  # (a 16-bit photo's: its steps are made again at 16 bits)
                if snapshot.deep is not None:
                    deep = beneath(snapshot.image, below, order, index, snapshot.deep)
                request = dataclasses.replace(
                    result.request,
                    prompt=subtask.describe(),
                    snapshot=dataclasses.replace(snapshot, image=start, deep=deep),
                    action=None,
                    plan=None,
                )
                made = engine.rerun(
                    request,
                    subtask,
                    tools,
                    lambda e: emit(e) if isinstance(e, _PROGRESS) else None,
                    cancelled,
                    params=params if len(params) == len(tools) else None,
                )
                made = _same_frame(outcome, made)
                pairs.append((outcome, made))
                for k, step in zip(ids, layered(made), strict=False):
                    steps[k] = step
                    if (w := step_window(step)) is not None:
                        dirty.append(w)
                dirty.extend(windows)
            return Remade(group, tuple(pairs))

        return job

    def finish_remake(self, remade: Remade) -> list[str]:
        """The later steps made again are in: each layer holds its new pixels, in its
        place, shown or hidden as the user left it. A step the checks turn down now
        keeps its layers, hidden (its best attempt, where there is one), and is made
        again from its recipe the next time: it is shown again once it passes. What each
        turned-down step's checks found is returned, in plain words. (A remake of a run
        this session no longer holds, another document's, is let go.)"""
        result = self.runs.get(remade.group)
        if result is None:
            return []
        said = []
        for old, new in remade.pairs:
            ids = self.layers_of(old)
            fresh = layered(new)
            for index, layer in enumerate(ids):  # each in its place
                step = fresh[index] if index < len(fresh) else self.placed[layer].step
                if index < len(fresh):
                    self.document.replace_step(layer, step)
                self.placed[layer] = Placed(remade.group, step, new)
            for step in fresh[len(ids) :]:  # (more steps now: on top of the group)
                layer = self.document.add_step(remade.group, step)
                self.placed[layer] = Placed(remade.group, step, new)
            for layer in self.layers_of(new):
                if not new.ok and self.shown(layer):
                    self.document.set_visible(layer, False)
                    self._hidden_by_checks.add(layer)
                elif new.ok and layer in self._hidden_by_checks:
                    self.document.set_visible(layer, True)
                    self._hidden_by_checks.discard(layer)
            if new.ok:
                self._recipes[(remade.group, new.subtask.id)] = _recipe(new)
            else:
                why = new.failure.plain() if new.failure is not None else str(new.error)
                said.append(f"{new.subtask.describe()} no longer passes its check: {why}")
            result = dataclasses.replace(
                result, outcomes=tuple(new if o is old else o for o in result.outcomes)
            )
        if self.last_result is self.runs[remade.group]:
            self.last_result = result
        self.runs[remade.group] = result
        return said

    def shown(self, layer: str) -> bool:
        """Whether a step layer is shown now (a deleted one is not)."""
        try:
            return self.document.is_visible(layer)
        except LayerpathError:  # (deleted)
            return False

    def abandon(self) -> None:
        """A run or re-run that ended in an error: nothing is waiting any more."""
        self._rerun = None

    def newest_layer(self, outcome: SubtaskOutcome) -> str | None:
        found = [k for k, p in self.placed.items() if p.outcome is outcome]
        return found[-1] if found else None

    def _remember(self, group: str, outcome: SubtaskOutcome) -> None:
        """The run of `group` as it stands after a step was made again, kept with the
        document (the report, and in Krita the .kra), the new parameters with it."""
        result = self.runs.get(group)
        if result is None and self.group == group:
            result = self.last_result
        if result is None or not any(o.subtask.id == outcome.subtask.id for o in result.outcomes):
            return
        outcomes = tuple(
            o if o.subtask.id != outcome.subtask.id else outcome for o in result.outcomes
        )
        plan = tuple(s if s.id != outcome.subtask.id else outcome.subtask for s in result.plan)
        now = dataclasses.replace(result, outcomes=outcomes, plan=plan)
        if self.last_result is result:
            self.last_result = now
        self.runs[group] = now
        self._recipes[(group, outcome.subtask.id)] = _recipe(outcome)
        report: dict[str, Any] = dict(build_report(now, self.planner_name))
        report["made_again"] = {
            "subtask": outcome.subtask.id,
            "params": dict(outcome.subtask.params),
        }
        try:
            self.document.record_run(report, group)
        except LayerpathError as exc:
            log.warning("could not record the change in the document: %s", exc)

    # --- actions -----------------------------------------------------------------------

    @staticmethod
    def book() -> RuleBook:
        """The rule book (its registry only names the tools an action may use)."""
        return RuleBook(Registry.from_catalogue())

    def save_action(self, layer: str, name: str) -> Action:
        """Keep the step's subtask, tool path and parameters as a named action."""
        _, outcome, _ = self.outcome_of(layer)
        action = action_from_outcomes(name, [outcome])
        self.book().save_action(action)
        return action

    def save_run_action(self, name: str) -> Action:
        """Keep every subtask of the last run that succeeded as one named action."""
        result = self.last_result
        done = [o for o in result.outcomes if o.ok] if result is not None else []
        if not done:
            raise BadInput("No subtask of the last run succeeded; there is nothing to save.")
        action = action_from_outcomes(name, done)
        self.book().save_action(action)
        return action
