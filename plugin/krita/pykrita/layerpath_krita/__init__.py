"""layerpath for Krita: loads the docker, or a docker that explains what is missing and
offers to install it for Krita's own Python (bootstrap.py)."""

from __future__ import annotations

import logging
import queue
import sys
import threading

from krita import DockWidget, DockWidgetFactory, DockWidgetFactoryBase, Krita

from . import bootstrap, env

problem = env.activate()

if problem is None:
    from layerpath.plugin.krita.docker import register

    register()
else:
    logging.getLogger("layerpath").warning(problem)
    # layerpath (and its Qt shim) is not importable: use the Qt that Krita already loaded
    if "PyQt6.QtWidgets" in sys.modules:
        from PyQt6.QtCore import QTimer
        from PyQt6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget
    else:
        from PyQt5.QtCore import QTimer  # type: ignore[assignment]
        from PyQt5.QtWidgets import (  # type: ignore[assignment]
            QLabel,
            QPlainTextEdit,
            QPushButton,
            QVBoxLayout,
            QWidget,
        )

    class Installing:
        """pip on a thread of its own; its lines and its end read from a queue on Krita's
        (a timer): Krita never waits for it."""

        #: one install at a time, whichever window's docker asked for it
        running = threading.Lock()

        def __init__(self) -> None:
            self.lines: queue.Queue[str | None] = queue.Queue()
            self.failure: str | None = None

        def start(self) -> bool:
            """False when another docker's install is running."""
            if not Installing.running.acquire(blocking=False):
                return False
            threading.Thread(target=self._run, daemon=True).start()
            return True

        def _run(self) -> None:
            try:
                bootstrap.install(env.env_dir(), self.lines.put)
            except Exception as exc:  # (said in the docker, whatever it was)
                self.failure = str(exc)
            finally:
                Installing.running.release()
                self.lines.put(None)

    class MissingDocker(DockWidget):
        """Shown instead of the panel until the environment is installed: what is
        missing, and a button that installs it (its progress line by line)."""

        def __init__(self) -> None:
            super().__init__()
            self.setWindowTitle("layerpath")
            holder = QWidget()
            layout = QVBoxLayout(holder)
            self.label = QLabel(problem)
            self.label.setWordWrap(True)
            layout.addWidget(self.label)
            self.button = QPushButton("Install layerpath for Krita")
            cannot = bootstrap.problem()
            self.button.setEnabled(cannot is None)
            self.button.setToolTip(
                cannot or "Fetches its Python packages for Krita's own Python (a few hundred MB)"
            )
            self.button.clicked.connect(self.install)
            layout.addWidget(self.button)
            self.log = QPlainTextEdit()
            self.log.setReadOnly(True)
            self.log.hide()
            layout.addWidget(self.log)
            self.setWidget(holder)
            self.installing: Installing | None = None
            self.timer = QTimer(self)
            self.timer.timeout.connect(self._poll)

        def install(self) -> None:
            installing = Installing()
            if not installing.start():
                self.label.setText("The install is running in another window's docker.")
                return
            self.installing = installing
            self.button.setEnabled(False)
            self.label.setText("Installing layerpath's packages for Krita's Python…")
            self.log.show()
            self.timer.start(200)

        def _poll(self) -> None:
            assert self.installing is not None
            while True:
                try:
                    line = self.installing.lines.get_nowait()
                except queue.Empty:
                    return
                if line is not None:
                    self.log.appendPlainText(line)
                    continue
                self.timer.stop()
                if self.installing.failure is None:
                    self.label.setText("Installed. Restart Krita to use layerpath.")
                else:
                    self.label.setText(
                        f"The packages could not be installed: {self.installing.failure}"
                    )
                    self.button.setEnabled(True)
                return

        def canvasChanged(self, canvas: object) -> None:  # noqa: N802
            pass

    Krita.instance().addDockWidgetFactory(
        DockWidgetFactory("layerpath_docker", DockWidgetFactoryBase.DockRight, MissingDocker)
    )
