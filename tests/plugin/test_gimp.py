"""The GIMP 3 plug-in. No GIMP 3 is in this machine's registries (Debian 12 ships GIMP
2.10), so, said plainly: its GIMP calls (libgimp 3.0 through GObject Introspection) are
not run here. What runs for real: `layerpath gimp install` places it as GIMP 3 expects
(a folder of its own name, the file executable), the file compiles, and the part that
runs layerpath — the picture and the selection as files, the real `layerpath` command,
the ORA GIMP 3 opens natively — makes the run's group of step layers, the selection
(--selection) being a rough region around what the instruction names."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.files.io import GroupLayer, read_layered
from layerpath.plugin.cli import main
from tests.conftest import Scene


def test_layerpath_gimp_install_places_the_plug_in_where_gimp_3_looks(tmp_path: Path) -> None:
    assert main(["gimp", "install", "--plug-ins", str(tmp_path)]) == 0
    placed = tmp_path / "layerpath_gimp" / "layerpath_gimp.py"
    assert placed.exists() and os.access(placed, os.X_OK)
    py_compile.compile(str(placed), doraise=True)
    text = placed.read_text(encoding="utf-8")
    assert 'gi.require_version("Gimp", "3.0")' in text and "Gimp.main(" in text
    # the command it runs, as this Python runs layerpath (a desktop's GIMP may not see PATH)
    command = shlex.split((placed.parent / "layerpath-command.txt").read_text(encoding="utf-8"))
    assert subprocess.run([*command, "--version"], capture_output=True).returncode == 0


def test_the_plug_in_runs_layerpath_on_the_picture_and_the_selection(
    scene: Scene, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from layerpath.plugin.gimp import SOURCE

    spec = importlib.util.spec_from_file_location("layerpath_gimp", SOURCE)
    assert spec is not None and spec.loader is not None
    plug_in = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plug_in)  # (outside GIMP: its GIMP part is only defined)
    picture, selection = tmp_path / "picture.png", tmp_path / "selection.png"
    Image.fromarray(scene.image[..., :3]).save(picture)
    ball = scene.masks["ball"]
    ys, xs = np.nonzero(ball)  # a rough box around the ball, as a user selects one
    box = np.zeros_like(ball)
    box[ys.min() - 6 : ys.max() + 7, xs.min() - 6 : xs.max() + 7] = True
    Image.fromarray(box.astype(np.uint8) * 255).save(selection)
    monkeypatch.setenv("LAYERPATH_COMMAND", f"{sys.executable} -m layerpath")
    ora, report = plug_in.edit_files(
        picture, selection, "remove the ball and make it warmer", tmp_path
    )
    with pytest.raises(RuntimeError, match="missing.png"):  # (layerpath's own words)
        plug_in.edit_files(tmp_path / "missing.png", None, "make it warmer", tmp_path)
    assert [s["solved_by"] != "failed" for s in report["subtasks"]] == [True, True]
    made = read_layered(ora)
    group = made.layers[-1]  # (the top layer: what the plug-in brings into the image)
    assert isinstance(group, GroupLayer) and len(group.children) >= 2
    after = np.asarray(Image.open(picture))  # (the picture given stays as it was)
    assert np.array_equal(after, scene.image[..., :3])
