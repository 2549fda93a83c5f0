"""The panel's reference slots: pictures, notes and voice memos the instruction can
name ('recolor the wall to the colour of swatch', 'replace the sign text with the name
in note', 'match the colours of ref', 'replace the sky with the one in ref'). Each has
a name, shown with what it is; a file that cannot be used is refused when added, with
the reason, before any run."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from layerpath.engine.plan.references import (
    NAME,
    PICTURES,
    SOUNDS,
    TEXTS,
    Reference,
    load_reference,
)
from layerpath.errors import LayerpathError
from layerpath.gui.qt import Qt, QtWidgets, Signal

NAME_ROLE = Qt.ItemDataRole.UserRole


def name_for(path: Path, taken: set[str]) -> str:
    """A name for a file's reference: its stem as a word ('paint chip.jpg' -> 'paint_chip'),
    numbered when taken, 'ref' when the stem gives none."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", path.stem).strip("_-")
    stem = stem if stem and stem[0].isalpha() else f"ref{stem}" if stem else "ref"
    stem = stem[:28]
    name, number = stem, 2
    while name.lower() in {t.lower() for t in taken}:
        name, number = f"{stem}{number}", number + 1
    return name


class ReferenceSlots(QtWidgets.QWidget):
    """The references of the next run, by name: Add… and Remove; double-click renames."""

    changed = Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.references: dict[str, Reference] = {}
        self.list = QtWidgets.QListWidget()
        self.list.setMaximumHeight(70)
        self.list.setToolTip(
            "Name a reference in the instruction: 'recolor the wall to the colour of swatch', "
            "'replace the sign text with the name in note', 'match the colours of ref', "
            "'replace the sky with the one in ref'. Double-click to rename."
        )
        self.list.itemDoubleClicked.connect(lambda item: self._ask_rename(item))
        self.add_button = QtWidgets.QPushButton("Add reference…")
        self.add_button.setToolTip("A picture (a swatch, a photo with the sky or colours "
                                   "you want), a note (.txt) or a voice memo")  # fmt: skip
        self.add_button.clicked.connect(self._ask_add)
        self.remove_button = QtWidgets.QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_current)
        self.summary = QtWidgets.QLabel("References: none")
        self.problem = QtWidgets.QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b00020;")
        self.problem.setVisible(False)
        top = QtWidgets.QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.summary, 1)
        top.addWidget(self.add_button)
        top.addWidget(self.remove_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.list)
        layout.addWidget(self.problem)
        self._refresh()

    def add(self, path: Path, name: str | None = None) -> Reference | None:
        """Add a file as a reference (its name from the file unless given); on a file that
        cannot be used, say why beside the list and add nothing."""
        try:
            reference = load_reference(name or name_for(path, set(self.references)), path)
            if reference.name.lower() in {n.lower() for n in self.references}:
                raise LayerpathError(f"A reference is named '{reference.name}' already.")
        except LayerpathError as exc:
            self._say(str(exc))
            return None
        self.add_reference(reference)
        return reference

    def add_reference(self, reference: Reference) -> None:
        """Add one read already (a command line's --ref)."""
        self._say("")
        self.references[reference.name] = reference
        self._refresh()

    def rename(self, old: str, new: str) -> bool:
        """Give a reference another name (checked as a new one would be)."""
        reference = self.references.get(old)
        if reference is None or new == old:
            return False
        if not NAME.match(new):
            self._say(
                f"'{new}' cannot name a reference: use a word of letters, digits, - or _ "
                "starting with a letter."
            )
            return False
        if new.lower() in {n.lower() for n in self.references if n != old}:
            self._say(f"A reference is named '{new}' already.")
            return False
        del self.references[old]
        self.references[new] = dataclasses.replace(reference, name=new)
        self._say("")
        self._refresh()
        return True

    def remove_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.references.pop(item.data(NAME_ROLE), None)
            self._refresh()

    def _refresh(self) -> None:
        """The list, shown only when there is something in it (a docker is narrow)."""
        self.list.clear()
        for name, reference in self.references.items():
            item = QtWidgets.QListWidgetItem(f"{name} — {reference.describe()}")
            item.setData(NAME_ROLE, name)
            self.list.addItem(item)
        names = ", ".join(self.references) or "none"
        self.summary.setText(f"References: {names}")
        self.list.setVisible(bool(self.references))
        self.remove_button.setVisible(bool(self.references))
        self.changed.emit()

    def _say(self, problem: str) -> None:
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))

    def _ask_add(self) -> None:
        endings = " ".join(f"*{e}" for e in sorted(PICTURES | TEXTS | SOUNDS))
        paths, _ = QtWidgets.QFileDialog.getOpenFileNames(
            self, "Add references", "", f"Pictures, notes, voice memos ({endings})"
        )
        for path in paths:
            self.add(Path(path))

    def _ask_rename(self, item: QtWidgets.QListWidgetItem) -> None:
        old = item.data(NAME_ROLE)
        new, ok = QtWidgets.QInputDialog.getText(self, "Rename reference", "Name:", text=old)
        if ok and new.strip():
            self.rename(old, new.strip())
