"""`layerpath bench speed` end to end, as a user runs it on their own photo: layerpath's
real command and the Pillow 3D LUT peer (and ImageMagick where it is installed) time the
same file in and out, and the table says how they compare."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from skimage import data

from layerpath.benchmarks.speed import imagemagick, look_cube
from layerpath.plugin.cli import main


def test_bench_speed_times_layerpath_beside_its_peers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo = tmp_path / "mine.jpg"
    Image.fromarray(data.astronaut()).save(photo, quality=92)
    out = tmp_path / "bench"
    args = ["bench", "speed", "--image", str(photo), "--instruction", "make it warmer"]
    assert main([*args, "--rounds", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    (row,) = json.loads((out / "bench-speed.json").read_text())["rows"]
    assert row["instruction"] == "make it warmer" and row["layerpath"]["ok"]
    assert 0 < row["layerpath"]["seconds"] < 120 and row["layerpath"]["peak_mb"] > 10
    assert 0 < row["tools"] < row["layerpath"]["seconds"]  # (from the run's report)
    # the peer applied the .cube layerpath wrote for the edit
    assert row["pillow_lut"]["ok"] and row["pillow_lut"]["seconds"] > 0
    assert (row["imagemagick"] is not None) == (imagemagick() is not None)
    assert row["ratio"] == pytest.approx(
        row["layerpath"]["seconds"]
        / min(t["seconds"] for t in (row["pillow_lut"], row["imagemagick"]) if t)
    )
    assert "| make it warmer |" in printed and "mine.jpg" in printed
    assert main(["bench", "speed", "--image", str(tmp_path / "none.jpg")]) == 2


def test_a_looks_lut_holds_its_colour_steps(tmp_path: Path) -> None:
    """A look layerpath keeps out of a .cube (a sunset's glow and vignette) gets the LUT a
    photographer would have of it: warmer, as the look is. Words that name no look: none."""
    cube = look_cube("make it look like golden hour", tmp_path / "sunset.cube")
    assert cube is not None
    rows = [line.split() for line in cube.read_text().splitlines()]
    table = np.array([[float(v) for v in r] for r in rows if len(r) == 3 and r[0][0].isdigit()])
    assert table.shape == (33**3, 3)
    grey = table[np.arange(33) * (1 + 33 + 33 * 33)]  # the lattice's greys
    assert (grey[8:28, 0] > grey[8:28, 2] + 0.03).all()  # warmed: red over blue
    assert look_cube("make it warmer", tmp_path / "none.cube") is None
