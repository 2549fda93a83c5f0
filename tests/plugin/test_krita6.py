"""Krita 6 embeds PyQt6 (Krita 5: PyQt5). No registry ships a Krita 6 (Debian has 5.1.5,
which the tests in test_krita.py run for real), so here, said plainly: the plugin's
docker, its extension and the docker that offers the install are built under PyQt6
outside Krita, with the `krita` module — which exists only inside Krita — stubbed by
the few classes they subclass or call (DockWidget, DockWidgetFactory, Extension,
Krita.instance()). The libkis calls of the document bridge (plugin/krita/document.py)
are the same in Krita 6 and run in real Krita 5 only; its Qt is QByteArray and QTimer,
which this test also exercises under PyQt6."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")
QtWidgets = pytest.importorskip("PyQt6.QtWidgets")
QtCore = pytest.importorskip("PyQt6.QtCore")

ROOT = Path(__file__).resolve().parents[2]
PYKRITA = ROOT / "plugin" / "krita" / "pykrita"


class _App:
    """Krita.instance(): what the plugin's registration and its docker call."""

    def __init__(self) -> None:
        self.factories: list[Any] = []
        self.extensions: list[Any] = []

    def activeDocument(self) -> None:  # noqa: N802 (Krita's name)
        return None

    def addDockWidgetFactory(self, factory: Any) -> None:  # noqa: N802
        self.factories.append(factory)

    def addExtension(self, extension: Any) -> None:  # noqa: N802
        self.extensions.append(extension)


def _krita_stub(app: _App) -> types.ModuleType:
    krita = types.ModuleType("krita")

    class DockWidget(QtWidgets.QDockWidget):  # (Krita's is a QDockWidget)
        def canvasChanged(self, canvas: Any) -> None:  # noqa: N802
            pass

    class DockWidgetFactoryBase:
        DockRight = 2

    class DockWidgetFactory:
        def __init__(self, name: str, where: int, kind: type) -> None:
            self.name, self.where, self.kind = name, where, kind

    class Extension(QtCore.QObject):  # (a QObject in Krita)
        def __init__(self, parent: Any = None) -> None:
            super().__init__()

    class Krita:
        @staticmethod
        def instance() -> _App:
            return app

    krita.DockWidget = DockWidget  # type: ignore[attr-defined]
    krita.DockWidgetFactoryBase = DockWidgetFactoryBase  # type: ignore[attr-defined]
    krita.DockWidgetFactory = DockWidgetFactory  # type: ignore[attr-defined]
    krita.Extension = Extension  # type: ignore[attr-defined]
    krita.Krita = Krita  # type: ignore[attr-defined]
    for name in ("InfoObject", "Selection"):
        setattr(krita, name, type(name, (), {}))
    return krita


def test_the_docker_and_its_actions_build_under_pyqt6(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _App()
    monkeypatch.setitem(sys.modules, "krita", _krita_stub(app))
    for name in [m for m in sys.modules if m.startswith("layerpath.plugin.krita.")]:
        monkeypatch.delitem(sys.modules, name)
    docker = importlib.import_module("layerpath.plugin.krita.docker")
    from layerpath.gui.qt import QtCore

    assert QtCore.PYQT_VERSION_STR.startswith("6")  # (the shim took PyQt6)
    docker.register()
    (factory,) = app.factories
    assert factory.name == "layerpath_docker" and len(app.extensions) == 1
    made = factory.kind()
    qtbot.addWidget(made)
    made.canvasChanged(None)  # no document open: the docker says what to do
    assert made.stack.currentWidget() is made.empty and "Open or create" in made.empty.text()

    class Window:  # (Krita's Window.createAction: an action in Krita's menus)
        def __init__(self) -> None:
            self.actions: list[Any] = []

        def createAction(self, name: str, text: str, menu: str) -> Any:  # noqa: N802
            from layerpath.gui.qt import QtGui

            action = QtGui.QAction(text)
            self.actions.append(action)
            return action

    window = Window()
    app.extensions[0].createActions(window)
    assert len(window.actions) == len(docker.ACTIONS)
    window.actions[0].trigger()  # (no visible docker: nothing runs, nothing breaks)


def test_the_docker_that_offers_the_install_builds_under_pyqt6(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    app = _App()
    monkeypatch.setitem(sys.modules, "krita", _krita_stub(app))
    monkeypatch.setenv("LAYERPATH_KRITA_ENV", str(tmp_path / "empty"))
    monkeypatch.syspath_prepend(str(PYKRITA))
    monkeypatch.setattr("builtins.__import__", _without_layerpath(__import__))
    for name in [m for m in sys.modules if m.startswith("layerpath_krita")]:
        monkeypatch.delitem(sys.modules, name)
    plugin = importlib.import_module("layerpath_krita")
    assert plugin.problem and "missing: layerpath" in plugin.problem
    (factory,) = app.factories
    monkeypatch.setattr(plugin.bootstrap, "problem", lambda: None)  # (as if it carried wheels)
    made = factory.kind()
    qtbot.addWidget(made)
    assert made.button.text() == "Install layerpath for Krita" and made.button.isEnabled()
    assert plugin.problem in made.label.text()

    # the install on its thread: pip's lines shown as they come, Krita never waiting; a
    # failure said with the button back, a second try that works said so
    def failing(target: Path, say: Any, extra: Any = ()) -> None:
        say("Collecting numpy")
        raise RuntimeError("pip could not install them:\nno network")

    monkeypatch.setattr(plugin.bootstrap, "install", failing)
    made.button.click()
    qtbot.waitUntil(lambda: "could not be installed" in made.label.text(), timeout=5000)
    assert "no network" in made.label.text() and made.button.isEnabled()
    assert "Collecting numpy" in made.log.toPlainText()
    monkeypatch.setattr(plugin.bootstrap, "install", lambda target, say, extra=(): say("done"))
    made.button.click()
    qtbot.waitUntil(lambda: "Restart Krita" in made.label.text(), timeout=5000)
    assert not made.button.isEnabled()


def _without_layerpath(real: Any) -> Any:
    """An import that finds no layerpath (as Krita's Python before the install)."""

    def imported(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "layerpath" or name.startswith("layerpath."):
            raise ModuleNotFoundError(f"No module named {name!r}", name="layerpath")
        return real(name, *args, **kwargs)

    return imported
