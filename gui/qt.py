"""The one Qt import of layerpath: PyQt6 when present, else PyQt5 (Krita 5 embeds it).

Write PyQt6-style scoped enums (Qt.AlignmentFlag.AlignLeft); PyQt5 5.11+ accepts them.
Classes that moved between modules in Qt 6 (QAction, QUndoStack, ...) are taken from here.
A PyQt5 that is already loaded (Krita 5) wins; LAYERPATH_QT=pyqt5 forces PyQt5 (the tests
use it to check the Krita 5 code path).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type-check against PyQt6
    from PyQt6 import QtCore, QtGui, QtWidgets

    QT6 = True
else:
    try:
        # Inside Krita 5 PyQt5 is already loaded: a second Qt in one process cannot work.
        wants_qt5 = os.environ.get("LAYERPATH_QT", "").lower() == "pyqt5"
        if wants_qt5 or ("PyQt5.QtCore" in sys.modules and "PyQt6.QtCore" not in sys.modules):
            raise ImportError("PyQt5 requested or already loaded")
        from PyQt6 import QtCore, QtGui, QtWidgets

        QT6 = True
    except ImportError:  # Krita 5
        from PyQt5 import QtCore, QtGui, QtWidgets

        QT6 = False

Qt = QtCore.Qt
Signal = QtCore.pyqtSignal
Slot = QtCore.pyqtSlot
_moved = QtGui if QT6 else QtWidgets  # Qt 6 moved these from QtWidgets to QtGui
QAction = _moved.QAction
QActionGroup = _moved.QActionGroup
QUndoStack = _moved.QUndoStack
QUndoCommand = _moved.QUndoCommand


def event_point(event: Any) -> QtCore.QPoint:
    """A mouse event's position in widget coordinates (Qt 6: position(), Qt 5: pos())."""
    return event.position().toPoint() if QT6 else event.pos()


__all__ = [
    "QT6",
    "QAction",
    "QActionGroup",
    "QUndoCommand",
    "QUndoStack",
    "Qt",
    "QtCore",
    "QtGui",
    "QtWidgets",
    "Signal",
    "Slot",
    "event_point",
]
