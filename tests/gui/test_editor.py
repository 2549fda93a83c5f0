"""The standalone editor with real widgets: runs through the panel, layers dock with
undo/redo, selections that tell the engine where "this" is, files and screenshots."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.execute.executor import Engine
from layerpath.engine.files.io import GroupLayer, PixelLayer, composite, read_layered
from layerpath.gui.editor import EditorWindow
from layerpath.gui.qt import Qt
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.gui.conftest import run_in_panel

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


def open_photo(qtbot, tmp_path: Path, pixels: np.ndarray, name: str) -> EditorWindow:  # type: ignore[no-untyped-def]
    """A real photo (one of scikit-image's) opened in the editor, no mask, as a user does."""
    photo = tmp_path / f"{name}.png"
    Image.fromarray(pixels).save(photo)
    editor = EditorWindow(lambda: Engine(REGISTRY))
    qtbot.addWidget(editor)
    editor.open_file(photo, {})
    editor.resize(1400, 900)
    editor.show()
    return editor


def run(qtbot, window: EditorWindow, text: str) -> object:  # type: ignore[no-untyped-def]
    return run_in_panel(qtbot, window.panel, text)


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
    (layer,) = [k for k, p in window.panel.placed.items() if p.step.tool == "lab_recolor"]
    recolour = next(c for c in group.children if c.name == window.panel.placed[layer].step.name)
    # hide the step from the layers dock: the picture goes back, the step list follows
    item = next(i for i in window.layers.items() if i.data(0, Qt.ItemDataRole.UserRole) is recolour)
    item.setCheckState(0, Qt.CheckState.Unchecked)
    # the tree is rebuilt after Qt is done with the ticked item, never inside its own
    # signal (Qt reads the item after the signal: a crash, now and then, in CI)
    assert not _sip().isdeleted(item)
    qtbot.waitUntil(lambda: not recolour.visible)
    wall = scene.masks["wall"]
    assert np.array_equal(window.picture()[wall], scene.image[wall])
    step_item = window.panel.steps.item_for(layer)
    assert step_item is not None and step_item.checkState() == Qt.CheckState.Unchecked
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
    assert not _sip().isdeleted(item)
    qtbot.waitUntil(lambda: group.name == "my run")
    window.undo.undo()
    assert group.name == "recolor the wall to navy"


def _sip():  # type: ignore[no-untyped-def]
    """The sip module of the Qt binding in use (it tells whether Qt deleted an item)."""
    import importlib

    from layerpath.gui.qt import QtCore

    return importlib.import_module(QtCore.__name__.rsplit(".", 1)[0] + ".sip")


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
    merged = composite(saved)  # (opaque: the flat PNG is RGB)
    assert (merged[..., 3] == 255).all()
    assert np.array_equal(np.asarray(Image.open(flat)), merged[..., :3])


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


def test_the_plan_is_shown_before_it_runs_in_plain_words(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A real photo (scikit-image's astronaut), no mask: Run shows each step, what will
    do it and about how long, and nothing runs until 'Run these steps'; Edit goes back.
    The plan's and the steps' words are a photographer's: no tool ids, no scores."""
    from skimage import data

    editor = open_photo(qtbot, tmp_path, data.astronaut(), "astronaut")
    panel = editor.panel
    panel.instruction.setPlainText("blur the face and make it warmer")
    with qtbot.waitSignal(panel.plan_ready, timeout=60_000) as shown:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    preview = shown.args[0]
    rows = [
        [panel.plan.topLevelItem(i).text(c) for c in range(4)]
        for i in range(panel.plan.topLevelItemCount())
    ]
    assert [r[0] for r in rows] == ["Blur 0.5 'face'", "Temperature +0.35"]
    assert rows[0][1] == "Find it → Adjust the region" and rows[1][1] == "Adjust"
    assert all(r[2] == "planned" and r[3].startswith("~") for r in rows)
    assert panel.preview_box.isVisible() and "2 steps" in panel.preview_note.text()
    assert editor.document is not None and len(editor.document.image.layers) == 1  # nothing ran
    ARTIFACTS.mkdir(exist_ok=True)
    assert editor.grab().save(str(ARTIFACTS / "editor-plan-preview.png"))
    # Edit: back to the words, the plan gone
    qtbot.mouseClick(panel.edit_button, Qt.MouseButton.LeftButton)
    assert not panel.preview_box.isVisible() and panel.plan.topLevelItemCount() == 0
    # Run, then run what is shown: exactly that plan
    with qtbot.waitSignal(panel.plan_ready, timeout=60_000):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(panel.run_finished, timeout=60_000) as finished:
        qtbot.mouseClick(panel.confirm_button, Qt.MouseButton.LeftButton)
    result = finished.args[0]
    assert result.ok and [s.describe() for s in result.plan] == [
        s.subtask.describe() for s in preview.steps
    ]
    words = " ".join(
        panel.plan.topLevelItem(i).text(c) for i in range(2) for c in range(4)
    ) + " ".join(panel.steps.item(r).text() for r in range(panel.steps.count()))
    assert "_" not in words and "quality" not in words and "offline_finder" not in words
    assert "2/2 done" in panel.progress.format()


def move_amount(qtbot, panel, value: int):  # type: ignore[no-untyped-def]
    """The selected step's amount slider moved to `value` and let go, as a user does:
    the outcome of the step made again."""
    panel.amount.setValue(value)
    with qtbot.waitSignal(panel.run_finished, timeout=60_000) as again:
        panel.amount.sliderReleased.emit()
    return again.args[0]


def test_an_adjustments_amount_is_changed_from_its_slider(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """'make it warmer', then the Temperature slider moved up: the step is made again at
    the new amount from the picture it started from (no new plan), its layer holding
    the new step in its place, warmer than before, and the document's record keeps the
    new amount."""
    from skimage import data

    from layerpath.kit.colours import lab_exact

    editor = open_photo(qtbot, tmp_path, data.coffee(), "coffee")
    panel = editor.panel
    assert run(qtbot, editor, "make it warmer").ok  # type: ignore[attr-defined]
    (layer,) = list(panel.placed)
    panel.steps.setCurrentItem(panel.steps.item_for(layer))
    assert panel.amount_row.isVisible() and panel.amount_label.text().startswith("Temperature")
    assert panel.amount.value() == 35

    def warmth() -> float:
        return float(lab_exact(editor.picture()[..., :3] / 255.0)[..., 2].mean())

    before = warmth()
    outcome = move_amount(qtbot, panel, 80)
    assert outcome.ok and outcome.subtask.params["amount"] == 0.8
    assert warmth() > before + 2
    (kept,) = list(panel.placed)  # the step's layer holds the new step, in its place
    assert kept == layer and panel.steps.count() == 1
    assert editor.document is not None
    assert editor.document.runs[-1]["made_again"]["params"]["amount"] == 0.8
    assert panel.amount_row.isVisible() and panel.amount.value() == 80


def test_a_failed_run_shows_as_failed(qtbot, window: EditorWindow) -> None:  # type: ignore[no-untyped-def]
    result = run(qtbot, window, "remove the giraffe")
    panel = window.panel
    assert not result.ok  # type: ignore[attr-defined]
    assert "could not be done" in panel.progress.format()
    assert panel.progress.value() < panel.progress.maximum()  # not a full bar
    text = panel.message.text()
    assert "giraffe" in text and "(tried" not in text and "named_masks" not in text
    assert "--mask" not in text and "Select it" in text


def test_a_found_regions_edge_is_grown_from_its_slider(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """'blur the face' on the astronaut, then the Region edge slider moved to +20 px:
    the step is made again with the found face grown by 20 pixels (no new plan): more of
    the picture is blurred, the old layers replaced, the new edge recorded."""
    from skimage import data

    editor = open_photo(qtbot, tmp_path, data.astronaut(), "astronaut")
    panel = editor.panel
    assert run(qtbot, editor, "blur the face").ok  # type: ignore[attr-defined]
    original = data.astronaut().astype(int)

    def blurred_share() -> float:
        return float(
            (np.abs(editor.picture()[..., :3].astype(int) - original).max(axis=2) > 3).mean()
        )

    first = blurred_share()
    adjust = next(k for k, p in panel.placed.items() if p.step.tool == "region_adjust")
    panel.steps.setCurrentItem(panel.steps.item_for(adjust))
    assert panel.edge_row.isVisible() and panel.edge.value() == 0
    panel.edge.setValue(20)
    with qtbot.waitSignal(panel.run_finished, timeout=60_000) as again:
        panel.edge.sliderReleased.emit()
    assert again.args[0].ok and again.args[0].subtask.params["edge"] == 20
    assert blurred_share() > first * 1.3
    assert panel.steps.count() == 2  # the finder's and the blur's layers, replaced
    assert editor.document is not None
    assert editor.document.runs[-1]["made_again"]["params"]["edge"] == 20


def test_a_click_selects_the_object_under_it(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The Object (click) tool: a click on the astronaut's face selects her head (GrabCut
    from the click), and 'blur this' then blurs it and nothing else."""
    from skimage import data

    from layerpath.gui.canvas import Tool

    editor = open_photo(qtbot, tmp_path, data.astronaut(), "astronaut")
    canvas = editor.canvas
    canvas.set_tool(Tool.OBJECT)
    at = canvas.mapFromScene(225.0, 110.0)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=at)
    selection = canvas.selection
    assert selection is not None
    assert selection[80:150, 190:260].mean() > 0.95  # the face
    assert selection.mean() < 0.15 and not selection[:100, :100].any()  # not the flag
    result = run(qtbot, editor, "blur this")
    assert result.ok  # type: ignore[attr-defined]
    changed = np.abs(editor.picture()[..., :3].astype(int) - data.astronaut()).max(axis=2) > 0
    assert not changed[~selection].any()


def test_a_looks_strength_is_changed_from_its_slider(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """'give it a vintage look' on a real photo in the editor: one step named as a
    photographer reads it, its strength on the slider; moved to full strength, the step
    is made again from the picture it started from and fades the blacks further."""
    from skimage import data

    editor = open_photo(qtbot, tmp_path, data.coffee(), "coffee")
    panel = editor.panel
    assert run(qtbot, editor, "give it a vintage look").ok  # type: ignore[attr-defined]
    (layer,) = list(panel.placed)
    item = panel.steps.item_for(layer)
    assert "Look: Vintage 0.8" in item.text() and "photo_adjust" not in item.text()
    panel.steps.setCurrentItem(item)
    assert panel.amount_row.isVisible() and panel.amount_label.text().startswith("Look")
    assert panel.amount.value() == 80

    def black_point() -> float:
        return float(np.percentile(editor.picture()[..., :3].mean(axis=2), 5))

    before = black_point()
    outcome = move_amount(qtbot, panel, 100)
    assert outcome.ok and outcome.subtask.params["amount"] == 1.0
    assert outcome.subtask.params["look"] == "vintage"
    assert black_point() > before + 1
    assert panel.steps.count() == 1


def _others_alone(pixels: np.ndarray, instruction: str, plan: tuple = ()) -> np.ndarray:  # type: ignore[type-arg]
    """What running `instruction` (or exactly `plan`) alone on the photo makes, in a
    document of its own."""
    from layerpath.engine.files.io import LayeredImage, split_masks
    from layerpath.engine.hosts.document import LayeredDocument
    from layerpath.engine.hosts.session import RunSession

    rgba = np.dstack([pixels, np.full(pixels.shape[:2], 255, np.uint8)])
    document = LayeredDocument(LayeredImage(rgba.shape[1], rgba.shape[0], [PixelLayer("p", rgba)]))
    session = RunSession(document, engine_factory=lambda: Engine(REGISTRY), traces=False)
    assert session.run(session.request(instruction, plan=plan or None)).ok
    return composite(split_masks(document.image)[0])


def _near(got: np.ndarray, want: np.ndarray) -> tuple[float, float]:
    diff = np.abs(got[..., :3].astype(int) - want[..., :3].astype(int))
    return float(diff.mean()), float(np.percentile(diff, 99))


def test_hiding_a_step_undoes_just_that_step_however_the_steps_overlap(
    qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Three steps that each change every pixel: hiding each in turn (in the step list,
    as a user does) gives the picture the other two make alone, within 2 levels on
    average and 6 at the 99th percentile (the later steps are made again from the
    picture beneath them; before, each layer held the earlier steps' pixels and hiding
    'Shadows' left the lift visible in the layers above). Shown again, the picture is
    the whole run's again. Hidden from the layers dock and brought back by Undo, the
    same."""
    from skimage import data

    parts = ["lift the shadows", "make it warmer", "add a vignette"]
    photo = data.astronaut()
    editor = open_photo(qtbot, tmp_path, photo, "astronaut")
    panel = editor.panel
    result = run(qtbot, editor, "lift the shadows, make it warmer and add a vignette")
    assert result.ok  # type: ignore[attr-defined]
    whole = editor.picture()
    layers = panel.session.layers()
    assert len(layers) == 3

    def toggled(change: object) -> object:
        with qtbot.waitSignal(panel.steps_remade, timeout=60_000) as made:
            change()  # type: ignore[operator]
        return made.args[0]

    def checked(item: object, state: object) -> tuple[np.ndarray, object]:
        """Tick or untick a step in the list: the picture at once (the layers as they
        were), and what was made again."""
        with qtbot.waitSignal(panel.steps_remade, timeout=60_000) as made:
            item.setCheckState(state)  # type: ignore[attr-defined]
            stale = editor.picture()
        return stale, made.args[0]

    for index, layer in enumerate(layers):
        item = panel.steps.item_for(layer)
        assert item is not None
        want = _others_alone(photo, " and ".join(p for i, p in enumerate(parts) if i != index))
        stale, remade = checked(item, Qt.CheckState.Unchecked)
        assert len(remade.pairs) == 2 - index  # type: ignore[attr-defined]  # (those after it)
        mean, p99 = _near(editor.picture(), want)
        assert mean <= 2 and p99 <= 6, (parts[index], mean, p99)
        if index == 0:  # what it is for: the layers above held the lift
            assert _near(stale, want)[0] > 2
        rows = [panel.plan.topLevelItem(r) for r in range(panel.plan.topLevelItemCount())]
        assert [row.text(2) for row in rows if row is not None] == ["done"] * 3  # not 'running'
        checked(item, Qt.CheckState.Checked)
        assert _near(editor.picture(), whole) <= (0.5, 1)

    # from the layers dock, and back by Undo (the panel notices the host's change)
    assert editor.document is not None
    shadows = next(
        i
        for i in editor.layers.items()
        if i.data(0, Qt.ItemDataRole.UserRole).name.endswith("Shadows +0.5")
    )
    toggled(lambda: shadows.setCheckState(0, Qt.CheckState.Unchecked))
    assert (
        _near(editor.picture(), _others_alone(photo, "make it warmer and add a vignette"))[0] <= 2
    )
    toggled(editor.undo.undo)
    assert _near(editor.picture(), whole) <= (0.5, 1)

    # the Shadows slider moved: its layer holds the new lift in its place, and the
    # later steps are made again on it, as the run with that amount makes them
    panel.steps.setCurrentItem(panel.steps.item_for(layers[0]))
    with qtbot.waitSignal(panel.steps_remade, timeout=60_000) as made:
        assert move_amount(qtbot, panel, 80).ok
    assert len(made.args[0].pairs) == 2 and panel.session.layers() == layers
    plan = tuple(result.plan)  # type: ignore[attr-defined]
    plan = (dataclasses.replace(plan[0], params={**plan[0].params, "amount": 0.8}), *plan[1:])
    mean, p99 = _near(editor.picture(), _others_alone(photo, "", plan))
    assert mean <= 2 and p99 <= 6
    assert _near(editor.picture(), whole)[0] > 1  # (the new lift shows)


def test_a_step_moved_in_the_layers_dock_applies_in_its_new_place(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """ "make it warmer and make it black and white", then the Black & white layer moved
    down in the layers dock, below Temperature: the steps are made again in their new
    order (a warm-toned mono, as black and white then warmer make it); Undo moves it
    back and the neutral mono returns."""
    from skimage import data

    photo = data.astronaut()
    editor = open_photo(qtbot, tmp_path, photo, "astronaut")
    panel = editor.panel
    result = run(qtbot, editor, "make it warmer and make it black and white")
    assert result.ok  # type: ignore[attr-defined]
    whole = editor.picture()
    warm, mono = panel.session.layers()
    editor.layers.select(editor.document.image.layers[1].children[1])  # type: ignore[union-attr]
    with qtbot.waitSignal(panel.steps_remade, timeout=60_000) as made:
        editor.layers.move(-1)
    assert len(made.args[0].pairs) == 2
    plan = tuple(result.plan)  # type: ignore[attr-defined]
    mean, p99 = _near(editor.picture(), _others_alone(photo, "", (plan[1], plan[0])))
    assert mean <= 2 and p99 <= 6, (mean, p99)
    picture = editor.picture().astype(int)
    assert (picture[..., 0] - picture[..., 2]).mean() > 5  # warm-toned
    with qtbot.waitSignal(panel.steps_remade, timeout=60_000):
        editor.undo.undo()
    assert _near(editor.picture(), whole) <= (0.5, 1)


def test_an_ora_the_command_line_wrote_reopens_with_its_steps(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The command line's ORA keeps its run (layerpath/runs.json beside the layers): the
    editor lists its three steps again, each with its amount, and unticking 'Shadows'
    makes the two later steps again from the picture beneath, as on the run's own day.
    A file whose record another program spoiled opens as its layers alone."""
    import zipfile

    from skimage import data

    from layerpath.plugin.cli import main

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    out = tmp_path / "out.ora"
    instruction = "lift the shadows, make it warmer and add a vignette"
    assert main(["edit", str(photo), instruction, "-o", str(out)]) == 0
    with zipfile.ZipFile(out) as archive:
        assert "layerpath/runs.json" in archive.namelist()

    editor = EditorWindow(lambda: Engine(REGISTRY))
    qtbot.addWidget(editor)
    editor.open_file(out)
    panel = editor.panel
    assert panel.steps.count() == 3
    layers = panel.session.layers()
    panel.steps.setCurrentItem(panel.steps.item_for(layers[0]))
    assert panel.amount_row.isVisibleTo(panel) and panel.amount_label.text().startswith("Shadows")
    assert panel.amount.value() == 50
    item = panel.steps.item_for(layers[0])
    assert item is not None
    with qtbot.waitSignal(panel.steps_remade, timeout=60_000) as made:
        item.setCheckState(Qt.CheckState.Unchecked)
    assert len(made.args[0].pairs) == 2
    mean, p99 = _near(
        editor.picture(), _others_alone(data.astronaut(), "make it warmer and add a vignette")
    )
    assert mean <= 2 and p99 <= 6

    spoiled = tmp_path / "spoiled.ora"
    with zipfile.ZipFile(out) as source, zipfile.ZipFile(spoiled, "w") as target:
        for name in source.namelist():
            body = b"{not json" if name == "layerpath/runs.json" else source.read(name)
            target.writestr(name, body)
    editor.open_file(spoiled)
    assert panel.steps.count() == 0 and len(editor.document.image.layers) == 2  # type: ignore[union-attr]
