"""A scripted check of the docker in Krita's own window, for tests and bug reports.

    LAYERPATH_KRITA_SCREENSHOT=out.png [LAYERPATH_KRITA_INSTRUCTION="..."] krita IMAGE

Once the window, the picture and the docker are up, the docker is shown; with an
instruction, it is typed into the panel and run like a click on Run. Then out.png gets a
screenshot of the whole window, out.json what was seen (docker, panel, run, the
document's layers), out.kra the document, and Krita quits through its own file_quit
action.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from krita import Krita

from layerpath.gui.qt import QtCore
from layerpath.plugin.krita.document import walk

SCREENSHOT_ENV = "LAYERPATH_KRITA_SCREENSHOT"
INSTRUCTION_ENV = "LAYERPATH_KRITA_INSTRUCTION"
WAIT_FOR_WINDOW_S = 90
WAIT_FOR_RUN_S = 240


def _picture(document: Any) -> bytes:
    """The picture Krita shows, as it reads now: a document opened from the command line
    exists before its picture is loaded, reads as transparent, then fills in tile by
    tile."""
    document.waitForDone()
    return bytes(document.pixelData(0, 0, document.width(), document.height()))


class Check:
    def __init__(self, docker_id: str) -> None:
        self.docker_id = docker_id
        self.target = Path(os.environ[SCREENSHOT_ENV])
        self.instruction = os.environ.get(INSTRUCTION_ENV, "")
        self.seen: dict[str, Any] = {"window": False, "docker": False}
        self.tries = WAIT_FOR_WINDOW_S
        self.shot = False
        self.last_picture = 0

    def poll(self) -> None:
        """Wait until Krita shows a window with a document and our docker."""
        app = Krita.instance()
        window = app.activeWindow()
        document = app.activeDocument()
        docks = [d for d in app.dockers() if d.objectName() == self.docker_id]
        self.tries -= 1
        data = _picture(document) if document is not None else b""
        picture = hash(data) if any(data) else 0  # 0 while it reads as transparent
        shown, self.last_picture = picture != 0 and picture == self.last_picture, picture
        if (window is None or not shown or not docks) and self.tries > 0:  # loaded, settled
            QtCore.QTimer.singleShot(1000, self.poll)  # (a photographer sees it first)
            return
        self.seen.update(window=window is not None, docker=bool(docks), picture=shown)
        if document is not None:  # what the run will read, for a failure's report
            self.seen["picture_read"] = [
                document.width(),
                document.height(),
                str(document.colorModel()),
                str(document.colorDepth()),
                round(sum(data[::97]) / max(1, len(data[::97])), 1),
            ]
        if not docks:
            self.finish()
            return
        docker = docks[0]
        docker.setVisible(True)
        docker.raise_()
        panel = docker.current_panel()
        self.seen["docker_title"] = docker.windowTitle()
        self.seen["panel"] = panel is not None
        if panel is None or not self.instruction:
            QtCore.QTimer.singleShot(3000, self.finish)
            return
        panel.run_finished.connect(self.run_finished)
        panel.plan_ready.connect(lambda preview: self.plan_ready(panel, preview))
        panel.instruction.setPlainText(self.instruction)
        panel.start_run()  # as the Run button: the plan is shown first
        QtCore.QTimer.singleShot(WAIT_FOR_RUN_S * 1000, self.finish)

    def plan_ready(self, panel: Any, preview: Any) -> None:
        """The plan as the docker shows it before running: its rows and a screenshot of
        the window; then 'Run these steps', as a photographer clicks it."""
        self.seen["plan"] = [
            [panel.plan.topLevelItem(i).text(c) for c in range(panel.plan.columnCount())]
            for i in range(panel.plan.topLevelItemCount())
        ]
        window = Krita.instance().activeWindow()
        if window is not None:
            shot = self.target.with_name(self.target.stem + "-plan.png")
            self.seen["plan_shot"] = bool(window.qwindow().grab().save(str(shot)))
        QtCore.QTimer.singleShot(500, panel.confirm_button.click)

    def run_finished(self, result: Any) -> None:
        self.seen["run"] = {
            "ok": bool(result is not None and result.ok),
            "tools": [call.tool for call in result.calls] if result is not None else [],
            "errors": [o.error for o in result.outcomes if not o.ok] if result is not None else [],
        }
        QtCore.QTimer.singleShot(2000, self.finish)  # let the canvas repaint

    def finish(self) -> None:
        if self.shot:
            return
        self.shot = True
        app = Krita.instance()
        window = app.activeWindow()
        if window is not None:
            self.seen["saved"] = bool(window.qwindow().grab().save(str(self.target)))
        document = app.activeDocument()
        if document is not None:
            nodes = list(walk(document.rootNode()))
            self.seen["layers"] = [[n.name(), n.type()] for n in nodes]
            self.seen["vector_bounds"] = [
                [b.x(), b.y(), b.width(), b.height()]
                for b in (n.bounds() for n in nodes if n.type() == "vectorlayer")
            ]
            document.setBatchmode(True)  # no dialogs: save, then quit without asking
            self.seen["kra"] = bool(document.saveAs(str(self.target.with_suffix(".kra"))))
        self.target.with_suffix(".json").write_text(json.dumps(self.seen), encoding="utf-8")
        app.action("file_quit").trigger()


_checks: list[Check] = []  # keeps the check alive until Krita quits


def start(docker_id: str) -> None:
    check = Check(docker_id)
    _checks.append(check)
    QtCore.QTimer.singleShot(2000, check.poll)
