"""The layerpath docker and extension inside Krita: one panel per open document, named
actions (run, cancel, re-run step, save action, show the saved actions, run saved action
1 to 9 of the Actions tab's list) users can bind shortcuts to."""

from __future__ import annotations

import logging
import os
from typing import Any

from krita import DockWidget, DockWidgetFactory, DockWidgetFactoryBase, Extension, Krita

from layerpath.gui.panel import Panel
from layerpath.gui.qt import QtWidgets
from layerpath.plugin.krita import scripted
from layerpath.plugin.krita.document import KritaDocument, document_key
from layerpath.settings import load_settings

log = logging.getLogger(__name__)

DOCKER_ID = "layerpath_docker"
#: saved actions a shortcut can run directly: the first ones of the Actions tab's list
ACTION_SLOTS = 9
ACTIONS = (
    ("layerpath_run", "layerpath: Run instruction", lambda panel: panel.start_run()),
    ("layerpath_cancel", "layerpath: Cancel", lambda panel: panel.cancel_run()),
    (
        "layerpath_rerun_step",
        "layerpath: Re-run step with another tool",
        lambda panel: panel._step_menu(None),
    ),
    (
        "layerpath_save_action",
        "layerpath: Save step as action",
        lambda panel: panel._ask_action_name(),
    ),
    ("layerpath_show_actions", "layerpath: Show saved actions", lambda panel: panel.show_actions()),
    *(
        (
            f"layerpath_action_{n}",
            f"layerpath: Run saved action {n}",
            lambda panel, n=n: panel.run_nth_action(n),
        )
        for n in range(1, ACTION_SLOTS + 1)
    ),
)
_dockers: list[LayerpathDocker] = []


class LayerpathDocker(DockWidget):
    """Holds one Panel per Krita document; follows the active canvas."""

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("layerpath")
        self.settings = load_settings()
        self.stack = QtWidgets.QStackedWidget()
        self.empty = QtWidgets.QLabel("Open or create an image to use layerpath.")
        self.empty.setWordWrap(True)
        self.stack.addWidget(self.empty)
        self.panels: dict[str, Panel] = {}
        self.setWidget(self.stack)
        _dockers.append(self)

    def panel_for(self, document: Any) -> Panel:
        key = document_key(document)
        if key not in self.panels:
            krita_document = KritaDocument(document)
            panel = Panel(krita_document, settings=self.settings)
            if krita_document.reopened:  # (a .kra layerpath saved: its runs, listed again)
                try:
                    panel.document_opened(krita_document)
                except Exception:  # (the panel stays; the file's layers are as they were)
                    log.warning("could not list the runs this file keeps", exc_info=True)
            panel.learn_from()
            panel.steps.setMinimumHeight(120)
            self.panels[key] = panel
            self.stack.addWidget(panel)
        return self.panels[key]

    def current_panel(self) -> Panel | None:
        widget = self.stack.currentWidget()
        return widget if isinstance(widget, Panel) else None

    def canvasChanged(self, canvas: Any) -> None:  # noqa: N802 (Krita's name)
        document = Krita.instance().activeDocument()
        self.stack.setCurrentWidget(
            self.panel_for(document) if document is not None else self.empty
        )


class LayerpathExtension(Extension):
    """Registers the named actions (Settings ▸ Configure Krita ▸ Keyboard Shortcuts)."""

    def setup(self) -> None:
        pass

    def createActions(self, window: Any) -> None:  # noqa: N802 (Krita's name)
        for name, text, act in ACTIONS:
            action = window.createAction(name, text, "tools/scripts")
            action.triggered.connect(lambda _=False, act=act: self._on_panel(act))

    def _on_panel(self, act: Any) -> None:
        for docker in _dockers:
            panel = docker.current_panel()
            if panel is not None and docker.isVisible():
                act(panel)
                return


def register() -> None:
    """Called by the pykrita loader once layerpath's environment is importable."""
    app = Krita.instance()
    app.addExtension(LayerpathExtension(app))
    app.addDockWidgetFactory(
        DockWidgetFactory(DOCKER_ID, DockWidgetFactoryBase.DockRight, LayerpathDocker)
    )
    if os.environ.get(scripted.SCREENSHOT_ENV):
        scripted.start(DOCKER_ID)
