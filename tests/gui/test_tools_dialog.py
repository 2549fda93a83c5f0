"""The tools and models dialog with real widgets: tool states with their fixes, a model
downloaded from a server on 127.0.0.1 with progress, a cancelled download kept for
resuming, and removal."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from layerpath.gui.panel import Panel
from layerpath.gui.tools_dialog import ToolsDialog
from layerpath.tools.models import ModelManager, ModelSpec, ModelState, load_catalogue
from tests.file_server import FileServer

pytest.importorskip("pytestqt")
WEIGHTS = bytes(range(256)) * 20_000  # ~5 MB: several progress steps


def catalogue(url: str) -> dict[str, ModelSpec]:
    """The built-in catalogue, with lama-onnx's file served by the test server."""
    models = load_catalogue()
    lama = models["lama-onnx"]
    file = lama.files[0].model_copy(
        update={
            "size": len(WEIGHTS),
            "sha256": hashlib.sha256(WEIGHTS).hexdigest(),
            "url": f"{url}/lama.onnx",
        }
    )
    models["lama-onnx"] = lama.model_copy(update={"files": (file,)})
    return models


def rows(tree) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    items = (tree.topLevelItem(i) for i in range(tree.topLevelItemCount()))
    return {item.text(0): [item.text(c) for c in range(tree.columnCount())] for item in items}


def test_download_with_progress_then_the_tool_can_run(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with FileServer() as server:
        server.files["/lama.onnx"] = WEIGHTS
        models = ModelManager(tmp_path / "models", catalogue(server.url))
        dialog = ToolsDialog(models)
        qtbot.addWidget(dialog)
        tools = rows(dialog.tools)
        assert tools["opencv_telea"][4] == "can run"
        assert tools["lama_inpaint"][3] == "lama-onnx"
        assert tools["lama_inpaint"][4].startswith("its model lama-onnx")
        assert rows(dialog.model_list)["lama-onnx"][3] == "missing"

        seen: list[int] = []
        dialog.progress.valueChanged.connect(seen.append)
        dialog.select("lama-onnx")
        with qtbot.waitSignal(dialog.models_changed, timeout=30_000):
            qtbot.mouseClick(dialog.download_button, QtLeft())
        assert rows(dialog.model_list)["lama-onnx"][3] == "present"
        assert rows(dialog.tools)["lama_inpaint"][4] == "can run"
        assert len([v for v in seen if 0 < v < 1000]) >= 2  # it moved along the way
        assert "lama-onnx: present" in dialog.message.text()

        dialog.select("lama-onnx")
        qtbot.mouseClick(dialog.remove_button, QtLeft())
        assert models.status("lama-onnx").state == ModelState.MISSING
        assert "freed" in dialog.message.text()


def test_a_cancelled_download_is_kept_for_resuming(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with FileServer() as server:
        server.files["/lama.onnx"] = WEIGHTS
        release = threading.Event()
        server.hold["/lama.onnx"] = (1_500_000, release)  # stalls after 1.5 MB
        models = ModelManager(tmp_path / "models", catalogue(server.url))
        dialog = ToolsDialog(models)
        qtbot.addWidget(dialog)
        dialog.select("lama-onnx")
        with qtbot.waitSignal(dialog.controller.engine_event, timeout=30_000):
            dialog.download_selected()  # the first megabyte arrives
        assert dialog.cancel_button.isEnabled() and not dialog.download_button.isEnabled()
        with qtbot.waitSignal(dialog.controller.error, timeout=30_000) as blocker:
            qtbot.mouseClick(dialog.cancel_button, QtLeft())
            release.set()
        assert "cancelled" in blocker.args[0] and "resumes" in dialog.message.text()
        assert models.status("lama-onnx").state == ModelState.PARTIAL
        assert dialog.download_button.isEnabled()
        # the next download asks only for the rest
        with qtbot.waitSignal(dialog.models_changed, timeout=30_000):
            dialog.download_selected()
        assert models.status("lama-onnx").state == ModelState.PRESENT
        assert server.requests[-1][1] is not None and server.requests[-1][1] != "bytes=0-"


def test_the_panel_opens_the_dialog(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from layerpath.engine.execute.executor import Engine
    from layerpath.engine.hosts.document import LayeredDocument
    from layerpath.tools.registry import Registry
    from tests.conftest import make_scene

    image, masks = make_scene().save(tmp_path / "in")
    panel = Panel(LayeredDocument.open(image, masks), lambda: Engine(Registry.from_catalogue()))
    qtbot.addWidget(panel)
    dialog = panel.open_tools()
    assert isinstance(dialog, ToolsDialog) and dialog.isVisible()
    assert dialog.tools.topLevelItemCount() == len(Registry.from_catalogue())
    dialog.reject()


def QtLeft():  # type: ignore[no-untyped-def]  # noqa: N802
    from layerpath.gui.qt import Qt

    return Qt.MouseButton.LeftButton
