"""The side panel a host docks: instruction, speed/quality slider, mode, run/cancel,
the live plan, progress, errors in plain words, and the list of executed steps."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from layerpath.engine import events
from layerpath.engine.actions import Action, ActionStore
from layerpath.engine.document import Document
from layerpath.engine.executor import Engine
from layerpath.engine.report import build_report
from layerpath.engine.types import (
    EditRequest,
    Mode,
    RunResult,
    Snapshot,
    StepLayer,
    Subtask,
    SubtaskOutcome,
)
from layerpath.errors import BadInput, LayerpathError
from layerpath.gui.qt import Qt, QtGui, QtWidgets, Signal
from layerpath.gui.steps import StepList
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
PLAN_COLUMNS = ("Subtask", "How", "Tools", "Status", "Seconds", "Quality")


@dataclass
class Placed:
    """A step layer the panel added, with the subtask outcome it belongs to."""

    group: str
    step: StepLayer
    outcome: SubtaskOutcome | None = None


def alpha_words(alpha: float) -> str:
    return min(ALPHA_WORDS, key=lambda pair: abs(pair[0] - alpha))[1]


class Panel(QtWidgets.QWidget):
    """Talks to the host only through the Document protocol."""

    run_finished = Signal(object)  # RunResult, or None when the run could not start

    def __init__(
        self,
        document: Document,
        engine_factory: Callable[[], Engine],
        settings: Settings | None = None,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.engine_factory = engine_factory
        self.settings = settings or Settings()
        self.controller = RunController(self)
        self.group: str | None = None
        self.last_result: RunResult | None = None
        self.placed: dict[str, Placed] = {}  # every step layer this panel added
        self._rerun: tuple[str, SubtaskOutcome, list[str]] | None = None  # group, old, old ids
        self._items: dict[str, QtWidgets.QTreeWidgetItem] = {}
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

    # --- layout ------------------------------------------------------------------------

    def _build(self) -> None:
        self.instruction = QtWidgets.QPlainTextEdit()
        self.instruction.setPlaceholderText(
            "e.g. remove the cat, recolor the wall to yellow and replace the sign text with OPEN"
        )
        self.instruction.setMaximumHeight(72)
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
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button.clicked.connect(self.cancel_run)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.plan = QtWidgets.QTreeWidget()
        self.plan.setHeaderLabels(list(PLAN_COLUMNS))
        self.plan.setRootIsDecorated(False)
        self.message = QtWidgets.QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.steps = StepList()
        self.steps.document = self.document
        self.steps.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.steps.customContextMenuRequested.connect(self._step_menu)
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
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(QtWidgets.QLabel("What should change?"))
        layout.addWidget(self.instruction)
        layout.addLayout(speed)
        layout.addWidget(self.slider_label, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.message)
        layout.addWidget(QtWidgets.QLabel("Plan"))
        layout.addWidget(self.plan, 1)
        layout.addWidget(QtWidgets.QLabel("Steps (uncheck to hide a step's layer)"))
        layout.addWidget(self.steps, 2)
        step_buttons = QtWidgets.QHBoxLayout()
        step_buttons.addWidget(self.rerun_button)
        step_buttons.addWidget(self.action_button)
        layout.addLayout(step_buttons)
        bottom = QtWidgets.QHBoxLayout()
        bottom.addWidget(self.details_toggle)
        bottom.addStretch(1)
        bottom.addWidget(self.tools_button)
        bottom.addWidget(self.settings_button)
        layout.addLayout(bottom)
        layout.addWidget(self.details, 1)

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

    def _settings_saved(self, settings: Settings) -> None:
        self.settings = settings
        self._log(
            f"settings saved: planner {settings.planner}, threshold {settings.quality_threshold}"
        )

    # --- running -----------------------------------------------------------------------

    @property
    def alpha(self) -> float:
        return self.slider.value() / 10.0

    def start_run(self) -> None:
        """What the Run button does: snapshot the document and run on a worker thread."""
        prompt = self.instruction.toPlainText().strip()
        if not prompt:
            self._show_error("Type what should change first, e.g. 'recolor the wall to yellow'.")
            self.run_finished.emit(None)
            return
        if self.controller.running:
            return
        try:
            snapshot = self.document.snapshot()
        except Exception as exc:  # a host problem: say it, keep the panel alive
            log.exception("snapshot failed")
            self._show_error(f"Could not read the image: {exc}")
            self.run_finished.emit(None)
            return
        request = EditRequest(
            prompt,
            snapshot,
            alpha=self.alpha,
            mode=self.mode.currentData(),
            quality_threshold=self.settings.quality_threshold,
            max_retries=self.settings.retries,
        )
        self.plan.clear()
        self._items.clear()
        self.message.clear()
        self.message.setStyleSheet("")
        self.group = None
        self.last_result = None
        self.progress.setRange(0, 0)
        self.progress.setFormat("planning…")
        self._log(f"run: {prompt} (alpha {self.alpha:g}, {request.mode.value})")
        engine = self.engine_factory()
        self.controller.start(lambda emit, cancelled: engine.run(request, emit, cancelled))

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
        elif isinstance(event, events.PlanWarning):
            self._show_note(event.message)
        elif isinstance(event, events.SubtaskStarted):
            route = (
                "searching…" if event.route == "search" else event.route.replace("rule:", "rule ")
            )
            self._set(event.subtask, How=route, Status="running")
        elif isinstance(event, events.ToolStarted):
            self._set(event.subtask, Status=f"running {event.tool}")
        elif isinstance(event, events.ToolProgress):
            self._set(event.subtask, Status=f"running {event.tool} {event.share:.0%}")
        elif isinstance(event, events.Retry):
            self._log(f"{event.subtask.id}: {event.tool} scored {event.quality:.2f}; retrying")
        elif isinstance(event, events.FallbackToSearch):
            self._log(f"{event.subtask.id}: searching ({event.reason})")
        elif isinstance(event, events.StepDone):
            if self._rerun is not None:
                group = self._rerun[0]
            else:
                if self.group is None:
                    self.group = self.document.add_group(self.instruction.toPlainText().strip())
                group = self.group
            layer_id = self.document.add_step(group, event.step)
            self.placed[layer_id] = Placed(group, event.step)
            self.steps.add_step(layer_id, event.step)
        elif isinstance(event, (events.SubtaskDone, events.SubtaskFailed)):
            outcome = event.outcome
            for placed in self.placed.values():
                if placed.outcome is None and placed.step.subtask_id == outcome.subtask.id:
                    placed.outcome = outcome
            self._set(
                outcome.subtask,
                Tools=" → ".join(outcome.tools) or "—",
                Status="done" if outcome.ok else "failed",
                Seconds=f"{outcome.cost:.2f}",
                Quality=f"{outcome.quality:.2f}" if outcome.ok else "—",
            )
            for column in range(1, len(PLAN_COLUMNS)):
                self.plan.resizeColumnToContents(column)
            if not outcome.ok:
                self._show_error(f"{outcome.subtask.describe()}: {outcome.error}", append=True)
            self.progress.setValue(self.progress.value() + 1)

    def _on_done(self, result: object) -> None:
        if isinstance(result, SubtaskOutcome):
            self._rerun_done(result)
            return
        assert isinstance(result, RunResult)
        self.last_result = result
        done = sum(1 for o in result.outcomes if o.ok)
        if result.cancelled:
            self.progress.setFormat(f"cancelled — {done} subtasks kept")
        else:
            self.progress.setFormat(f"{done}/{len(result.plan)} done in {result.seconds:.1f} s")
        self.progress.setRange(0, max(1, len(result.plan)))
        self.progress.setValue(len(result.outcomes))
        self._log(f"finished: {len(result.calls)} tool calls, {result.seconds:.2f} s")
        try:
            self.document.record_run(build_report(result))
        except LayerpathError as exc:
            self._log(f"could not record the run in the document: {exc}")
        self.run_finished.emit(result)

    # --- re-run a step with another tool, save as action ---------------------------------

    def _current_layer(self) -> str | None:
        item = self.steps.currentItem()
        return None if item is None else item.data(Qt.ItemDataRole.UserRole)

    def _placed(self, layer_id: str) -> tuple[Placed, SubtaskOutcome, int]:
        placed = self.placed.get(layer_id)
        if placed is None or placed.outcome is None or not placed.outcome.ok:
            raise BadInput("Pick a step of a finished subtask first.")
        return placed, placed.outcome, placed.outcome.tools.index(placed.step.tool)

    def rerun_options(self, layer_id: str) -> list[str]:
        """The other tools that could have made this step."""
        _, outcome, index = self._placed(layer_id)
        return self.engine_factory().alternatives(outcome.subtask.kind, outcome.tools, index)

    def rerun_step(self, layer_id: str, tool: str) -> None:
        """Run the step's subtask again with `tool` in this step's place; its layers are
        replaced when the new result passes the quality check, kept otherwise."""
        placed, outcome, index = self._placed(layer_id)
        if self.controller.running or outcome.start_image is None:
            return
        tools = list(outcome.tools)
        tools[index] = tool
        current = self.document.snapshot()
        request = EditRequest(
            outcome.subtask.describe(),
            Snapshot(outcome.start_image, current.masks, current.selection),
            alpha=self.alpha,
            quality_threshold=self.settings.quality_threshold,
            max_retries=self.settings.retries,
        )
        old = [k for k, p in self.placed.items() if p.outcome is outcome]
        self._rerun = (placed.group, outcome, old)
        self.message.clear()
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"re-running {outcome.subtask.describe()} with {tool}…")
        engine = self.engine_factory()
        self.controller.start(
            lambda emit, cancelled: engine.rerun(request, outcome.subtask, tools, emit, cancelled)
        )

    def _rerun_done(self, outcome: SubtaskOutcome) -> None:
        assert self._rerun is not None
        _, old_outcome, old_ids = self._rerun
        self._rerun = None
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        if not outcome.ok:
            self.progress.setFormat("re-run failed; the earlier result is kept")
            self._show_error(f"{outcome.subtask.describe()}: {outcome.error}")
            self.run_finished.emit(outcome)
            return
        for layer_id in old_ids:
            self.document.remove(layer_id)
            self.placed.pop(layer_id)
            item = self.steps.item_for(layer_id)
            if item is not None:
                self.steps.takeItem(self.steps.row(item))
        for placed in self.placed.values():
            if placed.outcome is None and placed.step.subtask_id == outcome.subtask.id:
                placed.outcome = outcome
        self.progress.setFormat(f"re-ran with {' → '.join(outcome.tools)}")
        self._log(
            f"re-ran {outcome.subtask.id}: {' → '.join(outcome.tools)} q={outcome.quality:.2f}"
        )
        self.run_finished.emit(outcome)

    def save_action(self, layer_id: str, name: str) -> Action:
        """Keep the step's subtask, tool path and parameters as a named action."""
        _, outcome, _ = self._placed(layer_id)
        action = Action(
            name.strip(),
            outcome.subtask.kind,
            outcome.tools,
            tuple(dict(step.params) for step in outcome.steps),
            outcome.subtask.target,
            outcome.subtask.to,
        )
        ActionStore().save(action)
        self._log(f"saved action '{action.name}': {' → '.join(action.tools)}")
        return action

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
        menu.popup(
            self.steps.mapToGlobal(self.steps.visualItemRect(self.steps.currentItem()).center())
        )

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
        self._rerun = None
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("not run")
        self._show_error(message)
        self.run_finished.emit(None)

    # --- view helpers ------------------------------------------------------------------

    def _show_plan(self, plan: tuple[Subtask, ...]) -> None:
        self.progress.setRange(0, len(plan))
        self.progress.setValue(0)
        self.progress.setFormat("%v/%m subtasks")
        for subtask in plan:
            item = QtWidgets.QTreeWidgetItem([subtask.describe(), "", "", "waiting", "", ""])
            self.plan.addTopLevelItem(item)
            self._items[subtask.id] = item
        for column in range(len(PLAN_COLUMNS)):
            self.plan.resizeColumnToContents(column)

    def _set(self, subtask: Subtask, **columns: str) -> None:
        item = self._items.get(subtask.id)
        if item is None:
            return
        for name, value in columns.items():
            item.setText(PLAN_COLUMNS.index(name), value)

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
