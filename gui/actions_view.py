"""The Actions tab: the photographer's saved actions, each run on the picture without
planning, renamed, deleted, exported to a file or imported from one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from layerpath.engine.learn.actions import MAX_FILE_BYTES, Action
from layerpath.engine.learn.rulebook import RuleBook
from layerpath.errors import LayerpathError
from layerpath.files import read_bytes
from layerpath.gui.qt import QtWidgets


class ActionsView(QtWidgets.QWidget):
    """The saved actions of the rule book `book` gives. `run` replays one on the picture
    (None: it could not be read); `error` and `note` say something in the panel."""

    def __init__(
        self,
        book: Callable[[], RuleBook],
        run: Callable[[Action | None], None],
        error: Callable[[str], None],
        note: Callable[[str], None],
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._book, self._run, self._error, self._note = book, run, error, note
        self.actions = QtWidgets.QListWidget()
        self.actions.itemDoubleClicked.connect(lambda item: self.run_action(item.text()))
        self.action_about = QtWidgets.QLabel()
        self.action_about.setWordWrap(True)
        self.actions.currentItemChanged.connect(
            lambda item, _: self.action_about.setText(item.toolTip() if item else "")
        )
        hint = QtWidgets.QLabel(
            "Your saved actions. One runs on the selection or the object's mask, "
            "with the tools and settings you saved. Save one from a step's menu."
        )
        hint.setWordWrap(True)
        self.run_action_button = QtWidgets.QPushButton("Run on this picture")
        self.run_action_button.clicked.connect(lambda: self._with_action(self.run_action))
        rename = QtWidgets.QPushButton("Rename…")
        rename.clicked.connect(lambda: self._with_action(self._ask_rename))
        delete = QtWidgets.QPushButton("Delete")
        delete.clicked.connect(lambda: self._with_action(self._ask_delete))
        export = QtWidgets.QPushButton("Export…")
        export.clicked.connect(lambda: self._with_action(self._ask_export))
        imported = QtWidgets.QPushButton("Import…")
        imported.clicked.connect(self._ask_import)
        row = QtWidgets.QHBoxLayout()
        for button in (rename, delete, export, imported):
            row.addWidget(button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.actions, 1)
        layout.addWidget(self.action_about)
        layout.addWidget(self.run_action_button)
        layout.addLayout(row)
        self.refresh()

    def refresh(self) -> None:
        """List the saved actions again (an unreadable actions file is said, not hidden)."""
        self.actions.clear()
        try:
            found = self._book().actions()
        except LayerpathError as exc:
            self._error(str(exc))
            return
        for action in found.values():
            item = QtWidgets.QListWidgetItem(action.name)
            item.setToolTip(action.describe())
            self.actions.addItem(item)

    def _with_action(self, then: Callable[[str], object]) -> None:
        item = self.actions.currentItem()
        if item is None:
            self._error("Pick an action in the list first.")
            return
        then(item.text())

    def run_action(self, name: str) -> None:
        """Replay a saved action on this picture: its tools and settings, no planning."""
        try:
            action = self._book().action(name)
        except LayerpathError as exc:
            self._error(str(exc))
            self._run(None)
            return
        self._run(action)

    def run_nth(self, number: int) -> None:
        """Run the action at place `number` (from 1) of the list."""
        self.refresh()
        if not 1 <= number <= self.actions.count():
            self._error(f"There is no saved action {number}; save one from a step's menu.")
            self._run(None)
            return
        item = self.actions.item(number - 1)
        assert item is not None
        self.run_action(item.text())

    def rename(self, name: str, new: str) -> None:
        try:
            self._book().rename_action(name, new)
        except LayerpathError as exc:
            self._error(str(exc))
        self.refresh()

    def delete(self, name: str) -> None:
        try:
            self._book().delete_action(name)
        except LayerpathError as exc:
            self._error(str(exc))
        self.refresh()

    def export(self, name: str, path: Path, replace: bool = True) -> None:
        """Write the action to a file (the file dialog has asked before replacing one;
        layerpath's own stores are never written over)."""
        try:
            self._book().export_action(name, path, replace)
        except (LayerpathError, OSError) as exc:
            self._error(f"Could not export '{name}': {exc}")
            return
        self._note(f"Exported '{name}' to {path}.")

    def import_(self, path: Path, replace: bool = False) -> None:
        """Add an action from a file; a bad file is refused and changes nothing."""
        try:
            data = read_bytes(path, "action file", MAX_FILE_BYTES)
            action = self._book().import_action(data, replace=replace)
        except (LayerpathError, OSError) as exc:
            self._error(f"Could not import {path.name}: {exc}")
            return
        self._note(f"Imported '{action.name}'.")
        self.refresh()

    def _ask_rename(self, name: str) -> None:
        new, ok = QtWidgets.QInputDialog.getText(self, "Rename action", "New name:", text=name)
        if ok and new.strip():
            self.rename(name, new)

    def _ask_delete(self, name: str) -> None:
        sure = QtWidgets.QMessageBox.question(self, "Delete action", f"Delete the action '{name}'?")
        if sure == QtWidgets.QMessageBox.StandardButton.Yes:
            self.delete(name)

    def _ask_export(self, name: str) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export action", f"{name}.json", "Actions (*.json)"
        )
        if path:
            self.export(name, Path(path))

    def _ask_import(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Import action", "", "Actions (*.json)"
        )
        if path:
            self.import_(Path(path))
