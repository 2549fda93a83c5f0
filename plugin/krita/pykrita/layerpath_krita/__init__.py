"""layerpath for Krita: loads the docker, or a docker that explains what is missing."""

from __future__ import annotations

import logging
import sys

from krita import DockWidget, DockWidgetFactory, DockWidgetFactoryBase, Krita

from . import env

problem = env.activate()

if problem is None:
    from layerpath.plugin.krita.docker import register

    register()
else:
    logging.getLogger("layerpath").warning(problem)
    # layerpath (and its Qt shim) is not importable: use the Qt that Krita already loaded
    if "PyQt6.QtWidgets" in sys.modules:
        from PyQt6.QtWidgets import QLabel
    else:
        from PyQt5.QtWidgets import QLabel  # type: ignore[assignment]

    class MissingDocker(DockWidget):
        """Shown instead of the panel until the environment is installed."""

        def __init__(self) -> None:
            super().__init__()
            self.setWindowTitle("layerpath")
            label = QLabel(problem)
            label.setWordWrap(True)
            self.setWidget(label)

        def canvasChanged(self, canvas: object) -> None:  # noqa: N802
            pass

    Krita.instance().addDockWidgetFactory(
        DockWidgetFactory("layerpath_docker", DockWidgetFactoryBase.DockRight, MissingDocker)
    )
