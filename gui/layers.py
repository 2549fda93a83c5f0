"""The layers dock of the standalone editor: visibility, order, delete, rename, all undoable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from layerpath.engine.files.io import GroupLayer, LayeredImage, PixelLayer
from layerpath.gui.qt import Qt, QtCore, QtWidgets, QUndoCommand, QUndoStack

Layer: TypeAlias = PixelLayer | GroupLayer
Siblings: TypeAlias = list[Any]  # a document's layers or a group's children
LAYER = Qt.ItemDataRole.UserRole


class _LayerCommand(QUndoCommand):
    def __init__(self, text: str, changed: Callable[[], None]) -> None:
        super().__init__(text)
        self._changed = changed

    def redo(self) -> None:
        self._apply(forward=True)
        self._changed()

    def undo(self) -> None:
        self._apply(forward=False)
        self._changed()

    def _apply(self, forward: bool) -> None:
        raise NotImplementedError


class SetVisible(_LayerCommand):
    def __init__(self, layer: Layer, visible: bool, changed: Callable[[], None]) -> None:
        super().__init__(f"{'Show' if visible else 'Hide'} {layer.name}", changed)
        self.layer, self.visible = layer, visible

    def _apply(self, forward: bool) -> None:
        self.layer.visible = self.visible if forward else not self.visible


class Rename(_LayerCommand):
    def __init__(self, layer: Layer, name: str, changed: Callable[[], None]) -> None:
        super().__init__(f"Rename {layer.name}", changed)
        self.layer, self.old, self.new = layer, layer.name, name

    def _apply(self, forward: bool) -> None:
        self.layer.name = self.new if forward else self.old


class Delete(_LayerCommand):
    def __init__(self, siblings: Siblings, layer: Layer, changed: Callable[[], None]) -> None:
        super().__init__(f"Delete {layer.name}", changed)
        self.siblings, self.layer, self.index = siblings, layer, siblings.index(layer)

    def _apply(self, forward: bool) -> None:
        if forward:
            self.siblings.remove(self.layer)
        else:
            self.siblings.insert(self.index, self.layer)


class Move(_LayerCommand):
    """Move a layer up (towards the top, +1) or down (-1) among its siblings."""

    def __init__(
        self, siblings: Siblings, layer: Layer, step: int, changed: Callable[[], None]
    ) -> None:
        super().__init__(f"Move {layer.name}", changed)
        self.siblings, self.layer, self.step = siblings, layer, step

    def _apply(self, forward: bool) -> None:
        index = self.siblings.index(self.layer)
        target = index + (self.step if forward else -self.step)
        self.siblings.insert(target, self.siblings.pop(index))


class LayersDock(QtWidgets.QWidget):
    """Top layer first, as painters expect; groups hold a run's step layers."""

    def __init__(
        self,
        undo: QUndoStack,
        changed: Callable[[], None],
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.undo = undo
        self.changed = changed
        self.image: LayeredImage | None = None
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.itemChanged.connect(self._item_changed)
        buttons = QtWidgets.QHBoxLayout()
        for label, action in (
            ("Up", lambda: self.move(+1)),
            ("Down", lambda: self.move(-1)),
            ("Delete", self.delete_selected),
        ):
            button = QtWidgets.QPushButton(label)
            button.clicked.connect(action)
            buttons.addWidget(button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        layout.addLayout(buttons)

    def show_image(self, image: LayeredImage) -> None:
        self.image = image
        selected = self.selected_layer()
        self.tree.blockSignals(True)
        self.tree.clear()
        for layer in reversed(image.layers):
            item = self._item(layer)
            self.tree.addTopLevelItem(item)
            if isinstance(layer, GroupLayer):
                for child in reversed(layer.children):
                    item.addChild(self._item(child))
                item.setExpanded(True)
        self.tree.blockSignals(False)
        if selected is not None:
            self.select(selected)

    def items(self) -> list[QtWidgets.QTreeWidgetItem]:
        found = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is not None:
                found.append(top)
                children = (top.child(j) for j in range(top.childCount()))
                found.extend(child for child in children if child is not None)
        return found

    def select(self, layer: Layer) -> None:
        for item in self.items():
            if item.data(0, LAYER) is layer:
                self.tree.setCurrentItem(item)

    def selected_layer(self) -> Layer | None:
        item = self.tree.currentItem()
        return None if item is None else item.data(0, LAYER)

    def move(self, step: int) -> None:
        layer = self.selected_layer()
        siblings = self._siblings(layer)
        if layer is None or siblings is None:
            return
        if 0 <= siblings.index(layer) + step < len(siblings):
            self.undo.push(Move(siblings, layer, step, self.changed))

    def delete_selected(self) -> None:
        layer = self.selected_layer()
        siblings = self._siblings(layer)
        if layer is not None and siblings is not None:
            self.undo.push(Delete(siblings, layer, self.changed))

    def _siblings(self, layer: Layer | None) -> Siblings | None:
        if layer is None or self.image is None:
            return None
        if layer in self.image.layers:
            return self.image.layers
        for group in self.image.layers:
            if isinstance(group, GroupLayer) and layer in group.children:
                return group.children
        return None

    def _item(self, layer: Layer) -> QtWidgets.QTreeWidgetItem:
        item = QtWidgets.QTreeWidgetItem([layer.name])
        item.setData(0, LAYER, layer)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEditable)
        item.setCheckState(0, Qt.CheckState.Checked if layer.visible else Qt.CheckState.Unchecked)
        return item

    def _item_changed(self, item: QtWidgets.QTreeWidgetItem, column: int) -> None:
        """A tick or a name edited in the tree. The change is made once Qt has finished
        with the item: making it rebuilds the tree, and an item deleted inside its own
        itemChanged signal is read by Qt after the signal returns (a crash, now and then)."""
        layer: Layer = item.data(0, LAYER)
        visible = item.checkState(0) == Qt.CheckState.Checked
        name = item.text(0).strip()
        if visible != layer.visible:
            command: QUndoCommand = SetVisible(layer, visible, self.changed)
            needed: Callable[[], bool] = lambda: layer.visible != visible  # noqa: E731
        elif item.text(0) != layer.name and name:
            command = Rename(layer, name, self.changed)
            needed = lambda: layer.name != name  # noqa: E731
        else:
            return

        def apply() -> None:  # (unless the layer is so already: a second signal's change)
            if needed():
                self.undo.push(command)

        timer = QtCore.QTimer(self)  # (goes with the dock: no push after it is closed)
        timer.setSingleShot(True)
        timer.timeout.connect(apply)
        timer.timeout.connect(timer.deleteLater)
        timer.start(0)
