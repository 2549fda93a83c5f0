"""The standalone editor with real widgets: runs through the panel, layers dock with
undo/redo, selections that tell the engine where "this" is, files and screenshots."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.executor import Engine
from layerpath.engine.io import GroupLayer, PixelLayer, composite, read_layered
from layerpath.gui.editor import EditorWindow
from layerpath.gui.qt import Qt
from layerpath.tools.registry import Registry
from tests.conftest import Scene

pytest.importorskip("pytestqt")
REGISTRY = Registry.from_catalogue()
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture
def window(qtbot, scene: Scene, tmp_path: Path) -> EditorWindow:  # type: ignore[no-untyped-def]
    image, masks = scene.save(tmp_path / "in")
    editor = EditorWindow(lambda: Engine(REGISTRY))
    qtbot.addWidget(editor)
    editor.open_file(image, masks)
    editor.show()
    return editor


def run(qtbot, window: EditorWindow, text: str) -> object:  # type: ignore[no-untyped-def]
    window.panel.instruction.setPlainText(text)
    with qtbot.waitSignal(window.panel.run_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(window.panel.run_button, Qt.MouseButton.LeftButton)
    return blocker.args[0]


def test_run_adds_a_group_with_a_layer_per_step_and_the_canvas_shows_it(
    qtbot, window: EditorWindow, scene: Scene
) -> None:  # type: ignore[no-untyped-def]
    result = run(qtbot, window, "recolor the wall to navy and remove the ball")
    assert result.ok  # type: ignore[attr-defined]
    top = window.layers.tree.topLevelItem(0)
    assert top is not None and top.text(0) == "recolor the wall to navy and remove the ball"
    assert top.childCount() == 4 == window.panel.steps.count()
    assert np.abs(window.picture().astype(int) - result.image.astype(int)).max() <= 1  # type: ignore[attr-defined]
    shown = window.canvas._picture.pixmap().toImage()
    wall_pixel = shown.pixelColor(20, 20)
    assert wall_pixel.blue() > wall_pixel.red() + 40  # the canvas shows the navy wall


def test_layer_operations_undo_and_redo(qtbot, window: EditorWindow, scene: Scene) -> None:  # type: ignore[no-untyped-def]
    run(qtbot, window, "recolor the wall to navy")
    assert window.document is not None
    group = window.document.image.layers[-1]
    assert isinstance(group, GroupLayer)
    recolour = next(c for c in group.children if "lab_recolor" in c.name)
    # hide the step from the layers dock: the picture goes back, the step list follows
    item = next(i for i in window.layers.items() if i.data(0, Qt.ItemDataRole.UserRole) is recolour)
    item.setCheckState(0, Qt.CheckState.Unchecked)
    wall = scene.masks["wall"]
    assert np.array_equal(window.picture()[wall], scene.image[wall])
    step_item = next(
        window.panel.steps.item(r)
        for r in range(window.panel.steps.count())
        if "lab_recolor" in window.panel.steps.item(r).text()
    )
    assert step_item.checkState() == Qt.CheckState.Unchecked
    window.undo.undo()
    assert not np.array_equal(window.picture()[wall], scene.image[wall])
    # delete the whole run group, undo brings it back, redo removes it again
    window.layers.select(group)
    window.layers.delete_selected()
    assert [layer.name for layer in window.document.image.layers] == ["Original"]
    window.undo.undo()
    assert window.document.image.layers[-1] is group
    window.undo.redo()
    assert group not in window.document.image.layers
    window.undo.undo()
    # rename and move
    window.layers.select(group)
    window.layers.move(-1)
    assert window.document.image.layers[0] is group
    window.undo.undo()
    assert window.document.image.layers[-1] is group
    item = next(i for i in window.layers.items() if i.data(0, Qt.ItemDataRole.UserRole) is group)
    item.setText(0, "my run")
    assert group.name == "my run"
    window.undo.undo()
    assert group.name == "recolor the wall to navy"


def test_rectangle_selection_is_this(qtbot, window: EditorWindow, scene: Scene) -> None:  # type: ignore[no-untyped-def]
    window.canvas.select_rectangle(10, 10, 60, 60)
    result = run(qtbot, window, "recolor this to red")
    assert result.ok  # type: ignore[attr-defined]
    picture = window.picture()
    inside, outside = picture[30, 30], picture[100, 250]
    assert inside[0] > inside[2] + 60
    assert np.array_equal(outside, scene.image[100, 250])


def test_named_selection_becomes_a_mask(qtbot, window: EditorWindow) -> None:  # type: ignore[no-untyped-def]
    window.canvas.select_polygon([(200, 120), (260, 120), (260, 160), (200, 160)])
    window.name_selection("box")
    window.canvas.clear_selection()
    result = run(qtbot, window, "recolor the box to green")
    assert result.ok  # type: ignore[attr-defined]
    assert window.picture()[140, 230][1] > window.picture()[140, 230][0] + 30


def test_save_reopens_with_the_same_layers(
    qtbot, window: EditorWindow, scene: Scene, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    run(qtbot, window, "remove the ball")
    saved = read_layered(window.save_file(tmp_path / "out.psd"))
    original, group = saved.layers
    assert isinstance(original, PixelLayer) and np.array_equal(original.pixels, scene.image)
    assert isinstance(group, GroupLayer) and len(group.children) == 2
    flat = tmp_path / "flat.png"
    window.save_file(flat)
    assert np.array_equal(np.asarray(Image.open(flat)), composite(saved))


def test_screenshot_shows_the_panel_and_the_result(qtbot, window: EditorWindow) -> None:  # type: ignore[no-untyped-def]
    run(qtbot, window, "recolor the wall to yellow and replace the sign text with OPEN")
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "editor-after-run.png"
    assert window.grab().save(str(path))
    shot = np.asarray(Image.open(path).convert("RGB")).astype(int)
    panel = window.panel.geometry()
    dock = window.panel.parentWidget()
    assert dock is not None
    x0 = dock.geometry().x()
    panel_pixels = shot[:, x0:]
    assert panel_pixels.std() > 20  # text and widgets, not a blank area
    canvas = window.canvas.geometry()
    view = shot[canvas.y() : canvas.y() + canvas.height(), canvas.x() : canvas.x() + canvas.width()]
    yellow = (view[..., 0] > 150) & (view[..., 1] > 150) & (view[..., 2] < 110)
    assert yellow.mean() > 0.05  # the yellow wall is visible in the window
    assert panel.width() > 0


def test_scripted_run_of_the_real_window(scene: Scene, tmp_path: Path) -> None:
    image, masks = scene.save(tmp_path / "in")
    out, shot = tmp_path / "out.ora", tmp_path / "shot.png"
    command = [
        sys.executable,
        "-m",
        "layerpath",
        "gui",
        str(image),
        "--mask",
        f"ball={masks['ball']}",
        "--run",
        "remove the ball",
        "--save",
        str(out),
        "--screenshot",
        str(shot),
        "--exit",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(read_layered(out).layers[-1].children) == 2  # type: ignore[union-attr]
    assert Image.open(shot).size[0] > 800
    failing = subprocess.run(
        [*command[:5], "--run", "remove the giraffe", "--exit"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert failing.returncode == 1 and "No mask for 'giraffe'" in failing.stderr


def test_the_same_widgets_run_under_pyqt5(scene: Scene, tmp_path: Path) -> None:
    """Krita 5 embeds PyQt5: the editor, panel and a whole run must work there too."""
    pytest.importorskip("PyQt5.QtWidgets")
    image, masks = scene.save(tmp_path / "in")
    out = tmp_path / "out.ora"
    env = {**os.environ, "LAYERPATH_QT": "pyqt5"}
    probe = "from layerpath.gui.qt import QT6; print(QT6)"
    assert (
        subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True
        ).stdout.strip()
        == "False"
    )
    command = [
        sys.executable,
        "-m",
        "layerpath",
        "gui",
        str(image),
        "--mask",
        f"wall={masks['wall']}",
        "--run",
        "recolor the wall to navy",
        "--save",
        str(out),
        "--exit",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(read_layered(out).layers[-1].children) == 2  # type: ignore[union-attr]
