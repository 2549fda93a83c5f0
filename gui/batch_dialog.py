"""The batch dialog (the panel's Batch… button, in the editor and in Krita's docker):
photos, what to do to them, where the results go; progress with the time left, cancel,
and the contact sheet when it is over. The work is engine/hosts/batch.py's, on a worker thread."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from layerpath.engine.hosts.batch import (
    FORMATS,
    PHOTO_SUFFIXES,
    SHEET,
    BatchReport,
    BatchSpec,
    Progress,
    collect,
    run_batch,
)
from layerpath.engine.learn.rulebook import RuleBook
from layerpath.engine.plan.references import Reference
from layerpath.engine.types import Mode
from layerpath.errors import LayerpathError
from layerpath.gui.qt import QtCore, QtGui, QtWidgets, Signal
from layerpath.gui.worker import RunController
from layerpath.settings import Settings
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)

INSTRUCTION = "This instruction"


def duration(seconds: float) -> str:
    """'about 3 min left' words for a time."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class BatchDialog(QtWidgets.QDialog):
    """Runs one instruction or saved action on many photos."""

    finished_batch = Signal(object)  # BatchReport, or None when it could not start

    def __init__(
        self,
        settings: Settings,
        instruction: str = "",
        alpha: float = 1.0,
        mode: Mode = Mode.FAST_SLOW,
        parent: QtWidgets.QWidget | None = None,
        references: Mapping[str, Reference] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Batch — layerpath")
        self.settings = settings
        self.references = dict(references or {})  # the panel's, for every photo
        self.alpha = alpha
        self.run_mode = mode
        self.controller = RunController(self)
        self.report: BatchReport | None = None
        self.out_dir: Path | None = None

        self.photos = QtWidgets.QListWidget()
        self.photos.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        add_files = QtWidgets.QPushButton("Add photos…")
        add_files.clicked.connect(self._ask_files)
        add_folder = QtWidgets.QPushButton("Add folder…")
        add_folder.clicked.connect(self._ask_folder)
        remove = QtWidgets.QPushButton("Remove")
        remove.clicked.connect(self._remove_selected)

        self.what = QtWidgets.QComboBox()
        self.what.addItem(INSTRUCTION, None)
        try:
            for name in RuleBook(Registry.from_catalogue()).actions():
                self.what.addItem(f"Action: {name}", name)
        except LayerpathError as exc:  # an unreadable actions file: the instruction still works
            log.warning("%s", exc)
        self.instruction = QtWidgets.QLineEdit(instruction)
        self.instruction.setPlaceholderText("e.g. make it warmer and add a vignette")
        self.what.currentIndexChanged.connect(
            lambda _: self.instruction.setEnabled(self.what.currentData() is None)
        )
        self.masks = QtWidgets.QLineEdit()
        self.masks.setPlaceholderText("optional: a folder of <photo>.<name>.png masks")
        self.output = QtWidgets.QLineEdit()
        self.output.setPlaceholderText("the folder the results go to")
        browse = QtWidgets.QToolButton()
        browse.setText("…")
        browse.clicked.connect(self._ask_output)
        self.format = QtWidgets.QComboBox()
        for name in FORMATS:
            self.format.addItem(name.upper() if name != "ora" else "ORA (layers)", name)
        self.jobs = QtWidgets.QSpinBox()
        self.jobs.setRange(1, max(1, os.cpu_count() or 1))
        self.jobs.setToolTip("Photos edited at once, each in a process of its own")

        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("not started")
        self.progress.setTextVisible(True)
        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        self.results = QtWidgets.QListWidget()
        self.results.setWordWrap(True)  # a failure's reason in full
        self.start_button = QtWidgets.QPushButton("Start")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QtWidgets.QPushButton("Stop")
        self.cancel_button.setToolTip("Stop after the photos being edited; Start again goes on")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.sheet_button = QtWidgets.QPushButton("Open contact sheet")
        self.sheet_button.setEnabled(False)
        self.sheet_button.clicked.connect(self.open_sheet)
        close = QtWidgets.QPushButton("Close")
        close.clicked.connect(self.close)

        form = QtWidgets.QFormLayout()
        files = QtWidgets.QHBoxLayout()
        files.addWidget(add_files)
        files.addWidget(add_folder)
        files.addWidget(remove)
        files.addStretch(1)
        form.addRow("Photos", self.photos)
        form.addRow("", files)
        form.addRow("Do", self.what)
        form.addRow("", self.instruction)
        form.addRow("Masks", self.masks)
        out_row = QtWidgets.QHBoxLayout()
        out_row.addWidget(self.output, 1)
        out_row.addWidget(browse)
        form.addRow("Save to", out_row)
        form.addRow("As", self.format)
        form.addRow("At once", self.jobs)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.sheet_button)
        buttons.addStretch(1)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(close)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)
        layout.addLayout(buttons)
        self.resize(560, 620)

        self.controller.engine_event.connect(self._on_progress)
        self.controller.done.connect(self._on_done)
        self.controller.error.connect(self._on_error)
        self.controller.running_changed.connect(self._on_running)

    # --- choosing ------------------------------------------------------------------------

    def add_photos(self, paths: Sequence[Path]) -> None:
        known = {self.photos.item(i).text() for i in range(self.photos.count())}
        for path in paths:
            if str(path) not in known:
                self.photos.addItem(str(path))
                known.add(str(path))

    def _ask_files(self) -> None:
        patterns = " ".join(f"*{s}" for s in sorted(PHOTO_SUFFIXES))
        names, _ = QtWidgets.QFileDialog.getOpenFileNames(
            self, "Add photos", "", f"Photos ({patterns})"
        )
        self.add_photos([Path(n) for n in names])

    def _ask_folder(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Add the photos of a folder")
        if folder:
            self.add_photos([Path(folder)])

    def _ask_output(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Save the results to")
        if folder:
            self.output.setText(folder)

    def _remove_selected(self) -> None:
        for item in self.photos.selectedItems():
            self.photos.takeItem(self.photos.row(item))

    # --- running -------------------------------------------------------------------------

    def spec(self) -> BatchSpec:
        name = self.what.currentData()
        action = None
        instruction = None
        if name is not None:
            action = RuleBook(Registry.from_catalogue()).action(name).to_json()
        else:
            instruction = self.instruction.text().strip()
            if not instruction:
                raise LayerpathError("Type what to do to every photo, e.g. 'make it warmer'.")
        return BatchSpec(
            instruction,
            action,
            self.format.currentData(),
            self.alpha,
            self.run_mode,
            self.settings,
            self.references,
        )

    def start(self) -> None:
        """Check what was chosen (a clear message, nothing runs, when it will not do) and
        run the batch on a worker thread."""
        if self.controller.running:
            return
        try:
            sources = [self.photos.item(i).text() for i in range(self.photos.count())]
            if not sources:
                raise LayerpathError("Add the photos to edit first.")
            if not self.output.text().strip():
                raise LayerpathError("Choose the folder the results go to.")
            out_dir = Path(self.output.text().strip()).expanduser()
            spec = self.spec()
            masks = Path(self.masks.text().strip()) if self.masks.text().strip() else None
            items = collect(sources, out_dir, spec.format, masks)
        except LayerpathError as exc:
            self._say(str(exc), error=True)
            self.finished_batch.emit(None)
            return
        self.out_dir = out_dir
        self.results.clear()
        self._say("")
        self.progress.setRange(0, len(items))
        self.progress.setValue(0)
        self.progress.setFormat(f"0 of {len(items)}")
        jobs = self.jobs.value()
        self.controller.start(
            lambda emit, cancelled: run_batch(
                items, spec, out_dir, jobs=jobs, on_progress=emit, cancel=cancelled
            )
        )

    def cancel(self) -> None:
        self.controller.cancel()
        self.progress.setFormat("stopping after the photos being edited…")

    def _on_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    def _on_progress(self, progress: object) -> None:
        assert isinstance(progress, Progress)
        self.progress.setRange(0, progress.total)
        self.progress.setValue(progress.finished)
        left = "" if progress.eta_s is None else f" — about {duration(progress.eta_s)} left"
        self.progress.setFormat(f"{progress.finished} of {progress.total}{left}")
        outcome = progress.outcome
        if outcome is None:
            if progress.finished:
                self._say(f"{progress.finished} photos were finished earlier; going on.")
            return
        name = Path(outcome.source).name
        if outcome.ok:
            text = f"{name} — done in {outcome.seconds:.1f} s"
        elif outcome.data is not None:
            text = f"{name} — partly done: {outcome.message}"
        else:
            text = f"{name} — failed: {outcome.message}"
        item = QtWidgets.QListWidgetItem(text)
        item.setToolTip(outcome.source)
        if not outcome.ok:
            item.setForeground(QtGui.QColor("#b00020"))
        self.results.addItem(item)
        self.results.scrollToBottom()

    def _on_done(self, report: object) -> None:
        assert isinstance(report, BatchReport)
        self.report = report
        self.sheet_button.setEnabled(True)
        parts = [f"{report.done} done"]
        if report.partial:
            parts.append(f"{report.partial} partly done")
        if report.failed:
            parts.append(f"{report.failed} failed")
        if report.skipped:
            parts.append(f"{report.skipped} finished earlier")
        summary = ", ".join(parts) + f" of {report.total} photos"
        if report.cancelled:
            self.progress.setFormat("stopped — Start goes on where it stopped")
            self._say(summary + ". Stopped: Start goes on with the rest.")
        else:
            self.progress.setFormat(summary)
            self._say(summary + ".", error=not report.ok)
        self.finished_batch.emit(report)

    def _on_error(self, message: str) -> None:
        self.progress.setFormat("not run")
        self._say(message, error=True)
        self.finished_batch.emit(None)

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #b00020;" if error else "")

    def sheet_path(self) -> Path | None:
        return None if self.out_dir is None else self.out_dir / SHEET

    def open_sheet(self) -> None:
        path = self.sheet_path()
        if path is not None and path.exists():
            QtGui.QDesktopServices.openUrl(QtCore.QUrl.fromLocalFile(str(path)))

    def closeEvent(self, event: QtGui.QCloseEvent | None) -> None:  # noqa: N802
        if self.controller.running:  # finished photos are kept; the rest wait for Start
            self.controller.shutdown()
        super().closeEvent(event)
