"""Does the cut-out follow the subject's own outline?

A good matte's edge runs where the photo changes, from subject to background; a bad
one cuts through the subject (cut-off ears, holes through a neck) or through the
background (a block of sky kept, a frame-shaped guess), where the photo is alike on
both sides. Measured on a copy of the picture scaled to at most ANALYSIS_PIXELS: the
share of the matte's edge where the colours on its two sides are alike, how much of the
picture's border stays (background usually reaches the border), that what is kept is
one thing, not the subject and a piece of the photo apart from it (a fig beside it, a
patch of wall), and that some subject, but not all of the picture, is kept. The colours
must not change at all."""

from __future__ import annotations

import cv2
import numpy as np

from layerpath.engine.judge.checks.texture import lab_of
from layerpath.engine.judge.checks.verdict import Verdict, verdict
from layerpath.kit.imaging import erode, rgb, sample_at
from layerpath.kit.regions import analysis_copy

ANALYSIS_PIXELS = 1_000_000
#: the working point (engine/judge/checks/verdict.py): a raw score of 0.7 is the threshold, where
#: the labelled check set (seed 0) has 3.5 % false passes and 6 % false fails
STRICTNESS = 1.94


def alike_across(lab: np.ndarray, subject: np.ndarray, step: int) -> float:
    """The share of the subject's edge that separates nothing. Along the edge's normal,
    the colours `step` pixels inside and outside are compared with each other and with
    the colours a step further in and further out (the photo's own texture on each side):
    a true outline stands out from the texture on both its sides, even a faint one; a
    cut through the subject or through the background does not. Sampling a step away
    from the edge leaves a matte a pixel or two off its outline unharmed."""
    soft = cv2.GaussianBlur(lab, (0, 0), 1.0)
    inside = cv2.distanceTransform(subject.astype(np.uint8), cv2.DIST_L2, 5)
    outside = cv2.distanceTransform((~subject).astype(np.uint8), cv2.DIST_L2, 5)
    signed = cv2.GaussianBlur(outside - inside, (0, 0), 2.0)  # grows outwards
    edge = subject & ~erode(subject, 1)
    h, w = subject.shape
    edge[: 2 * step + 1], edge[-2 * step - 1 :] = False, False  # the picture's border
    edge[:, : 2 * step + 1], edge[:, -2 * step - 1 :] = False, False
    ys, xs = np.nonzero(edge)
    if len(ys) < 8:
        return 0.0
    gy = cv2.Sobel(signed, cv2.CV_32F, 0, 1)[ys, xs]
    gx = cv2.Sobel(signed, cv2.CV_32F, 1, 0)[ys, xs]
    norm = np.hypot(gx, gy) + 1e-6
    ny, nx = gy / norm, gx / norm

    def colour(offset: float) -> np.ndarray:
        return sample_at(soft, xs + nx * offset, ys + ny * offset, border=cv2.BORDER_REFLECT)

    out, far_out, inn, far_in = (colour(o) for o in (step, 2 * step, -step, -2 * step))
    across = np.linalg.norm(out - inn, axis=1)
    within = np.maximum(np.linalg.norm(inn - far_in, axis=1), np.linalg.norm(out - far_out, axis=1))
    alike = across < np.maximum(4.0, 1.3 * within)
    # count only long runs of such edge: a cut is a stretch of it, while a faint spot
    # of a true outline is short
    runs = np.zeros(subject.shape, np.uint8)
    runs[ys[alike], xs[alike]] = 1
    joined = cv2.dilate(runs, np.ones((3, 3), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    long_runs = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] >= 12 * step)
    long_runs = long_runs[long_runs > 0]
    in_long = np.isin(labels[ys[alike], xs[alike]], long_runs)
    return float(in_long.sum() / len(ys))


#: the share of what is kept that a second piece, apart from the largest, may have: on
#: the tuning photos' cut-outs right ones kept at most 0.065 apart (a leaf's tip), wrong
#: ones that passed the other measures 0.21-0.49 (the photo's own fig, a wall, a flower)
APART = (0.05, 0.2)


def second_piece(subject: np.ndarray) -> float:
    """The share of the kept area in its second-largest separate piece (0 when one)."""
    count, _, stats, _ = cv2.connectedComponentsWithStats(subject.astype(np.uint8))
    areas = sorted(stats[1:count, cv2.CC_STAT_AREA], reverse=True)
    return float(areas[1]) / max(1.0, float(subject.sum())) if len(areas) > 1 else 0.0


def check_cutout(before: np.ndarray, after: np.ndarray) -> Verdict:
    """How well `after`'s transparency cuts the subject out of `before` (RGBA)."""
    if before.shape != after.shape or np.any(rgb(before) != rgb(after)):
        return Verdict(0.0, "the colours changed: a cut-out only changes transparency")
    was = before[..., 3].astype(np.float32)
    kept = np.where(was > 0, after[..., 3].astype(np.float32) / np.maximum(was, 1.0), 0.0)
    matte, scale = analysis_copy(kept, ANALYSIS_PIXELS, cv2.INTER_AREA)
    picture, _ = analysis_copy(rgb(before), ANALYSIS_PIXELS)
    share = float(matte.mean())
    if share < 0.02:
        return Verdict(0.0, "no subject was kept")
    if share > 0.95:
        return Verdict(0.0, "almost nothing was removed")
    subject = matte > 0.5
    step = max(3, round(min(subject.shape) / 200))
    lab = lab_of(picture)
    defects: dict[str, float] = {}
    defects["an edge through the subject or the background"] = (
        max(0.0, alike_across(lab, subject, step) - 0.06) / 0.07
    )
    defects["two separate things kept"] = max(0.0, second_piece(subject) - APART[0]) / APART[1]
    border = np.concatenate([matte[0], matte[-1], matte[:, 0], matte[:, -1]])
    defects["background kept at the picture's border"] = max(0.0, float(border.mean()) - 0.35) / 0.2
    return verdict(defects, strictness=STRICTNESS)
