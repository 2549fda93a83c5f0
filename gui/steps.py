"""The step list: one row per executed tool step; its checkbox shows or hides the layer."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from layerpath.engine.hosts.document import Document
from layerpath.engine.types import Expert, Opinion, StepLayer
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


def verdicts(opinions: Sequence[Opinion], threshold: float) -> list[tuple[Expert, bool]]:
    """Each expert that judged a step and whether it agreed (its lowest opinion, when
    several judged for it: the checks and a model), in the experts' order."""
    lowest: dict[Expert, float] = {}
    for opinion in opinions:
        lowest[opinion.expert] = min(opinion.score, lowest.get(opinion.expert, 1.0))
    return [(e, lowest[e] >= threshold) for e in Expert if e in lowest]


def expert_summary(opinions: Sequence[Opinion], threshold: float) -> str:
    """'✓ as asked · ✓ clean · ✗ tones kept': a step list row's line of checks."""
    return " · ".join(f"{'✓' if ok else '✗'} {e.short}" for e, ok in verdicts(opinions, threshold))


def expert_details(opinions: Sequence[Opinion]) -> str:
    """Each expert's verdict on its own line, with who judged and why."""
    lines = []
    for opinion in sorted(opinions, key=lambda o: list(Expert).index(o.expert)):
        why = f": {opinion.reason}" if opinion.reason else ""
        lines.append(
            f"{opinion.expert.words.capitalize()} — {opinion.score:.2f} ({opinion.by}){why}"
        )
    return "\n".join(lines)


class StepList(QtWidgets.QListWidget):
    """Executed steps, newest last. Unchecking a step hides its layer (undo one step)."""

    visibility_changed = Signal(str, bool)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.steps: dict[str, StepLayer] = {}
        # a row's text (the panel gives plain words); default: the layer's name
        self.describe: Callable[[StepLayer], str] = lambda step: f"{step.name}\n{step.cost:.1f} s"
        # the score an expert's opinion must reach to count as agreeing (the settings')
        self.threshold = 0.5
        self.setIconSize(QtCore.QSize(THUMB, THUMB))
        self.setAlternatingRowColors(True)
        self.itemChanged.connect(self._item_changed)

    def add_step(self, layer_id: str, step: StepLayer) -> QtWidgets.QListWidgetItem:
        item = QtWidgets.QListWidgetItem()
        item.setData(LAYER_ID, layer_id)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        self.blockSignals(True)
        item.setCheckState(Qt.CheckState.Checked if step.visible else Qt.CheckState.Unchecked)
        self.blockSignals(False)
        self._show(item, layer_id, step)
        self.addItem(item)
        self.scrollToItem(item)
        return item

    def update_step(self, layer_id: str, step: StepLayer) -> None:
        """The row of a step whose layer holds a step made again."""
        item = self.item_for(layer_id)
        if item is not None:
            self.blockSignals(True)  # (its text, not its tick, changes)
            self._show(item, layer_id, step)
            self.blockSignals(False)

    def _show(self, item: QtWidgets.QListWidgetItem, layer_id: str, step: StepLayer) -> None:
        self.steps[layer_id] = step
        text = self.describe(step)
        if step.opinions:
            text += f" · {expert_summary(step.opinions, self.threshold)}"
        item.setText(text)
        if step.pixels is not None:
            item.setIcon(thumbnail(step.pixels))
        tip = (
            f"{step.name}\n{step.kind.value} layer from {step.tool}, quality "
            f"{step.quality:.2f}; params {dict(step.params)}"
        )
        if step.opinions:
            tip += "\n" + expert_details(step.opinions)
        if step.text:  # what OCR read: shown as data, never fed back to the planner
            tip += f"\nText read: {step.text}"
        item.setToolTip(tip)

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
