"""The step list: one row per executed tool step; its checkbox shows or hides the layer."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from layerpath.engine.document import Document
from layerpath.engine.types import StepLayer
from layerpath.errors import LayerpathError
from layerpath.gui.qt import Qt, QtCore, QtGui, QtWidgets, Signal

THUMB = 40
LAYER_ID = Qt.ItemDataRole.UserRole


def rgba_image(pixels: np.ndarray) -> QtGui.QImage:
    """A QImage holding its own copy of an RGBA uint8 array."""
    data = np.ascontiguousarray(pixels, dtype=np.uint8)
    h, w = data.shape[:2]
    return QtGui.QImage(data.data, w, h, 4 * w, QtGui.QImage.Format.Format_RGBA8888).copy()


def thumbnail(pixels: np.ndarray) -> QtGui.QIcon:
    image = rgba_image(pixels).scaled(
        THUMB, THUMB, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )
    return QtGui.QIcon(QtGui.QPixmap.fromImage(image))


class StepList(QtWidgets.QListWidget):
    """Executed steps, newest last. Unchecking a step hides its layer (undo one step)."""

    visibility_changed = Signal(str, bool)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.steps: dict[str, StepLayer] = {}
        # a row's text (the panel gives plain words); default: the layer's name
        self.describe: Callable[[StepLayer], str] = lambda step: f"{step.name}\n{step.cost:.1f} s"
        self.setIconSize(QtCore.QSize(THUMB, THUMB))
        self.setAlternatingRowColors(True)
        self.itemChanged.connect(self._item_changed)

    def add_step(self, layer_id: str, step: StepLayer) -> QtWidgets.QListWidgetItem:
        self.steps[layer_id] = step
        item = QtWidgets.QListWidgetItem(self.describe(step))
        item.setData(LAYER_ID, layer_id)
        if step.pixels is not None:
            item.setIcon(thumbnail(step.pixels))
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        self.blockSignals(True)
        item.setCheckState(Qt.CheckState.Checked if step.visible else Qt.CheckState.Unchecked)
        self.blockSignals(False)
        tip = (
            f"{step.name}\n{step.kind.value} layer from {step.tool}, quality "
            f"{step.quality:.2f}; params {dict(step.params)}"
        )
        if step.text:  # what OCR read: shown as data, never fed back to the planner
            tip += f"\nText read: {step.text}"
        item.setToolTip(tip)
        self.addItem(item)
        self.scrollToItem(item)
        return item

    def item_for(self, layer_id: str) -> QtWidgets.QListWidgetItem | None:
        for row in range(self.count()):
            item = self.item(row)
            if item is not None and item.data(LAYER_ID) == layer_id:
                return item
        return None

    def sync_visibility(self, is_visible: Callable[[str], bool]) -> None:
        """Match the checkboxes to the layers (after the host toggled one itself)."""
        self.blockSignals(True)
        for row in range(self.count()):
            item = self.item(row)
            if item is not None:
                try:
                    shown = is_visible(item.data(LAYER_ID))
                except LayerpathError:  # the layer was deleted in the host
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                    continue
                item.setCheckState(Qt.CheckState.Checked if shown else Qt.CheckState.Unchecked)
        self.blockSignals(False)

    def _item_changed(self, item: QtWidgets.QListWidgetItem) -> None:
        layer_id = item.data(LAYER_ID)
        visible = item.checkState() == Qt.CheckState.Checked
        if self.document is not None:
            self.document.set_visible(layer_id, visible)
        self.visibility_changed.emit(layer_id, visible)
