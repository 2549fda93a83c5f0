"""Did a new sky go in? Inside the photo's sky (away from its edge) the colours must now
be the reference sky's, as far as a viewer tells colours apart, and the picture around
the sky must be as it was."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from layerpath.engine.judge.checks.removal import untouched_outside
from layerpath.engine.judge.checks.verdict import Verdict, verdict
from layerpath.kit.colours import lab_exact_8bit
from layerpath.kit.imaging import dilate, erode, mean_near, rgb
from layerpath.kit.regions import analysis_copy
from layerpath.kit.sky_edge import REACH, fine_detail, things_in

#: how far apart (in CIELAB, mean and spread of L*, a*, b*) two skies' colours may lie and
#: still read as the same sky: about a just-noticeable step in each
TOLERANCE = np.array([6.0, 4.0, 4.0])
#: colours this close (CIELAB) read as the same colour of sky
LIKE = 6.0
#: pixels the sky's edge is looked at on
EDGE_PIXELS = 1_000_000


def sky_distance(lab: np.ndarray, stats: Mapping[str, Any]) -> float:
    """How far a sky's colours lie from `stats` (mean and spread of L*, a*, b*), in
    units of TOLERANCE: the larger of the means' and the spreads' distances."""
    mean = np.abs(lab.mean(axis=0) - np.array(stats["mean"])) / TOLERANCE
    spread = np.abs(lab.std(axis=0) - np.array(stats["std"])) / (2 * TOLERANCE)
    return float(max(np.sqrt((mean**2).sum()), np.sqrt((spread**2).sum())))


def laid_in(stats: Mapping[str, Any], region: np.ndarray) -> Mapping[str, Any]:
    """The colours a reference sky (engine/plan/references.py's sky_stats) shows once laid
    into `region` as tools/sky.py's covering lays it: scaled to cover the region's box,
    its horizon at the bottom, so a wide, low region shows only the sky's lower part. Its
    mean and spread over the region's own rows; the whole sky's stats when they do not
    say its rows."""
    if "rows" not in stats or not region.any():
        return stats
    ys = np.nonzero(region.any(axis=1))[0]
    xs = np.nonzero(region.any(axis=0))[0]
    reach = max(8, round(REACH * max(region.shape)))  # (the window sky_replace covers)
    top, bottom = max(0, ys[0] - reach), min(region.shape[0], ys[-1] + 1 + reach)
    left, right = max(0, xs[0] - reach), min(region.shape[1], xs[-1] + 1 + reach)
    height, width = bottom - top, right - left
    rows = np.array(stats["rows"], np.float64)
    kept = min(1.0, (height / width) / float(stats["aspect"]))  # its lower share shown
    counts = region[top:bottom].sum(axis=1).astype(np.float64)
    at = (1.0 - kept) + kept * (np.arange(height) + 0.5) / height  # where in the sky, 0..1
    band = np.clip((at * len(rows)).astype(int), 0, len(rows) - 1)
    means = rows[band]
    mean = (means * counts[:, None]).sum(axis=0) / counts.sum()
    # the spread: the whole sky's within its bands, and the bands' own spread shown here
    within = np.maximum(0.0, np.array(stats["std"]) ** 2 - rows.var(axis=0))
    between = ((means - mean) ** 2 * counts[:, None]).sum(axis=0) / counts.sum()
    return {"mean": mean.tolist(), "std": np.sqrt(within + between).tolist()}


def old_sky_left(before: np.ndarray, after: np.ndarray, mask: np.ndarray) -> float:
    """Of the pixels along the sky's edge that showed the old sky (a fringe around
    leaves, blades and roofs the mask left out), the share that still shows it after a
    new sky went in: a halo of old sky, seen at once against a new one."""
    small0, _ = analysis_copy(rgb(before), EDGE_PIXELS)
    small1, _ = analysis_copy(rgb(after), EDGE_PIXELS)
    region, _ = analysis_copy(mask.astype(np.uint8), EDGE_PIXELS)
    sky = region > 0
    reach = max(3, round(0.02 * max(sky.shape)))
    inside = erode(sky, reach)
    if inside.sum() < 64:
        return 0.0
    band = dilate(sky, reach) & ~sky  # (where a fringe the mask left out lies)
    lab0 = lab_exact_8bit(small0).astype(np.float32)
    lab1 = lab_exact_8bit(small1).astype(np.float32)
    old = mean_near(lab0, inside, reach)
    new = mean_near(lab1, inside, reach)
    differs = np.linalg.norm(new - old, axis=2) > 2 * LIKE
    was_sky = band & differs & (np.linalg.norm(lab0 - old, axis=2) < LIKE)
    if was_sky.sum() < 16:
        return 0.0
    still = was_sky & (np.linalg.norm(lab1 - old, axis=2) < LIKE)
    return float(still.sum() / was_sky.sum())


def objects_painted_over(before: np.ndarray, after: np.ndarray, mask: np.ndarray) -> float:
    """Of what stood in the sky (a mast, a tower, a wire: far more fine detail than the
    sky around it, tools/sky.py's things_in), the share the new sky covered: its detail
    gone where it was. Measured inside the sky, away from its edge (the horizon)."""
    small0, _ = analysis_copy(rgb(before), EDGE_PIXELS)
    small1, _ = analysis_copy(rgb(after), EDGE_PIXELS)
    region, _ = analysis_copy(mask.astype(np.uint8), EDGE_PIXELS)
    inner = erode(region > 0, max(3, round(0.035 * max(region.shape))))
    standing = things_in(small0, region > 0) & inner
    if standing.sum() < 16:
        return 0.0
    return float((fine_detail(small1)[standing] < 0.3 * fine_detail(small0)[standing]).mean())


def check_sky_replaced(
    before: np.ndarray, after: np.ndarray, mask: np.ndarray, reference: Mapping[str, Any]
) -> Verdict:
    """How well the sky in `mask` became the reference's sky (`reference`: its colours'
    mean and spread in CIELAB)."""
    inner = erode(mask, max(2, round(0.01 * max(mask.shape))))
    inner = inner if inner.sum() >= 64 else mask
    if not inner.any():
        return Verdict(0.0, "no sky to replace")
    step = max(1, int(np.sqrt(inner.sum() / 200_000)))
    pick = np.zeros_like(inner)
    pick[::step, ::step] = True
    lab = lambda picture: lab_exact_8bit(rgb(picture)[inner & pick])  # noqa: E731
    shown = laid_in(reference, mask)
    now, was = sky_distance(lab(after), shown), sky_distance(lab(before), shown)
    defects = {"not the reference's sky": max(0.0, now - 1.0)}
    if was > 1.0:  # a sky already like the reference's cannot show that it changed
        defects["the sky hardly changed"] = max(0.0, 1.0 - (was - now) / (was - 1.0 + 1e-6)) * 2
    defects["the old sky left along the edges"] = old_sky_left(before, after, mask) / 0.1
    defects["what stood in the sky painted over"] = objects_painted_over(before, after, mask) / 0.2
    # the sky's edge may move past the found sky, and the old sky showing past that
    # edge be replaced, each as far as tools/sky.py's REACH
    reach = max(6, round(0.065 * max(mask.shape)))
    untouched = untouched_outside(before, after, dilate(mask, reach))
    return verdict(defects, untouched)
