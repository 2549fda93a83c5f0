"""The controls under the step list for the step picked: an adjustment's amount and a
found region's edge. What each step offers is the session's to say
(RunSession.step_controls); this view shows it and reports a slider let go."""

from __future__ import annotations

from collections.abc import Callable

from layerpath.engine.hosts.session import EDGE_RANGE, StepControls
from layerpath.gui.qt import Qt, QtWidgets

#: the amount slider's steps per unit of an adjustment's amount
SLIDER_STEPS = 100


class StepControlsView(QtWidgets.QWidget):
    """An Amount row and a Region edge row, each shown only for a step that has it."""

    def __init__(
        self,
        amount_set: Callable[[float], None],
        edge_set: Callable[[int], None],
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.amount_label = QtWidgets.QLabel("Amount")
        self.amount = QtWidgets.QSlider(Qt.Orientation.Horizontal)
        self.amount_value = QtWidgets.QLabel()
        self.amount.valueChanged.connect(
            lambda v: self.amount_value.setText(f"{v / SLIDER_STEPS:+g}")
        )
        self.amount.sliderReleased.connect(lambda: amount_set(self.amount.value() / SLIDER_STEPS))
        self.amount_row = QtWidgets.QWidget()
        amount_layout = QtWidgets.QHBoxLayout(self.amount_row)
        amount_layout.setContentsMargins(0, 0, 0, 0)
        amount_layout.addWidget(self.amount_label)
        amount_layout.addWidget(self.amount, 1)
        amount_layout.addWidget(self.amount_value)
        self.edge = QtWidgets.QSlider(Qt.Orientation.Horizontal)
        self.edge.setRange(-EDGE_RANGE, EDGE_RANGE)
        self.edge_value = QtWidgets.QLabel()
        self.edge.valueChanged.connect(lambda v: self.edge_value.setText(f"{v:+d} px"))
        self.edge.sliderReleased.connect(lambda: edge_set(self.edge.value()))
        self.edge_row = QtWidgets.QWidget()
        edge_layout = QtWidgets.QHBoxLayout(self.edge_row)
        edge_layout.setContentsMargins(0, 0, 0, 0)
        edge_layout.addWidget(QtWidgets.QLabel("Region edge (shrink - / grow +)"))
        edge_layout.addWidget(self.edge, 1)
        edge_layout.addWidget(self.edge_value)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.amount_row)
        layout.addWidget(self.edge_row)
        self.show_controls(StepControls())

    def show_controls(self, controls: StepControls) -> None:
        amount = controls.amount
        self.amount_row.setVisible(amount is not None)
        if amount is not None:
            self.amount_label.setText(amount.name)
            self.amount.blockSignals(True)
            self.amount.setRange(
                round(amount.low * SLIDER_STEPS), round(amount.high * SLIDER_STEPS)
            )
            self.amount.setValue(round(amount.value * SLIDER_STEPS))
            self.amount.blockSignals(False)
            self.amount_value.setText(f"{amount.value:+g}")
        self.edge_row.setVisible(controls.edge is not None)
        if controls.edge is not None:
            self.edge.blockSignals(True)
            self.edge.setValue(controls.edge)
            self.edge.blockSignals(False)
            self.edge_value.setText(f"{self.edge.value():+d} px")
