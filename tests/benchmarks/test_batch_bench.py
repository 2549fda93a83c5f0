"""`layerpath bench --suite batch` end to end on small photos: each configuration
through the real `layerpath batch` command in a fresh process (locally, and on a local
Ray when it is installed), its timings read back from the batch's own journal."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from layerpath.benchmarks.batch import bench_batch

pytest.importorskip("skimage")


@pytest.mark.slow
def test_bench_batch_measures_every_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = bench_batch(tmp_path, "make it warmer", megapixels=0.3, count=4, fmt="jpg")

    with_ray = importlib.util.find_spec("ray") is not None
    expected = [("local", 1), ("local", 2)] + ([("ray", 1), ("ray", 2)] if with_ray else [])
    assert [(r.runner, r.jobs) for r in runs] == expected
    for run in runs:
        assert run.exit_code == 0 and run.photos == 4
        assert run.per_minute > 0 and 0 < run.startup < run.wall
        assert run.tools > 0 and run.file_work > 0 and run.batch_work >= 0
    printed = capsys.readouterr().out
    assert "| runner | jobs | photos / min |" in printed and printed.count("| local |") == 2
    saved = json.loads((tmp_path / "batch.json").read_text())
    assert len(saved["runs"]) == len(runs) and saved["instruction"] == "make it warmer"
    # the peers on the same photos, side by side: Pillow applying the edit's LUT always,
    # ImageMagick's mogrify where it is installed
    from layerpath.benchmarks.speed import imagemagick

    peers = {p["peer"]: p for p in saved["peers"]}
    assert peers["Pillow 3D LUT"]["photos"] == 4 and peers["Pillow 3D LUT"]["per_minute"] > 0
    assert ("ImageMagick mogrify" in peers) == (imagemagick() is not None)
    assert "| Pillow 3D LUT |" in printed and saved["format"] == "jpg"
