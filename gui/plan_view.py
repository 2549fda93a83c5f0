"""The plan as the panel shows it: one row per subtask in plain words (what it is, how it
is done, where it stands, how long it took or will take). Tool ids, rule ids and scores
go to Details, never here."""

from __future__ import annotations

from collections.abc import Mapping

from layerpath.engine.execute.preview import Preview
from layerpath.engine.types import Subtask
from layerpath.gui.qt import QtWidgets

#: the plan's columns: plain words only (tool ids, rule ids and scores go to Details)
PLAN_COLUMNS = ("Step", "How", "Status", "Time")


class PlanView(QtWidgets.QTreeWidget):
    """The plan's rows: a preview waiting to run, then the run's subtasks as they go."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(list(PLAN_COLUMNS))
        self.setRootIsDecorated(False)
        self._items: dict[str, QtWidgets.QTreeWidgetItem] = {}

    def clear(self) -> None:
        super().clear()
        self._items.clear()

    def show_preview(self, preview: Preview) -> str:
        """Each planned step, what will do it and about how long; returns the note that
        goes above it (how many steps, the time, what cannot run here and why)."""
        self.clear()
        for step in preview.steps:
            status = "can't run here" if not step.tools else "planned"
            how = " → ".join(step.labels) or "—"
            item = QtWidgets.QTreeWidgetItem(
                [step.subtask.describe(), how, status, f"~{step.seconds:.1f} s"]
            )
            if step.problem:
                item.setToolTip(0, step.problem)
            self.addTopLevelItem(item)
        self._fit()
        total = sum(s.seconds for s in preview.steps)
        took = f"about {total:.0f} s" if total >= 1 else "under a second"
        count = len(preview.steps)
        note = f"{count} step{'' if count == 1 else 's'}, {took}. Check them, then run."
        blocked = [s for s in preview.steps if not s.tools]
        if blocked:
            note += " " + " ".join(s.problem for s in blocked[:2])
        for warning in preview.plan.warnings:
            note += f" {warning}"
        return note

    def show_plan(self, plan: tuple[Subtask, ...], expected: Mapping[str, str]) -> None:
        """The run's subtasks, waiting; `expected`: what a confirmed preview said would
        do each (subtask id -> tools in words)."""
        self.clear()
        for subtask in plan:
            how = expected.get(subtask.id, "")
            item = QtWidgets.QTreeWidgetItem([subtask.describe(), how, "waiting", ""])
            self.addTopLevelItem(item)
            self._items[subtask.id] = item
        self._fit()

    def set(self, subtask: Subtask, **columns: str) -> None:
        """A subtask's row, some of its columns (by PLAN_COLUMNS name) said anew."""
        item = self._items.get(subtask.id)
        if item is None:
            return
        for name, value in columns.items():
            item.setText(PLAN_COLUMNS.index(name), value)

    def _fit(self, first: int = 0) -> None:
        for column in range(first, len(PLAN_COLUMNS)):
            self.resizeColumnToContents(column)

    def fit_details(self) -> None:
        """The columns after the step's words fitted to what they now say."""
        self._fit(1)
