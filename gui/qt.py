"""The one Qt import of layerpath: PyQt6 when present, else PyQt5 (Krita 5 embeds it).

Write PyQt6-style scoped enums (Qt.AlignmentFlag.AlignLeft); PyQt5 5.11+ accepts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # type-check against PyQt6
    from PyQt6 import QtCore, QtGui, QtWidgets

    QT6 = True
else:
    try:
        from PyQt6 import QtCore, QtGui, QtWidgets

        QT6 = True
    except ImportError:  # Krita 5
        from PyQt5 import QtCore, QtGui, QtWidgets

        QT6 = False

Qt = QtCore.Qt
Signal = QtCore.pyqtSignal
Slot = QtCore.pyqtSlot

__all__ = ["QT6", "Qt", "QtCore", "QtGui", "QtWidgets", "Signal", "Slot"]
