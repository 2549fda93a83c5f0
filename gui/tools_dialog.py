"""The tools and models dialog: every tool with whether it can run here (and the fix
when not), every model with its size, licence and state; models download on a worker
thread with a progress bar, can be cancelled (the download resumes later) and removed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import cast

from layerpath.engine.learn.knowledge import model_description_table
from layerpath.errors import Cancelled
from layerpath.gui.qt import Qt, QtGui, QtWidgets, Signal
from layerpath.gui.worker import RunController
from layerpath.tools.models import ModelManager, ModelState, human_size
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)
TOOL_COLUMNS = ("Tool", "Subtasks", "Backend", "Model", "State")
MODEL_COLUMNS = ("Model", "Size", "Licence", "State", "Used by")


class ToolsDialog(QtWidgets.QDialog):
    """Shows the registry's tools and the model manager's models."""

    models_changed = Signal()

    def __init__(
        self,
        models: ModelManager,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("layerpath tools and models")
        self.resize(900, 560)
        self.models = models
        self.controller = RunController(self)
        self.tools = QtWidgets.QTreeWidget()
        self.tools.setHeaderLabels(TOOL_COLUMNS)
        self.tools.setRootIsDecorated(False)
        self.model_list = QtWidgets.QTreeWidget()
        self.model_list.setHeaderLabels(MODEL_COLUMNS)
        self.model_list.setRootIsDecorated(False)
        self.download_button = QtWidgets.QPushButton("Download")
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.remove_button = QtWidgets.QPushButton("Remove")
        self.progress = QtWidgets.QProgressBar()
        self.progress.setFormat("")
        self.message = QtWidgets.QLabel()
        self.message.setWordWrap(True)
        self.download_button.clicked.connect(self.download_selected)
        self.cancel_button.clicked.connect(self.controller.cancel)
        self.remove_button.clicked.connect(self.remove_selected)
        self.controller.engine_event.connect(self._on_progress)
        self.controller.done.connect(self._on_done)
        self.controller.error.connect(self._on_error)
        self.controller.running_changed.connect(self._on_running)

        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.progress, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(QtWidgets.QLabel(f"Models (in {models.cache})"))
        layout.addWidget(self.model_list, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(QtWidgets.QLabel("Tools (the search uses only those that can run)"))
        layout.addWidget(self.tools, 2)
        self.refresh()

    def refresh(self) -> None:
        selected = self.selected_model()
        self.model_list.clear()
        for status in self.models.statuses():
            spec = status.spec
            item = QtWidgets.QTreeWidgetItem(
                [
                    spec.name,
                    human_size(spec.size),
                    spec.licence,
                    status.state.value,
                    ", ".join(spec.tools) or "—",
                ]
            )
            item.setToolTip(0, spec.description)
            item.setData(0, Qt.ItemDataRole.UserRole, spec.name)
            self.model_list.addTopLevelItem(item)
            if spec.name == selected:
                self.model_list.setCurrentItem(item)
        self.tools.clear()
        for row in model_description_table(Registry.from_catalogue(models=self.models)):
            model = row["model"]
            state = "can run" if row["available"] else f"{row['unavailable_reason']}"
            item = QtWidgets.QTreeWidgetItem(
                [
                    str(row["name"]),
                    ", ".join(row["subtasks"]),
                    str(row["backend"]),
                    model["name"] if isinstance(model, dict) else "—",
                    state,
                ]
            )
            if not row["available"]:
                item.setToolTip(4, f"Fix: {row['fix']}")
            self.tools.addTopLevelItem(item)
        for view in (self.model_list, self.tools):
            for column in range(view.columnCount()):
                view.resizeColumnToContents(column)

    def selected_model(self) -> str | None:
        item = self.model_list.currentItem()
        return None if item is None else str(item.data(0, Qt.ItemDataRole.UserRole))

    def select(self, name: str) -> None:
        for i in range(self.model_list.topLevelItemCount()):
            item = self.model_list.topLevelItem(i)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) == name:
                self.model_list.setCurrentItem(item)

    def download_selected(self) -> None:
        name = self.selected_model()
        if name is None or self.controller.running:
            return
        self.message.setText(f"Downloading {name}…")
        self.progress.setRange(0, 0)
        models = self.models

        def job(emit: Callable[[object], None], cancelled: Callable[[], bool]) -> object:
            def progress(path: str, done: int, total: int | None) -> None:
                if cancelled():
                    raise Cancelled(f"Download of {name} cancelled; it resumes next time.")
                emit((path, done, total))

            return models.download(name, progress)

        self.controller.start(job)

    def remove_selected(self) -> None:
        name = self.selected_model()
        if name is None or self.controller.running:
            return
        freed = self.models.remove(name)
        self.message.setText(f"Removed {name} ({human_size(freed)} freed).")
        self.refresh()
        self.models_changed.emit()

    def _on_progress(self, event: object) -> None:
        path, done, total = cast(tuple[str, int, "int | None"], event)
        if total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * done / total))
            self.progress.setFormat(f"{path}: {human_size(done)} of {human_size(total)}")
        else:
            self.progress.setFormat(f"{path}: {human_size(done)}")

    def _on_done(self, status: object) -> None:
        state = getattr(status, "state", None)
        name = getattr(getattr(status, "spec", None), "name", "")
        self.progress.setRange(0, 1)
        self.progress.setValue(1 if state == ModelState.PRESENT else 0)
        self.progress.setFormat("done" if state == ModelState.PRESENT else "")
        self.message.setText(f"{name}: {getattr(state, 'value', state)}.")
        self.refresh()
        self.models_changed.emit()

    def _on_error(self, message: str) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.message.setText(message)
        self.refresh()

    def _on_running(self, running: bool) -> None:
        self.download_button.setEnabled(not running)
        self.remove_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    def done(self, result: int) -> None:
        """Closing stops a download after its current chunk; it resumes next time."""
        self.controller.cancel()
        super().done(result)

    def closeEvent(self, event: QtGui.QCloseEvent | None) -> None:  # noqa: N802
        self.controller.shutdown()
        super().closeEvent(event)
