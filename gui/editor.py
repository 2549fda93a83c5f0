"""The standalone layered editor: canvas, layers dock, the panel docked on the right.

The window is the host: it implements the Document protocol over a LayeredDocument,
so the panel works here exactly as it will inside Krita.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from layerpath.engine.execute.executor import Engine
from layerpath.engine.files.io import RAW_SUFFIXES, composite, split_masks
from layerpath.engine.hosts.document import LayeredDocument
from layerpath.engine.types import Snapshot, StepLayer
from layerpath.errors import BadInput, LayerpathError
from layerpath.gui.canvas import CanvasView, Tool
from layerpath.gui.layers import LayersDock
from layerpath.gui.panel import Panel
from layerpath.gui.qt import QAction, QActionGroup, Qt, QtGui, QtWidgets, QUndoStack
from layerpath.settings import Settings, load_settings

log = logging.getLogger(__name__)

OPEN_FILTER = (
    "Images (*.png *.jpg *.jpeg *.tif *.tiff *.webp *.ora *.psd *.heic *.heif "
    + " ".join(f"*{suffix}" for suffix in sorted(RAW_SUFFIXES))
    + ")"
)
SAVE_FILTER = "OpenRaster (*.ora);;Photoshop (*.psd);;Flattened PNG (*.png)"


class EditorWindow(QtWidgets.QMainWindow):
    """A small layered editor whose documents the engine edits by adding layers."""

    def __init__(
        self,
        engine_factory: Callable[[], Engine] | None = None,
        settings: Settings | None = None,
    ) -> None:
        super().__init__()
        self.setWindowTitle("layerpath")
        self.document: LayeredDocument | None = None
        self.path: Path | None = None
        self.undo = QUndoStack(self)
        self.canvas = CanvasView()
        self.setCentralWidget(self.canvas)
        self.layers = LayersDock(self.undo, self.refresh)
        self.settings = settings
        self.panel = Panel(self, engine_factory, settings)
        self._dock("Layers", self.layers, Qt.DockWidgetArea.LeftDockWidgetArea)
        self._dock("layerpath", self.panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.canvas.selection_changed.connect(self._selection_changed)
        self._menus()
        self.resize(1280, 800)

    def _dock(self, title: str, widget: QtWidgets.QWidget, area: Qt.DockWidgetArea) -> None:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)

    def _menus(self) -> None:
        bar = self.menuBar()
        assert bar is not None
        file_menu = bar.addMenu("&File")
        edit_menu = bar.addMenu("&Edit")
        select_menu = bar.addMenu("&Select")
        view_menu = bar.addMenu("&View")
        assert file_menu and edit_menu and select_menu and view_menu
        keys = QtGui.QKeySequence.StandardKey
        self._add(file_menu, "&Open…", self._ask_open, keys.Open)
        self._add(file_menu, "Save &As…", self._ask_save, keys.SaveAs)
        self._add(file_menu, "&Quit", self.close, keys.Quit)
        undo, redo = self.undo.createUndoAction(self), self.undo.createRedoAction(self)
        assert undo and redo
        undo.setShortcut(QtGui.QKeySequence.StandardKey.Undo)
        redo.setShortcut(QtGui.QKeySequence.StandardKey.Redo)
        edit_menu.addAction(undo)
        edit_menu.addAction(redo)
        tools = self.addToolBar("Tools")
        assert tools is not None
        tools.setObjectName("Tools")
        group = QActionGroup(self)
        for tool, label in (
            (Tool.PAN, "Pan"),
            (Tool.RECTANGLE, "Rectangle"),
            (Tool.LASSO, "Lasso"),
            (Tool.BRUSH, "Mask brush"),
            (Tool.OBJECT, "Object (click)"),
        ):
            action = QAction(label, self, checkable=True)
            action.setChecked(tool == Tool.PAN)
            action.triggered.connect(lambda _=False, t=tool: self.canvas.set_tool(t))
            group.addAction(action)
            tools.addAction(action)
            select_menu.addAction(action)
        select_menu.addSeparator()
        self._add(select_menu, "&Clear selection", self.canvas.clear_selection)
        self._add(select_menu, "&Name selection as mask…", self._ask_mask_name)
        self._add(view_menu, "Zoom &in", lambda: self.canvas.zoom(1.25), keys.ZoomIn)
        self._add(view_menu, "Zoom &out", lambda: self.canvas.zoom(0.8), keys.ZoomOut)
        self._add(view_menu, "&Fit", self.canvas.fit)

    def _add(
        self, menu: QtWidgets.QMenu, text: str, slot: Callable[[], object], key: object = None
    ) -> QAction:
        """A menu action, built the same way on Qt 5 and 6 (their addAction overloads differ)."""
        action = QAction(text, self)
        if key is not None:
            action.setShortcut(QtGui.QKeySequence(key))
        action.triggered.connect(lambda _=False: slot())
        menu.addAction(action)
        return action

    def closeEvent(self, event: QtGui.QCloseEvent | None) -> None:  # noqa: N802
        self.panel.controller.shutdown()
        super().closeEvent(event)

    # --- files ---------------------------------------------------------------------------

    def open_file(self, path: Path, mask_files: Mapping[str, Path] | None = None) -> None:
        """Open an image (PNG/JPEG/TIFF/ORA/PSD) with optional named mask files."""
        limit = int((self.settings or load_settings()).max_megapixels * 1e6)
        self.document = LayeredDocument.open(Path(path), mask_files or {}, limit)
        self.panel.document_opened(self.document)
        self.path = Path(path)
        self.undo.clear()
        self.canvas.clear_selection()
        self.setWindowTitle(f"layerpath — {self.path.name}")
        self.refresh()
        self.canvas.fit()

    def save_file(self, path: Path) -> Path:
        """Save layers (.ora/.psd) or the flattened picture (.png)."""
        if self.document is None:
            raise BadInput("There is no image to save; open one first.")
        return self.document.save(Path(path))

    def _ask_open(self) -> None:
        name, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open image", "", OPEN_FILTER)
        if name:
            self._guard(lambda: self.open_file(Path(name)))

    def _ask_save(self) -> None:
        name, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save as", "", SAVE_FILTER)
        if name:
            self._guard(lambda: self.save_file(Path(name)))

    def _ask_mask_name(self) -> None:
        if self.document is None or self.canvas.selection is None:
            self._show("Select a region first, then name it (e.g. 'cat').")
            return
        name, ok = QtWidgets.QInputDialog.getText(
            self, "Name the selection", "Mask name (e.g. cat):"
        )
        if ok and name.strip():
            self.name_selection(name.strip())

    def name_selection(self, name: str) -> None:
        """Keep the current selection as a named mask, so 'the <name>' finds it."""
        if self.document is None or self.canvas.selection is None:
            raise BadInput("Select a region first, then name it.")
        self.document.masks[name] = self.canvas.selection.copy()

    def _guard(self, action: Callable[[], object]) -> None:
        try:
            action()
        except LayerpathError as exc:
            self._show(str(exc))

    def _show(self, message: str) -> None:
        QtWidgets.QMessageBox.warning(self, "layerpath", message)

    # --- the Document protocol -------------------------------------------------------------

    def _require(self) -> LayeredDocument:
        if self.document is None:
            raise BadInput("Open an image first (File ▸ Open).")
        return self.document

    def snapshot(self) -> Snapshot:
        return self._require().snapshot()

    def add_group(self, name: str) -> str:
        group = self._require().add_group(name)
        self.refresh()
        return group

    def add_step(self, group: str, step: StepLayer) -> str:
        layer = self._require().add_step(group, step)
        self.refresh()
        return layer

    def set_visible(self, layer: str, visible: bool) -> None:
        self._require().set_visible(layer, visible)
        self.refresh()

    def is_visible(self, layer: str) -> bool:
        return self._require().is_visible(layer)

    def step_order(self, group: str) -> list[str]:
        return self._require().step_order(group)

    def replace_step(self, layer: str, step: StepLayer) -> None:
        self._require().replace_step(layer, step)
        self.refresh()

    def remove(self, layer: str) -> None:
        self._require().remove(layer)
        self.refresh()

    def record_run(self, report: Mapping[str, Any], group: str | None = None) -> None:
        self._require().record_run(report, group)

    # --- view ----------------------------------------------------------------------------

    def picture(self) -> np.ndarray:
        """The composite the canvas shows (mask layers are not part of the picture)."""
        document = self._require()
        return composite(split_masks(document.image)[0])

    def refresh(self) -> None:
        if self.document is None:
            return
        self.canvas.show_picture(self.picture())
        self.layers.show_image(self.document.image)
        self.panel.steps.sync_visibility(self.document.is_visible)

    def _selection_changed(self) -> None:
        if self.document is not None:
            self.document.selection = self.canvas.selection
