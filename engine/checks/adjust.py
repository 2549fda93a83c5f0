"""Did an adjustment do what was asked? Each is measured where a photographer would see
it, independently of how the tool made it: 'warmer' moves the mean b* up, 'black and
white' leaves no chroma, 'brighter' lifts L*, noise reduction lowers the measured noise
while the edges stay, a blur lowers fine detail, a vignette darkens the corners against
the centre; and nothing outside the region changed. An effect too small to see (under
the tolerance a viewer would notice) is a failed step, not a done one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.engine.checks.removal import untouched_outside
from layerpath.engine.checks.verdict import Verdict
from layerpath.tools.adjust import ADJUSTMENTS, hue_direction, noise_sigma
from layerpath.tools.imaging import dilate, erode, lab_exact, mask_box, rgb
from layerpath.tools.regions import analysis_copy, crop

#: pixels a statistic is measured on (a scaled copy); fine detail at native size
ANALYSIS_PIXELS = 1_000_000
DETAIL_SIDE = 1024


def _lab(pixels: np.ndarray) -> np.ndarray:
    top = 65535.0 if pixels.dtype == np.uint16 else 255.0
    return lab_exact(rgb(pixels).astype(np.float64) / top)


def _detail_crop(pixels: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The grey values of the region's central DETAIL_SIDE square at native size."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    half = DETAIL_SIDE // 2
    part = pixels[max(y0, cy - half) : min(y1, cy + half), max(x0, cx - half) : min(x1, cx + half)]
    top = 65535.0 if part.dtype == np.uint16 else 255.0
    grey = rgb(part).astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    return grey * (255.0 / top)


def _fine_detail(grey: np.ndarray, inside: np.ndarray) -> float:
    """The finest detail's strength inside the region (away from its edge, where the
    step's feathering and the region's own border would count)."""
    core = cv2.erode(inside.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    core = core if core.sum() >= 64 else inside
    return float(cv2.Laplacian(grey, cv2.CV_32F)[core].var())


def check_adjustment(
    params: Mapping[str, Any], before: np.ndarray, after: np.ndarray, region: np.ndarray | None
) -> Verdict:
    """How well the adjustment `params` ('op', 'amount', ...) shows between `before` and
    `after` (RGBA, one size) inside `region` (None: the whole picture)."""
    op = str(params.get("op"))
    spec = ADJUSTMENTS.get(op)
    if spec is None:
        return Verdict(0.0, f"'{op}' is not an adjustment")
    amount = float(params["amount"]) if params.get("amount") is not None else spec.default
    untouched = 1.0
    if region is not None and region.any():
        # a blur or a feathered edge reads a little past the region, never far
        untouched = untouched_outside(before, after, dilate(region, 2))
    if region is None or not region.any():
        region = np.ones(before.shape[:2], dtype=bool)
    bounds = mask_box(region)
    assert bounds is not None
    # measured inside the region's feathered edge (where the effect is whole)
    interior = erode(region, max(2, round(0.02 * min(bounds.width, bounds.height))))
    region = interior if interior.sum() >= 64 else region
    box = (bounds.x0, bounds.y0, bounds.x1, bounds.y1)
    if op in ("sharpen", "blur", "denoise"):
        start, end = _detail_crop(before, box), _detail_crop(after, box)
        inside = _detail_crop(region.astype(np.uint8)[..., None].repeat(3, 2), box) > 0.5
        return _detail(op, amount, start, end, inside, untouched)
    small_before, _ = analysis_copy(crop(before, bounds), ANALYSIS_PIXELS)
    small_after, _ = analysis_copy(crop(after, bounds), ANALYSIS_PIXELS)
    inside, _ = analysis_copy(crop(region, bounds), ANALYSIS_PIXELS)
    whole0, whole1 = _lab(small_before), _lab(small_after)
    lab0, lab1 = whole0[inside], whole1[inside]
    if not len(lab0):
        return Verdict(0.0, "the region is empty")
    moved, needed, what = _tonal(op, amount, params, lab0, lab1, whole0, whole1)
    if what == "black and white":
        return _graded(needed - moved, 1.0, "colour left in a black and white picture", untouched)
    if what == "white balance":
        return _graded(moved - needed, 2.0, "the colour cast is still there", untouched)
    shortfall = (needed - moved) / max(1e-6, abs(needed)) if needed else 0.0
    reason = f"{what} hardly changed"
    if op == "shadows" and np.percentile(lab0[:, 0], 25) > 60:
        reason = "the photo has hardly any shadows (its darkest quarter is light)"
    elif op == "highlights" and np.percentile(lab0[:, 0], 90) < 55:
        reason = "the photo has hardly any highlights (its brightest tenth is dark)"
    return _graded(shortfall, 0.75, reason, untouched)


def _tonal(
    op: str,
    amount: float,
    params: Mapping[str, Any],
    lab0: np.ndarray,
    lab1: np.ndarray,
    whole0: np.ndarray,
    whole1: np.ndarray,
) -> tuple[float, float, str]:
    """(what moved, in the asked direction; what must move at least; what it is), from
    the region's Lab values before and after (`whole0`, `whole1`: its bounds' Lab
    pictures, for where in the frame a change lies)."""
    sign = 1.0 if amount >= 0 else -1.0
    l0, l1 = lab0[:, 0], lab1[:, 0]
    chroma0, chroma1 = np.hypot(lab0[:, 1], lab0[:, 2]), np.hypot(lab1[:, 1], lab1[:, 2])
    need = 1.5 * min(1.0, abs(amount) / 0.25)  # a small asked change: a small visible one
    if op == "exposure":
        return sign * float(l1.mean() - l0.mean()), need, "brightness"
    if op in ("contrast", "curve") and not params.get("points"):
        if amount < 0 and op == "curve":  # a matte look: the blacks lifted
            dark = l0 <= np.percentile(l0, 10)
            return float(l1[dark].mean() - l0[dark].mean()), need, "the black point"
        return sign * float(l1.std() - l0.std()), need, "contrast"
    if op == "curve":
        return float(np.abs(l1 - l0).mean()), 1.0, "the tones"
    if op == "highlights":
        bright = l0 >= np.percentile(l0, 90)
        return sign * float(l1[bright].mean() - l0[bright].mean()), need, "the highlights"
    if op == "shadows":
        dark = l0 <= np.percentile(l0, 25)
        return sign * float(l1[dark].mean() - l0[dark].mean()), need, "the shadows"
    if op == "temperature":
        return sign * float(lab1[:, 2].mean() - lab0[:, 2].mean()), need, "the warmth"
    if op == "tint":
        return sign * float(lab1[:, 1].mean() - lab0[:, 1].mean()), need, "the tint"
    if op in ("saturation", "vibrance"):
        return sign * float(chroma1.mean() - chroma0.mean()), need, "the colour"
    if op == "color":
        direction = hue_direction(str(params.get("colour")))
        along = lambda lab: float((lab[:, 1:] @ direction).mean())  # noqa: E731
        return along(lab1) - along(lab0), need, f"the {params.get('colour')}"
    if op == "black_and_white":
        if params.get("tone"):  # toned: one hue left, so chroma lies along one line
            ab = lab1[:, 1:] - lab1[:, 1:].mean(axis=0)
            spread = np.linalg.svd(ab[:: max(1, len(ab) // 20000)], compute_uv=False)
            off_line = float(spread[-1] / np.sqrt(max(1, len(ab[:: max(1, len(ab) // 20000)]))))
            return 0.0, off_line / 2.0, "black and white"
        return 0.0, float(np.percentile(chroma1, 99)) / 3.0 * min(1.0, amount), "black and white"
    if op == "white_balance":
        mid = (l0 > 15) & (l0 < 90)
        cast0 = float(np.hypot(*lab0[mid, 1:].mean(axis=0))) if mid.any() else 0.0
        cast1 = float(np.hypot(*lab1[mid, 1:].mean(axis=0))) if mid.any() else 0.0
        # the cast must fall to near neutral, or by most of itself
        return cast1 / max(2.5, 0.5 * cast0), 0.0, "white balance"
    if op == "vignette":
        h, w = whole0.shape[:2]
        corners = np.zeros((h, w), bool)
        ch, cw = max(1, h // 6), max(1, w // 6)
        for ys in (slice(0, ch), slice(h - ch, h)):
            for xs in (slice(0, cw), slice(w - cw, w)):
                corners[ys, xs] = True
        centre = np.zeros((h, w), bool)
        centre[h // 3 : 2 * h // 3, w // 3 : 2 * w // 3] = True
        grey0, grey1 = whole0[..., 0], whole1[..., 0]
        edge = (grey0[corners].mean() - grey1[corners].mean()) - (
            grey0[centre].mean() - grey1[centre].mean()
        )
        return sign * float(edge), need, "the corners"
    return 0.0, 1.0, op


def _detail(
    op: str, amount: float, start: np.ndarray, end: np.ndarray, inside: np.ndarray, untouched: float
) -> Verdict:
    if op == "denoise":
        noise0, noise1 = noise_sigma(start), noise_sigma(end)
        if noise0 < 1.0:  # nothing to take away
            return _graded(0.0, 1.0, "", untouched)
        # less noise, by a share a viewer sees; edges kept (the picture's broad detail)
        drop = 1.0 - noise1 / noise0
        soft0 = cv2.GaussianBlur(start, (0, 0), 2.0)
        soft1 = cv2.GaussianBlur(end, (0, 0), 2.0)
        kept = float(np.corrcoef(cv2.Laplacian(soft0, cv2.CV_32F).ravel(),
                                 cv2.Laplacian(soft1, cv2.CV_32F).ravel())[0, 1])  # fmt: skip
        lost = max(0.0, (0.8 - kept) / 0.2)
        defects = {"the noise is still there": max(0.0, (0.2 - drop) / 0.2), "edges lost": lost}
        return _worst(defects, untouched)
    detail0 = _fine_detail(start, inside)
    detail1 = _fine_detail(end, inside)
    ratio = detail1 / max(1e-6, detail0)
    if op == "sharpen":
        need = 1.0 + 0.15 * min(1.0, amount / 0.5)
        return _graded((need - ratio) / (need - 1.0), 0.5, "hardly sharper", untouched)
    return _graded((ratio - 0.5) / 0.5, 0.5, "hardly blurred", untouched)


def _graded(defect: float, tolerance: float, reason: str, untouched: float) -> Verdict:
    return _worst({reason: max(0.0, defect) / tolerance}, untouched)


def _worst(defects: Mapping[str, float], untouched: float) -> Verdict:
    size = max(defects.values(), default=0.0)
    name = max(defects, key=lambda k: defects[k]) if defects else ""
    score = 0.92 * 0.5**size * untouched
    reasons = [name] if size >= 0.5 and name else []
    if untouched < 0.9:
        reasons.append("pixels changed outside the region")
    return Verdict(score, "; ".join(reasons), dict(defects))
