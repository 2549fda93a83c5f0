"""`layerpath bench removal`'s parts on scikit-image's photos (they ship inside the
scikit-image package) and a thing made in code: placements with the truth kept, scores
against it, the fills side by side. (The full suite fetches Debian's photos; GIMP's peer
is measured by hand: it installs gimp.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from layerpath.benchmarks import removal
from layerpath.benchmarks.photos import skimage_photos
from layerpath.benchmarks.sources import Cutout
from layerpath.engine.execute.executor import Engine
from layerpath.errors import BadInput
from layerpath.tools.registry import Registry

pytest.importorskip("skimage")


def stone() -> Cutout:
    h, w = 90, 120
    yy, xx = np.mgrid[:h, :w]
    alpha = (((xx - w / 2) / (w / 2)) ** 2 + ((yy - h / 2) / (h / 2)) ** 2 <= 1).astype(np.float32)
    return Cutout("stone", np.full((h, w, 3), (120, 60, 200), np.uint8), alpha)


def test_placements_keep_the_truth_and_a_painted_mask() -> None:
    photos = [p for p in skimage_photos() if p.name in ("grass", "gravel")]
    found = removal.placements(photos, [stone()], 3, seed=0, megapixels=2.0)
    assert [p.photo for p in found] == ["grass", "gravel", "grass"]
    for p in found:
        changed = np.abs(p.image.astype(int) - p.truth).max(axis=2) > 0
        assert changed.any() and not (changed & ~p.mask).any()  # the mask covers the thing
        assert p.mask.sum() > changed.sum()  # grown past it, as a photographer paints
    again = removal.placements(photos, [stone()], 3, seed=0, megapixels=2.0)
    assert all(np.array_equal(a.mask, b.mask) for a, b in zip(found, again, strict=True))


def test_camera_size_placements_are_made_on_the_photo_enlarged() -> None:
    """`--megapixels 24`: the photo brought to camera size (scikit-image's are 0.3 MP),
    the thing as large a share of it; at the bench's own 2 MP a smaller photo stays as
    it is."""
    photos = [p for p in skimage_photos() if p.name == "grass"]
    (small,) = removal.placements(photos, [stone()], 1, seed=0, megapixels=2.0)
    assert small.image.shape == photos[0].rgb.shape
    (large,) = removal.placements(photos, [stone()], 1, seed=0, megapixels=24.0)
    assert 23.5e6 <= large.image.shape[0] * large.image.shape[1] <= 24.5e6
    thing = lambda p: (np.abs(p.image.astype(int) - p.truth).max(axis=2) > 0).mean()  # noqa: E731
    assert 0.5 < thing(large) / thing(small) < 2.0


def test_the_truth_is_clean_telea_on_gravel_is_not_and_layerpath_is_scored_as_delivered() -> None:
    photos = [p for p in skimage_photos() if p.name == "gravel"]
    (p,) = removal.placements(photos, [stone()], 1, seed=0, megapixels=2.0)
    truth = removal.scored(p, "truth", p.truth, 0.0)
    assert truth.clean and not truth.wrong and truth.outside == 0 and truth.psnr > 60
    smear = removal.scored(p, "telea", removal.telea(p), 0.0)
    assert not smear.clean and smear.detail < 0.7 and smear.outside == 0
    run, after = removal.delivered(Engine(Registry.from_catalogue()), p)
    assert run.fill == "layerpath" and run.delivered is not None
    changed = np.abs(after.astype(int) - p.image).max(axis=2) > 0
    assert not (changed & ~p.mask).any()  # what it delivers stays inside the mask
    rows = removal.summary([truth, smear, run])
    assert [r["fill"] for r in rows] == ["telea", "layerpath"]
    assert "| telea |" in removal.markdown(
        {"split": "tuning", "seed": 0, "placements": 1, "photos": 1, "megapixels": "0.3",
         "machine": "here", "date": "today", "summary": rows}
    )  # fmt: skip


def test_the_gimp_peer_missing_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAYERPATH_HEAL", str(tmp_path / "nowhere" / "heal"))
    with pytest.raises(BadInput, match="LAYERPATH_HEAL"):
        removal.gimp_heal([], tmp_path)
