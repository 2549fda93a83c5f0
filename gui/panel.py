"""The side panel a host docks: instruction, speed/quality slider, mode, run/cancel,
the live plan, progress, errors in plain words, and the list of executed steps."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from layerpath.engine import events
from layerpath.engine.execute.executor import Engine
from layerpath.engine.execute.preview import Preview, describe
from layerpath.engine.hosts.document import Document, Reopened
from layerpath.engine.hosts.session import Placed, Remade, RunSession
from layerpath.engine.learn.actions import Action
from layerpath.engine.learn.learning import learn_in_background
from layerpath.engine.types import (
    EditRequest,
    Mode,
    RunResult,
    StepLayer,
    Subtask,
    SubtaskOutcome,
    ToolSpec,
)
from layerpath.errors import LayerpathError
from layerpath.gui.actions_view import ActionsView
from layerpath.gui.plan_view import PlanView
from layerpath.gui.qt import Qt, QtCore, QtGui, QtWidgets, Signal
from layerpath.gui.references import ReferenceSlots
from layerpath.gui.step_controls import StepControlsView
from layerpath.gui.steps import StepList, expert_details
from layerpath.gui.worker import RunController
from layerpath.settings import Settings

log = logging.getLogger(__name__)

ALPHA_WORDS = (
    (0.0, "Best quality"),
    (0.5, "Quality first"),
    (1.0, "Balanced"),
    (1.5, "Speed first"),
    (2.0, "Fastest"),
)
MODES = (
    ("Fast, search when needed", Mode.FAST_SLOW),
    ("Thorough search", Mode.SLOW),
    ("Fast only", Mode.FAST),
)


def failure_words(outcome: SubtaskOutcome) -> str:
    """Why a subtask failed, in a photographer's words: no tool ids, no list of tried
    tools with their scores (those stay in Details)."""
    failure = outcome.failure
    return failure.plain() if failure is not None else str(outcome.error or "failed")


def alpha_words(alpha: float) -> str:
    return min(ALPHA_WORDS, key=lambda pair: abs(pair[0] - alpha))[1]


class Panel(QtWidgets.QWidget):
    """A view over a RunSession: talks to the host only through the Document protocol.
    `engine_factory` replaces the engine the settings describe (tests)."""

    run_finished = Signal(object)  # RunResult, or None when the run could not start
    plan_ready = Signal(object)  # Preview: the plan shown, waiting for Run these steps
    steps_remade = Signal(object)  # Remade: later steps made again after one was hidden

    def __init__(
        self,
        document: Document,
        engine_factory: Callable[[], Engine] | None = None,
        settings: Settings | None = None,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = RunSession(document, settings, engine_factory=engine_factory)
        self.controller = RunController(self)
        self._specs: dict[str, ToolSpec] | None = None  # the catalogue, read once
        self._build()
        # Host calls (Krita's addChildNode waits for its image and spins the event loop)
        # can deliver the next worker signal while one is being handled: queue them and
        # handle one at a time, in order.
        self._pending: deque[Callable[[], None]] = deque()
        self._handling = False
        self.controller.engine_event.connect(lambda e: self._in_order(self._on_event, e))
        self.controller.done.connect(lambda r: self._in_order(self._on_done, r))
        self.controller.error.connect(lambda m: self._in_order(self._on_error, m))
        self.controller.running_changed.connect(self._on_running)
        # a step shown, hidden or deleted (in the step list, the host's own layers, an
        # undo): the later steps it reaches are made again; the host's layers are looked
        # at twice a second (Krita tells a plug-in of no such change)
        self._known_shown: dict[str, bool] = {}
        self._known_order: dict[str, list[str]] = {}  # each run's step layers, bottom first
        self._changed_steps: list[str] = []
        self.steps.visibility_changed.connect(lambda *_: self.check_visibility())
        self._watch = QtCore.QTimer(self)
        self._watch.setInterval(500)
        self._watch.timeout.connect(self.check_visibility)
        self._watch.start()

    @property
    def document(self) -> Document:
        return self.session.document

    @property
    def settings(self) -> Settings:
        return self.session.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.session.settings = settings

    @property
    def placed(self) -> dict[str, Placed]:
        """Every step layer this panel's session added."""
        return self.session.placed

    @property
    def last_result(self) -> RunResult | None:
        return self.session.last_result

    # --- layout ------------------------------------------------------------------------

    def _build(self) -> None:
        self.instruction = QtWidgets.QPlainTextEdit()
        self.instruction.setPlaceholderText(
            "e.g. remove the cat, recolor the wall to yellow and replace the sign text with OPEN"
        )
        self.instruction.setMaximumHeight(72)
        self.references = ReferenceSlots()
        self.slider = QtWidgets.QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 20)
        self.slider.setValue(10)
        self.slider_label = QtWidgets.QLabel(alpha_words(1.0))
        self.slider.valueChanged.connect(lambda v: self.slider_label.setText(alpha_words(v / 10)))
        self.mode = QtWidgets.QComboBox()
        for label, mode in MODES:
            self.mode.addItem(label, mode)
        self.run_button = QtWidgets.QPushButton("Run")
        self.run_button.setDefault(True)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.run_button.clicked.connect(lambda: self.start_run())  # (not its `checked`)
        self.cancel_button.clicked.connect(self.cancel_run)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.plan = PlanView()
        self.preview_box = QtWidgets.QFrame()
        self.preview_box.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.preview_note = QtWidgets.QLabel("Check the plan below, then run it.")
        self.preview_note.setWordWrap(True)
        self.confirm_button = QtWidgets.QPushButton("Run these steps")
        self.edit_button = QtWidgets.QPushButton("Edit")
        self.confirm_button.clicked.connect(self.confirm_run)
        self.edit_button.clicked.connect(self.edit_plan)
        preview_row = QtWidgets.QHBoxLayout(self.preview_box)
        preview_row.addWidget(self.preview_note, 1)
        preview_row.addWidget(self.edit_button)
        preview_row.addWidget(self.confirm_button)
        self.preview_box.setVisible(False)
        self.instruction.textChanged.connect(self._instruction_changed)
        self.controls = StepControlsView(self._amount_released, self._edge_released)
        # (the rows and sliders by name, as hosts and tests reach them)
        self.amount_row, self.amount = self.controls.amount_row, self.controls.amount
        self.amount_label = self.controls.amount_label
        self.edge_row, self.edge = self.controls.edge_row, self.controls.edge
        self.message = QtWidgets.QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.steps = StepList()
        self.steps.document = self.document
        self.steps.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.steps.customContextMenuRequested.connect(self._step_menu)
        self.steps.currentItemChanged.connect(lambda *_: self._show_step_controls())
        self.steps.describe = self._step_words
        self.steps.threshold = self.settings.quality_threshold
        self.rerun_button = QtWidgets.QPushButton("Re-run with…")
        self.rerun_button.clicked.connect(lambda: self._step_menu(None))
        self.action_button = QtWidgets.QPushButton("Save as action…")
        self.action_button.clicked.connect(self._ask_action_name)
        self.settings_button = QtWidgets.QToolButton()
        self.settings_button.setText("Settings…")
        self.settings_button.clicked.connect(self.open_settings)
        self.tools_button = QtWidgets.QToolButton()
        self.tools_button.setText("Tools…")
        self.tools_button.setToolTip("Which tools can run here; download their models")
        self.tools_button.clicked.connect(self.open_tools)
        self.batch_button = QtWidgets.QToolButton()
        self.batch_button.setText("Batch…")
        self.batch_button.setToolTip("Do this instruction, or a saved action, to many photos")
        self.batch_button.clicked.connect(self.open_batch)
        self.details_toggle = QtWidgets.QToolButton()
        self.details_toggle.setText("Details")
        self.details_toggle.setCheckable(True)
        self.details = QtWidgets.QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setVisible(False)
        self.details_toggle.toggled.connect(self.details.setVisible)

        speed = QtWidgets.QHBoxLayout()
        speed.addWidget(QtWidgets.QLabel("Quality"))
        speed.addWidget(self.slider, 1)
        speed.addWidget(QtWidgets.QLabel("Speed"))
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.mode, 1)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        edit_page = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(edit_page)
        layout.addWidget(QtWidgets.QLabel("What should change?"))
        layout.addWidget(self.instruction)
        layout.addWidget(self.references)
        layout.addLayout(speed)
        layout.addWidget(self.slider_label, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.message)
        layout.addWidget(QtWidgets.QLabel("Plan"))
        layout.addWidget(self.preview_box)
        layout.addWidget(self.plan, 1)
        layout.addWidget(QtWidgets.QLabel("Steps (uncheck to hide a step's layer)"))
        layout.addWidget(self.steps, 2)
        layout.addWidget(self.controls)
        step_buttons = QtWidgets.QHBoxLayout()
        step_buttons.addWidget(self.rerun_button)
        step_buttons.addWidget(self.action_button)
        layout.addLayout(step_buttons)
        bottom = QtWidgets.QHBoxLayout()
        bottom.addWidget(self.details_toggle)
        bottom.addStretch(1)
        bottom.addWidget(self.batch_button)
        bottom.addWidget(self.tools_button)
        bottom.addWidget(self.settings_button)
        layout.addLayout(bottom)
        layout.addWidget(self.details, 1)
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.addTab(edit_page, "Edit")
        self.actions_view = ActionsView(
            self.session.book, self._run_saved, self._show_error, self._show_note
        )
        # (its list and button by name, as hosts and tests reach them)
        self.actions = self.actions_view.actions
        self.run_action_button = self.actions_view.run_action_button
        self.tabs.addTab(self.actions_view, "Actions")
        QtWidgets.QVBoxLayout(self).addWidget(self.tabs)

    def closeEvent(self, event: QtGui.QCloseEvent | None) -> None:  # noqa: N802
        self.controller.shutdown()  # never leave a worker thread running behind a closed panel
        super().closeEvent(event)

    def open_settings(self) -> QtWidgets.QDialog:
        """The settings dialog; saved settings apply from the next run on."""
        from layerpath.gui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.settings, self)
        dialog.saved.connect(self._settings_saved)
        dialog.open()
        return dialog

    def open_tools(self) -> QtWidgets.QDialog:
        """The tools and models dialog (models in the settings' model folder)."""
        from layerpath.gui.tools_dialog import ToolsDialog
        from layerpath.tools.models import ModelManager

        dialog = ToolsDialog(ModelManager.from_settings(self.settings), self)
        dialog.open()
        return dialog

    def open_batch(self) -> QtWidgets.QDialog:
        """The batch dialog, with this panel's instruction, slider and mode."""
        from layerpath.gui.batch_dialog import BatchDialog

        dialog = BatchDialog(
            self.settings,
            self.instruction.toPlainText().strip(),
            self.alpha,
            self.mode.currentData(),
            self,
            self.references.references,
        )
        dialog.open()
        return dialog

    def _settings_saved(self, settings: Settings) -> None:
        self.settings = settings
        self.steps.threshold = settings.quality_threshold
        self._log(
            f"settings saved: planner {settings.planner}, threshold {settings.quality_threshold}"
        )

    # --- running -----------------------------------------------------------------------

    @property
    def alpha(self) -> float:
        return self.slider.value() / 10.0

    def start_run(self, preview: bool | None = None) -> None:
        """What the Run button does: show the plan first (the `preview_plan` setting, or
        `preview`) and run it when confirmed, or run straight away; on a worker thread."""
        prompt = self.instruction.toPlainText().strip()
        if not prompt:
            self._show_error("Type what should change first, e.g. 'recolor the wall to yellow'.")
            self.run_finished.emit(None)
            return
        if self.settings.preview_plan if preview is None else preview:
            self._preview(prompt)
        else:
            self._start(prompt)

    def _preview(self, prompt: str) -> None:
        """Plan the prompt and show each step, its tools and about how long, with Run
        these steps / Edit; nothing runs yet (planning may ask the LLM: a worker)."""
        request = self._request(prompt)
        if request is None or self.controller.running:
            return
        self._clear()
        self.progress.setRange(0, 0)
        self.progress.setFormat("planning…")
        self.controller.start(self.session.preview_job(request))

    def confirm_run(self) -> None:
        """Run the plan the preview shows, exactly that plan."""
        confirmed = self.session.confirm_preview()
        if confirmed is not None:
            prompt, plan = confirmed
            self._start(prompt, plan=plan)

    def edit_plan(self) -> None:
        """Back to the instruction: the preview goes, nothing ran."""
        self.session.drop_preview()
        self.preview_box.setVisible(False)
        self.plan.clear()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("idle")
        self.instruction.setFocus()

    def _instruction_changed(self) -> None:
        if self.session.previewed is not None and not self.controller.running:
            self.edit_plan()  # the shown plan is another instruction's now

    def _request(
        self, prompt: str, action: Action | None = None, plan: tuple[Subtask, ...] | None = None
    ) -> EditRequest | None:
        try:
            return self.session.request(
                prompt,
                alpha=self.alpha,
                mode=self.mode.currentData(),
                action=action,
                plan=plan,
                references=self.references.references,
            )
        except Exception as exc:  # a host problem: say it, keep the panel alive
            log.exception("snapshot failed")
            self._show_error(f"Could not read the image: {exc}")
            self.run_finished.emit(None)
            return None

    def _clear(self) -> None:
        self.session.drop_preview()
        self.preview_box.setVisible(False)
        self.plan.clear()
        self.message.clear()
        self.message.setStyleSheet("")
        self.progress.setStyleSheet("")

    def _start(
        self, prompt: str, action: Action | None = None, plan: tuple[Subtask, ...] | None = None
    ) -> None:
        """Snapshot the document and run the prompt (or replay `action` on the selection
        or the named mask, or run a previewed `plan`) on a worker thread."""
        if self.controller.running:
            return
        request = self._request(prompt, action, plan)
        if request is None:
            return
        self._clear()
        self.progress.setRange(0, 0)
        self.progress.setFormat("planning…")
        self._log(f"run: {prompt} (alpha {self.alpha:g}, {request.mode.value})")
        self.controller.start(self.session.job(request, self.instruction.toPlainText()))

    def cancel_run(self) -> None:
        self.controller.cancel()
        self.progress.setFormat("cancelling after the current tool…")

    def _on_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.instruction.setReadOnly(running)

    # --- events (main thread) ----------------------------------------------------------

    def _in_order(self, handler: Callable[[Any], None], value: object) -> None:
        self._pending.append(lambda: handler(value))
        if self._handling:
            return  # the handler running further up this stack picks it up
        self._handling = True
        try:
            while self._pending:
                self._pending.popleft()()
        finally:
            self._handling = False

    def _on_event(self, event: object) -> None:
        if isinstance(event, events.PlanReady):
            self._show_plan(event.plan)
        elif isinstance(event, (events.PlanWarning, events.LearntRuleUsed)):
            self._show_note(event.message)
        elif isinstance(event, events.SubtaskStarted):
            self._log(f"{event.subtask.id}: {event.route}")
            if event.route.startswith("action:"):
                self._set(event.subtask, How="your action " + event.route[len("action:") :])
            elif event.route == "search":
                self._set(event.subtask, How="searching for the best tools…")
            self._set(event.subtask, Status="running")
        elif isinstance(event, events.ToolStarted):
            self._set(event.subtask, Status=f"running: {self.label(event.tool)}")
        elif isinstance(event, events.ToolProgress):
            self._set(event.subtask, Status=f"running: {self.label(event.tool)} {event.share:.0%}")
        elif isinstance(event, events.Retry):
            because = f": {event.why}" if event.why else ""
            self._log(
                f"{event.subtask.id}: {event.tool} scored {event.quality:.2f}; trying again{because}"
            )
            self._set(event.subtask, Status=f"trying {self.label(event.tool)} again")
        elif isinstance(event, events.FallbackToSearch):
            self._log(f"{event.subtask.id}: searching ({event.reason})")
        elif isinstance(event, events.StepDone):
            layer_id = self.session.place(event)
            assert layer_id is not None
            self.steps.add_step(layer_id, event.step)
        elif isinstance(event, (events.SubtaskDone, events.SubtaskFailed)):
            self.session.place(event)
            outcome = event.outcome
            how = " → ".join(self.label(t) for t in outcome.tools)
            if outcome.solved_by.startswith("action:"):
                how = f"your action {outcome.solved_by[len('action:') :]}: {how}"
            self._set(
                outcome.subtask,
                How=how or "—",
                Status="done" if outcome.ok else "failed",
                Time=f"{outcome.cost:.1f} s",
            )
            self._log(
                f"{outcome.subtask.id}: {' → '.join(outcome.tools) or '—'} "
                f"q={outcome.quality:.2f} {outcome.cost:.2f}s ({outcome.solved_by})"
            )
            self.plan.fit_details()
            if outcome.opinions:
                self._log(
                    f"{outcome.subtask.id} checks:\n  "
                    + expert_details(outcome.opinions).replace("\n", "\n  ")
                )
            if not outcome.ok:
                self._log(f"{outcome.subtask.id} failed: {outcome.error}")
                self._show_error(
                    f"{outcome.subtask.describe()}: {failure_words(outcome)}", append=True
                )
            self.progress.setValue(self.progress.value() + 1)

    def _on_done(self, result: object) -> None:
        try:
            self._done(result)
        finally:
            self.check_visibility()  # (what changed while it ran)

    def _done(self, result: object) -> None:
        if isinstance(result, Remade):
            self._remade(result)
            return
        if isinstance(result, SubtaskOutcome):
            self._rerun_done(result)
            return
        if isinstance(result, Preview):
            self._show_preview(result)
            return
        assert isinstance(result, RunResult)
        problem = self.session.finish(result)
        done = sum(1 for o in result.outcomes if o.ok)
        failed = len(result.plan) - done
        self.progress.setRange(0, max(1, len(result.plan)))
        self.progress.setValue(done)  # what was done: a failed run's bar is not full
        if result.cancelled:
            self.progress.setFormat(f"cancelled — {done} of {len(result.plan)} steps kept")
        elif failed:
            self.progress.setFormat(
                f"{failed} of {len(result.plan)} could not be done — {done} done"
                f" in {result.seconds:.1f} s"
            )
            self.progress.setStyleSheet("QProgressBar::chunk { background: #b00020; }")
        else:
            self.progress.setFormat(f"{done}/{len(result.plan)} done in {result.seconds:.1f} s")
        self._log(f"finished: {len(result.calls)} tool calls, {result.seconds:.2f} s")
        if problem is not None:
            self._log(problem)
        self.run_finished.emit(result)

    # --- re-run a step with another tool, save as action ---------------------------------

    def _current_layer(self) -> str | None:
        item = self.steps.currentItem()
        return None if item is None else item.data(Qt.ItemDataRole.UserRole)

    def rerun_options(self, layer_id: str) -> list[str]:
        """The other tools that could have made this step."""
        return self.session.rerun_options(layer_id)

    def rerun_step(self, layer_id: str, tool: str) -> None:
        """Run the step's subtask again with `tool` in this step's place; its layers are
        replaced when the new result passes the quality check, kept otherwise."""
        subtask, tools = self.session.with_tool(layer_id, tool)
        self._rerun_with(layer_id, subtask, tools, f"with {self.label(tool)}")

    def set_amount(self, layer_id: str, amount: float) -> None:
        """An adjustment step made again at another amount (its slider): the same tools
        on the picture it started from, no new plan; its layers replaced when the new
        result passes the check, kept otherwise."""
        subtask, tools = self.session.with_amount(layer_id, amount)
        self._rerun_with(layer_id, subtask, tools, "at the new amount")

    def set_edge(self, layer_id: str, pixels: int) -> None:
        """The step's subtask made again with the region it found grown (or shrunk) by
        `pixels`: the Edge slider; the same tools, no new plan."""
        subtask, tools = self.session.with_edge(layer_id, pixels, self._tool_specs())
        self._rerun_with(layer_id, subtask, tools, "with the region's new edge")

    def _rerun_with(self, layer_id: str, subtask: Subtask, tools: list[str], how: str) -> None:
        if self.controller.running:
            return
        job = self.session.rerun_job(layer_id, subtask, tools, alpha=self.alpha)
        if job is None:
            return
        self.message.clear()
        self.progress.setStyleSheet("")
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"making {subtask.describe()} again {how}…")
        self.controller.start(job)

    def _rerun_done(self, outcome: SubtaskOutcome) -> None:
        removed = self.session.finish_rerun(outcome)
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        if not outcome.ok:
            self.progress.setFormat("not done again; the earlier result is kept")
            self._log(f"{outcome.subtask.id} again failed: {outcome.error}")
            self._show_error(f"{outcome.subtask.describe()}: {failure_words(outcome)}")
            self.run_finished.emit(outcome)
            return
        for layer_id in removed:
            item = self.steps.item_for(layer_id)
            if item is not None:
                self.steps.takeItem(self.steps.row(item))
        for layer_id in self.session.layers_of(outcome):
            self.steps.update_step(layer_id, self.session.placed[layer_id].step)
            if layer_id not in self._changed_steps:  # the later steps it reaches, again
                self._changed_steps.append(layer_id)
        self.progress.setFormat(f"made again: {outcome.subtask.describe()}")
        newest = self.session.newest_layer(outcome)
        if newest is not None:  # the step made again stays selected (its slider with it)
            item = self.steps.item_for(newest)
            if item is not None:
                self.steps.setCurrentItem(item)
        self._show_step_controls()
        self._log(
            f"re-ran {outcome.subtask.id}: {' → '.join(outcome.tools)} q={outcome.quality:.2f}"
        )
        self.run_finished.emit(outcome)

    # --- a document opened -----------------------------------------------------------------

    def document_opened(self, document: Reopened) -> None:
        """Another document is open: the steps of the last one go, and the runs the file
        keeps (an ORA or a .kra layerpath wrote) are listed again, each step with what it
        lets the user change, made again when one is hidden."""
        self.controller.shutdown()  # (a job of the last document's is let go)
        self.session.forget()
        self.steps.clear()
        self.steps.steps.clear()
        self.plan.clear()
        self._known_shown.clear()
        self._known_order.clear()
        self._changed_steps.clear()
        for group, report, _ in document.reopened:
            try:
                steps, start = document.reopened_run(group)
                self.session.adopt(group, report, steps, start)
            except (LayerpathError, ValueError, TypeError, KeyError, IndexError) as exc:
                # (a record another program changed: its layers stay as they are)
                self._log(f"the run '{report.get('prompt')}' could not be read back: {exc}")
                continue
            for layer, step in steps:
                self.steps.add_step(layer, step)
        self.check_visibility()

    # --- a step hidden: the later steps it reaches made again ----------------------------

    def check_visibility(self) -> None:
        """Look for step layers of finished runs shown, hidden, deleted or moved since
        the last look; the later steps they reach (moved: each from the first one out of
        place) are made again (one job at a time)."""
        if self._check_order():
            return
        for layer, placed in list(self.session.placed.items()):
            if placed.group not in self.session.runs:
                continue  # (a run still going)
            shown = self.session.shown(layer)
            was = self._known_shown.get(layer)
            self._known_shown[layer] = shown
            if was is not None and was != shown and layer not in self._changed_steps:
                self._changed_steps.append(layer)
        if self._changed_steps and not self.controller.running:
            self._remake()

    def _check_order(self) -> bool:
        """Whether a run's step layers were moved among themselves since the last look:
        the steps are then made again in their new order (True: a job started)."""
        order_of = getattr(self.document, "step_order", None)
        if order_of is None:
            return False
        for group in list(self.session.runs):
            if self.controller.running:  # (a new run's order is known; moves wait)
                self._known_order.setdefault(group, order_of(group))
                continue
            order = order_of(group)
            was = self._known_order.get(group)
            self._known_order[group] = order
            if was is None or order == was or sorted(order) != sorted(was):
                continue  # (new, unmoved, or a layer added or deleted: not a move)
            try:
                job = self.session.reorder_job(group, order)
            except LayerpathError as exc:
                self._show_note(str(exc))
                continue
            if job is not None:
                self.progress.setStyleSheet("")
                self.progress.setRange(0, 0)
                self.progress.setFormat("making the steps again in their new order…")
                self.controller.start(job)
                return True
        return False

    def _remake(self) -> None:
        """Make the later steps of one run again (the runs of other changed steps
        wait their turn)."""
        placed = self.session.placed
        known = [k for k in self._changed_steps if k in placed]
        group = placed[known[0]].group if known else None
        changed = [k for k in known if placed[k].group == group]
        self._changed_steps = [k for k in known if k not in changed]
        try:
            job = self.session.remake_job(changed)
        except LayerpathError as exc:
            self._show_note(str(exc))
            job = None
        if job is None:  # nothing after it is reached: the picture is right as it is
            self.steps_remade.emit(Remade("", ()))
            return
        self.progress.setStyleSheet("")
        self.progress.setRange(0, 0)
        self.progress.setFormat("making the later steps again from the picture beneath…")
        self.controller.start(job)

    def _remade(self, remade: Remade) -> None:
        said = self.session.finish_remake(remade)
        for _, new in remade.pairs:  # (its row said 'running' while it was made again)
            self._set(new.subtask, Status="done" if new.ok else "failed", Time=f"{new.cost:.1f} s")
        self.steps.sync_visibility(self.session.shown)
        for layer, placed in self.session.placed.items():
            if placed.group == remade.group:
                self.steps.update_step(layer, placed.step)
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        count = len(remade.pairs)
        self.progress.setFormat(
            f"{count} later step{'s' if count != 1 else ''} made again"
            if count
            else "no later step needed making again"
        )
        for line in said:
            self._show_error(line, append=True)
        self._log(
            "made again: "
            + (", ".join(f"{new.subtask.id} q={new.quality:.2f}" for _, new in remade.pairs) or "—")
        )
        self.steps_remade.emit(remade)

    def _show_step_controls(self) -> None:
        """The controls the picked step offers (its amount, its region's edge)."""
        self.controls.show_controls(
            self.session.step_controls(self._current_layer(), self._tool_specs())
        )

    def _edge_released(self, pixels: int) -> None:
        layer = self._current_layer()
        if layer is not None:
            try:
                self.set_edge(layer, pixels)
            except LayerpathError as exc:
                self._show_error(str(exc))

    def _amount_released(self, amount: float) -> None:
        layer = self._current_layer()
        if layer is not None:
            try:
                self.set_amount(layer, amount)
            except LayerpathError as exc:
                self._show_error(str(exc))

    def save_action(self, layer_id: str, name: str) -> Action:
        """Keep the step's subtask, tool path and parameters as a named action."""
        action = self.session.save_action(layer_id, name)
        self._log(f"saved action '{action.name}': {action.describe()}")
        self.refresh_actions()
        return action

    def learn_from(self) -> None:
        """After each run, start learning new rules from the session's traces in a
        process of its own when `learn_every` runs have been recorded since the last time
        (the editor and the Krita docker ask for it; tests do not)."""

        def when_due(_: object) -> None:
            log_file = learn_in_background(self.settings, self.session.traces)
            if log_file is not None:
                self._log(f"learning new rules in the background ({log_file})")

        self.run_finished.connect(when_due)

    # --- actions (the Actions tab: gui/actions_view.py) -----------------------------------

    def refresh_actions(self) -> None:
        self.actions_view.refresh()

    def run_action(self, name: str) -> None:
        self.actions_view.run_action(name)

    def show_actions(self) -> None:
        self.actions_view.refresh()
        self.tabs.setCurrentIndex(1)

    def run_nth_action(self, number: int) -> None:
        self.actions_view.run_nth(number)

    def rename_action(self, name: str, new: str) -> None:
        self.actions_view.rename(name, new)

    def delete_action(self, name: str) -> None:
        self.actions_view.delete(name)

    def export_action(self, name: str, path: Path, replace: bool = True) -> None:
        self.actions_view.export(name, path, replace)

    def import_action(self, path: Path, replace: bool = False) -> None:
        self.actions_view.import_(path, replace)

    def _run_saved(self, action: Action | None) -> None:
        """A saved action replayed on this picture (None: it could not be read)."""
        if action is None:
            self.run_finished.emit(None)
            return
        self.tabs.setCurrentIndex(0)  # its progress and steps show on the Edit tab
        self._start(f"action: {action.name}", action)

    def _step_menu(self, position: object) -> None:
        layer_id = self._current_layer()
        if layer_id is None:
            self._show_error("Pick a step in the list first.")
            return
        try:
            options = self.rerun_options(layer_id)
        except LayerpathError as exc:
            self._show_error(str(exc))
            return
        menu = QtWidgets.QMenu(self)
        for tool in options:
            action = menu.addAction(f"Re-run with {tool}")
            assert action is not None
            action.triggered.connect(lambda _=False, t=tool: self.rerun_step(layer_id, t))
        if not options:
            disabled = menu.addAction("No other tool can do this step")
            assert disabled is not None
            disabled.setEnabled(False)
        save = menu.addAction("Save as action…")
        assert save is not None
        save.triggered.connect(self._ask_action_name)
        whole = menu.addAction("Save the whole run as action…")
        assert whole is not None
        whole.triggered.connect(self._ask_run_action_name)
        menu.popup(
            self.steps.mapToGlobal(self.steps.visualItemRect(self.steps.currentItem()).center())
        )

    def save_run_action(self, name: str) -> Action:
        """Keep every subtask of the last run that succeeded as one named action."""
        action = self.session.save_run_action(name)
        self._log(f"saved action '{action.name}': {action.describe()}")
        self.refresh_actions()
        return action

    def _ask_run_action_name(self) -> None:
        name, ok = QtWidgets.QInputDialog.getText(self, "Save the run as action", "Name:")
        if ok and name.strip():
            try:
                self.save_run_action(name)
            except LayerpathError as exc:
                self._show_error(str(exc))

    def _ask_action_name(self) -> None:
        layer_id = self._current_layer()
        if layer_id is None:
            self._show_error("Pick a step in the list first.")
            return
        name, ok = QtWidgets.QInputDialog.getText(self, "Save as action", "Name:")
        if ok and name.strip():
            try:
                self.save_action(layer_id, name)
            except LayerpathError as exc:
                self._show_error(str(exc))

    def _on_error(self, message: str) -> None:
        self.session.abandon()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("not run")
        self._show_error(message)
        self.run_finished.emit(None)

    # --- view helpers ------------------------------------------------------------------

    def label(self, tool: str) -> str:
        """A tool's plain words ('Fill in (texture)'), from the catalogue."""
        spec = self._tool_specs().get(tool)
        return spec.label or tool if spec is not None else tool

    def _tool_specs(self) -> dict[str, ToolSpec]:
        """The tools' catalogue entries, from the first engine's registry (the catalogue
        does not change while the panel lives; building an engine reads the rule files
        and the keyring, not something to do per selected step)."""
        if self._specs is None:
            self._specs = {t.name: t.spec for t in self.session.engine().registry}
        return self._specs

    def _step_words(self, step: StepLayer) -> str:
        """A step list row: the layer's name ('Blur 0.5 on face'), and under it what
        made it, in plain words, and its time ('Adjust the region · 0.4 s')."""
        label = self.label(step.tool)
        made = "" if step.name.endswith(f" · {label}") else f"{label} · "
        return f"{step.name}\n{made}{step.cost:.1f} s"

    def _show_preview(self, preview: Preview) -> None:
        """The plan, each step's tools and time, waiting for Run these steps / Edit."""
        self.session.show_preview(self.instruction.toPlainText().strip(), preview)
        self.preview_note.setText(self.plan.show_preview(preview))
        self.preview_box.setVisible(True)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("plan ready")
        self._log("plan:\n  " + "\n  ".join(describe(preview.steps)))
        self.plan_ready.emit(preview)

    def _show_plan(self, plan: tuple[Subtask, ...]) -> None:
        expected = self.session.expected_tools()
        self.preview_box.setVisible(False)
        self.plan.show_plan(plan, expected)
        self.progress.setRange(0, len(plan))
        self.progress.setValue(0)
        self.progress.setFormat("%v/%m steps")

    def _set(self, subtask: Subtask, **columns: str) -> None:
        self.plan.set(subtask, **columns)

    def _show_error(self, message: str, append: bool = False) -> None:
        text = f"{self.message.text()}\n{message}" if append and self.message.text() else message
        self.message.setStyleSheet("color: #b00020;")
        self.message.setText(text)
        self._log(f"error: {message}")

    def _show_note(self, message: str) -> None:
        self.message.setText(message)
        self._log(f"note: {message}")

    def _log(self, line: str) -> None:
        self.details.appendPlainText(line)
