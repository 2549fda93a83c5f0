"""Did an adjustment do what was asked? Each is measured where a photographer would see
it, independently of how the tool made it: 'warmer' moves the mean b* up, 'black and
white' leaves no chroma, 'brighter' lifts L*, noise reduction lowers the measured noise
while the edges stay, a blur lowers fine detail, a vignette darkens the corners against
the centre; and nothing outside the region changed. An effect too small to see (under
the tolerance a viewer would notice) is a failed step, not a done one."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import cache
from typing import Any

import cv2
import numpy as np

from layerpath.engine.judge.checks.removal import untouched_outside
from layerpath.engine.judge.checks.sky import sky_distance
from layerpath.engine.judge.checks.verdict import Verdict
from layerpath.kit.adjustments import ADJUSTMENTS
from layerpath.kit.colours import hue_direction, lab_exact, lab_exact_8bit
from layerpath.kit.imaging import dilate, erode, mask_box, noise_sigma, rgb
from layerpath.kit.regions import analysis_copies, block_copy

#: pixels a statistic is measured on (a scaled copy); fine detail at native size
ANALYSIS_PIXELS = 1_000_000
DETAIL_SIDE = 1024


def _lab(pixels: np.ndarray) -> np.ndarray:
    if pixels.dtype == np.uint8:
        return lab_exact_8bit(rgb(pixels))
    top = 65535.0 if pixels.dtype == np.uint16 else 255.0
    return lab_exact(rgb(pixels).astype(np.float64) / top)


def _within(values: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """values[inside] (a pixel per row), without copying them when the region is the
    whole picture (a boolean pick copies at 20 ms a megapixel)."""
    if inside.all():
        return values.reshape(-1, *values.shape[inside.ndim :])
    return values[inside]


def _detail_box(region: np.ndarray) -> tuple[int, int, int, int]:
    """The DETAIL_SIDE square (or less, in a smaller picture) holding the most of the
    region: where its fine detail is measured at native size. (A background's middle is
    often the subject: its central square may hold none of it.)"""
    h, w = region.shape[:2]
    side_y, side_x = min(h, DETAIL_SIDE), min(w, DETAIL_SIDE)
    step = max(1, max(h, w) // 512)
    coarse = cv2.resize(
        region.astype(np.float32),
        (max(1, w // step), max(1, h // step)),
        interpolation=cv2.INTER_AREA,
    )
    ky, kx = max(1, side_y // step), max(1, side_x // step)
    # the sum over each window (its top-left corner's), from the integral image
    total = cv2.integral(coarse)
    rows, cols = coarse.shape[0] - ky + 1, coarse.shape[1] - kx + 1
    if rows < 1 or cols < 1:
        return 0, 0, w, h
    sums = total[ky : ky + rows, kx : kx + cols] - total[:rows, kx : kx + cols]
    sums -= total[ky : ky + rows, :cols] - total[:rows, :cols]
    y, x = np.unravel_index(int(np.argmax(sums)), sums.shape)
    x0, y0 = min(int(x) * step, w - side_x), min(int(y) * step, h - side_y)
    return x0, y0, x0 + side_x, y0 + side_y


def _detail_crop(pixels: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The grey values of a box of the picture at native size."""
    x0, y0, x1, y1 = box
    part = pixels[y0:y1, x0:x1]
    top = 65535.0 if part.dtype == np.uint16 else 255.0
    grey = rgb(part).astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    return grey * (255.0 / top)


def _fine_detail(grey: np.ndarray, inside: np.ndarray) -> float:
    """The finest detail's strength inside the region (away from its edge, where the
    step's feathering and the region's own border would count)."""
    core = cv2.erode(inside.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    core = core if core.sum() >= 64 else inside
    return float(cv2.Laplacian(grey, cv2.CV_32F)[core].var())


#: the fewest pixels a region must hold for a check to measure anything in it
FEWEST_PIXELS = 64


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
    whole = region is None or not region.any() or bool(region.all())
    if region is not None and not whole:
        # a blur or a feathered edge reads a little past the region, never far
        untouched = untouched_outside(before, after, dilate(region, 2))
    if whole and op not in ("sharpen", "blur", "denoise"):
        if not params.get("graduated"):
            # the whole picture: no edge to measure inside of, and its statistics are
            # read on a scaled copy (a camera file's every pixel is not needed)
            before, after = (block_copy(p, ANALYSIS_PIXELS) for p in (before, after))
        region = None
    if region is None:
        region = np.ones(before.shape[:2], dtype=bool)
    if params.get("graduated"):  # measured where the filter is whole: its first quarter
        region = region & _side_band(region.shape, str(params["graduated"]), 0.25)
        if not region.any():
            return Verdict(0.0, "the graduated side holds none of the region")
    bounds = mask_box(region)
    assert bounds is not None
    # measured inside the region's feathered edge (where the effect is whole)
    interior = erode(region, max(2, round(0.02 * min(bounds.width, bounds.height))))
    region = interior if interior.sum() >= FEWEST_PIXELS else region
    if region.sum() < FEWEST_PIXELS:
        return Verdict(0.0, "the region is too small to judge", {"the region is empty": 2.0})
    if op == "look":
        return _look(str(params.get("look")), amount, before, after, region, bounds, untouched)
    if op in ("sharpen", "blur", "denoise"):
        box = _detail_box(region)
        start, end = _detail_crop(before, box), _detail_crop(after, box)
        inside = region[box[1] : box[3], box[0] : box[2]]
        return _detail(op, amount, start, end, inside, untouched)
    (small_before, small_after, inside), _ = analysis_copies(
        bounds, ANALYSIS_PIXELS, before, after, region
    )
    whole0, whole1 = _lab(small_before), _lab(small_after)
    lab0, lab1 = _within(whole0, inside), _within(whole1, inside)
    if not len(lab0):
        return Verdict(0.0, "the region is empty")
    moved, needed, what = _tonal(op, amount, params, lab0, lab1, whole0, whole1, inside)
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
    elif op in ("saturation", "vibrance") and amount > 0:
        if _mean_chroma(lab0) < GREY_PHOTO:
            reason = "the photo has no colour to strengthen (it is grey)"
    return _graded(shortfall, 0.75, reason, untouched)


def _parts(
    whole: np.ndarray, inside: np.ndarray, reference: Mapping[str, Any]
) -> np.ndarray | None:
    """Which of the region's pixels (`inside` the bounds' Lab picture `whole`, in order)
    are sky, when the reference was matched sky to sky; None when it was matched whole."""
    if not isinstance(reference.get("parts"), Mapping):
        return None
    from layerpath.kit.colours import rgb_exact
    from layerpath.kit.sky import picture_sky

    picture = np.clip(np.rint(rgb_exact(whole) * 255.0), 0, 255).astype(np.uint8)
    sky = picture_sky(picture)
    return None if sky is None else (sky > 0.5)[inside]


def match_distance(
    lab: np.ndarray, reference: Mapping[str, Any], sky: np.ndarray | None = None
) -> float:
    """How far a picture's colours (N x 3 CIELAB) lie from a reference's: its sky's from
    the reference's sky's and its ground's from the reference's ground's, where `sky`
    tells them apart (like with like), else overall."""
    if sky is None or not sky.any() or sky.all():
        return sky_distance(lab, reference)
    parts = reference["parts"]
    return 0.5 * (sky_distance(lab[sky], parts["sky"]) + sky_distance(lab[~sky], parts["ground"]))


def _side_band(shape: tuple[int, ...], side: str, share: float) -> np.ndarray:
    """The share of the frame along one side: where a graduated filter is whole."""
    band = np.zeros(shape[:2], dtype=bool)
    h, w = shape[:2]
    rows, cols = max(1, round(h * share)), max(1, round(w * share))
    if side == "top":
        band[:rows] = True
    elif side == "bottom":
        band[h - rows :] = True
    elif side == "left":
        band[:, :cols] = True
    else:
        band[:, w - cols :] = True
    return band


#: a green leaf's hues in CIELAB (degrees of atan2(b*, a*)) and the chroma that counts
GREEN_HUES, GREEN_CHROMA = (100.0, 200.0), 12.0
#: pixels this close to grey before a look carry its white point: where a warmer or a
#: pinker light shows (a saturated or a darkened colour moves b* for other reasons)
NEUTRAL_CHROMA = 15.0
#: a photo's mean chroma below which it has no colour a look could take away (a grey
#: photo: less than half of a just-noticeable difference; a moody look on KDE's grey
#: ColdRipple was refused as "the colourfulness hardly changed (610711x the tolerance)")
GREY_PHOTO = 1.0
#: the measures' plain names, for a failed check's reason
MEASURE_WORDS = {"lightness": "the brightness", "warmth": "the warmth", "tint": "the tint",
                 "chroma": "the colourfulness", "contrast": "the contrast",
                 "local_contrast": "the local contrast", "black_point": "the black point",
                 "greens": "the share of green", "autumn_hues": "the autumn colours", "split": "the warm highlights against the cool shadows",
                 "redrawn": "the fine detail (not redrawn as in that medium)"}  # fmt: skip


#: the hues of autumn leaves: red, orange, ochre, yellow
AUTUMN_HUES = (20.0, 95.0)


def _share(lab: np.ndarray, hues: tuple[float, float]) -> float:
    """The share (in points) of pixels of those hues, colourful enough to count."""
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    return 100.0 * float(((hue >= hues[0]) & (hue <= hues[1]) & (chroma >= GREEN_CHROMA)).mean())


def _mean_chroma(lab: np.ndarray) -> float:
    """The mean chroma of a list of Lab pixels (under GREY_PHOTO: a grey photo)."""
    return float(np.hypot(lab[:, 1], lab[:, 2]).mean())


def _greens(lab: np.ndarray) -> float:
    return _share(lab, GREEN_HUES)


def _local_contrast(lightness: np.ndarray) -> float:
    """How far the brightness departs from its surroundings on average (clarity)."""
    sigma = max(1.5, 0.015 * min(lightness.shape))
    return float(np.abs(lightness - cv2.GaussianBlur(lightness, (0, 0), sigma)).mean())


def _detail_and_layout(lightness: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fine detail (what a 1.5 px blur takes away) and the coarse layout (a blur at
    a hundredth of the picture) of a brightness picture."""
    layout = cv2.GaussianBlur(lightness, (0, 0), max(1.5, 0.01 * min(lightness.shape)))
    return lightness - cv2.GaussianBlur(lightness, (0, 0), 1.5), layout


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    if float(a.std()) < 1e-6 or float(b.std()) < 1e-6:
        return 1.0 if np.allclose(a, b) else 0.0
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


def look_changes(
    before: np.ndarray,
    after: np.ndarray,
    inside: np.ndarray,
    measures: Collection[str] | None = None,
) -> dict[str, float | None]:
    """What moved between two Lab pictures (H x W x 3) inside the region, per measure of
    tools/data/looks.json (those in `measures`; None: all); None where this photo cannot
    show it. The white point is read on the mid-tone pixels near grey (a saturated or a
    darkened colour moves b* for other reasons); a photo without them (a meadow) cannot
    show it. "layout": not an expectation, how much of the coarse layout is still there
    (1 = all). Only the measures asked for are worked out (a look names three or four)."""
    lab0, lab1 = _within(before, inside), _within(after, inside)
    l0, l1 = lab0[:, 0], lab1[:, 0]

    @cache
    def chromas() -> tuple[np.ndarray, np.ndarray]:
        return np.hypot(lab0[:, 1], lab0[:, 2]), np.hypot(lab1[:, 1], lab1[:, 2])

    def shift(c: int) -> float | None:
        neutral = (l0 > 20) & (l0 < 95) & (chromas()[0] < NEUTRAL_CHROMA)
        if neutral.mean() < 0.02 or neutral.sum() < 64:
            return None
        return float(lab1[neutral, c].mean() - lab0[neutral, c].mean())

    def local() -> float:
        local0 = _local_contrast(np.where(inside, before[..., 0], float(l0.mean())))
        local1 = _local_contrast(np.where(inside, after[..., 0], float(l1.mean())))
        return local1 / max(1e-6, local0) - 1.0

    def split() -> float:
        bright, dark = l0 >= np.percentile(l0, 70), l0 <= np.percentile(l0, 30)
        of = lambda lab: float(lab[bright, 2].mean() - lab[dark, 2].mean())  # noqa: E731
        return of(lab1) - of(lab0)

    @cache
    def detail() -> tuple[np.ndarray, ...]:
        fine0, layout0 = _detail_and_layout(np.where(inside, before[..., 0], float(l0.mean())))
        fine1, layout1 = _detail_and_layout(np.where(inside, after[..., 0], float(l1.mean())))
        return fine0, fine1, layout0, layout1

    makers: dict[str, Callable[[], float | None]] = {
        "lightness": lambda: float(l1.mean() - l0.mean()),
        "warmth": lambda: shift(2),
        "tint": lambda: shift(1),
        "chroma": lambda: float(chromas()[1].mean() - chromas()[0].mean()),
        "contrast": lambda: float(l1.std() - l0.std()),
        "local_contrast": local,
        "black_point": lambda: float(np.percentile(l1, 10) - np.percentile(l0, 10)),
        "greens": lambda: _greens(lab1) - _greens(lab0),
        "autumn_hues": lambda: _share(lab1, AUTUMN_HUES) - _share(lab0, AUTUMN_HUES),
        "split": split,
        "redrawn": lambda: (
            1.0 - _correlation(_within(detail()[0], inside), _within(detail()[1], inside))
        ),
        "layout": lambda: _correlation(_within(detail()[2], inside), _within(detail()[3], inside)),
    }
    return {measure: makers[measure]() for measure in (makers if measures is None else measures)}


def _look(
    name: str,
    strength: float,
    before: np.ndarray,
    after: np.ndarray,
    region: np.ndarray,
    bounds: Any,
    untouched: float,
) -> Verdict:
    """Whether the look shows: each of its expectations (tools/data/looks.json) moved in
    its direction by enough of what the look at this strength asks, as far as this photo
    can show it (colour it has not got cannot be taken away)."""
    from layerpath.kit.looks import looks

    look = looks().get(name)
    if look is None:
        return Verdict(0.0, f"'{name}' is not a look")
    (small_before, small_after, inside), _ = analysis_copies(
        bounds, ANALYSIS_PIXELS, before, after, region
    )
    if not inside.any():
        return Verdict(0.0, "the region is empty")
    lab0, lab1 = _lab(small_before), _lab(small_after)
    changes = look_changes(lab0, lab1, inside, [*look.expect, "layout"])
    inner = _within(lab0, inside)
    defects: dict[str, float] = {}
    for measure, expected in look.expect.items():
        need, moved = expected * strength, changes[measure]
        if moved is None:
            continue  # this photo cannot show it; the look's other measures decide
        if measure in ("greens", "autumn_hues"):  # as much as there is green to turn
            greens0 = _greens(inner)
            if greens0 < 3.0:
                defects["hardly any green in the photo to turn"] = 2.0
                continue
            need = float(np.sign(need)) * min(abs(need), 0.5 * greens0)
        elif measure == "chroma":  # a share of the colour the photo has
            chroma0 = _mean_chroma(inner)
            if need < 0 and chroma0 < GREY_PHOTO:
                continue  # no colour to take away; the look's other measures decide
            need = max(need, -0.3 * chroma0) if need < 0 else min(need, 0.15 * chroma0)
        shortfall = (abs(need) - np.sign(need) * moved) / max(1e-6, abs(need))
        defects[f"{MEASURE_WORDS[measure]} hardly changed"] = max(0.0, shortfall) / 0.75
    if not defects:
        return Verdict(0.0, "this photo's colours cannot show the look")
    # restyled, not lost: the picture's layout is still there to recognise
    kept = float(changes["layout"] or 0.0)
    defects["the picture's layout was lost"] = max(0.0, 0.6 - kept) / 0.15
    return _worst(defects, untouched)


def _tonal(
    op: str,
    amount: float,
    params: Mapping[str, Any],
    lab0: np.ndarray,
    lab1: np.ndarray,
    whole0: np.ndarray,
    whole1: np.ndarray,
    inside: np.ndarray,
) -> tuple[float, float, str]:
    """(what moved, in the asked direction; what must move at least; what it is), from
    the region's Lab values before and after (`whole0`, `whole1`: its bounds' Lab
    pictures, for where in the frame a change lies; `inside`: the region there)."""
    sign = 1.0 if amount >= 0 else -1.0
    l0, l1 = lab0[:, 0], lab1[:, 0]
    chroma0, chroma1 = np.hypot(lab0[:, 1], lab0[:, 2]), np.hypot(lab1[:, 1], lab1[:, 2])
    need = 1.5 * min(1.0, abs(amount) / 0.25)  # a small asked change: a small visible one
    if op == "exposure":
        return sign * float(l1.mean() - l0.mean()), need, "brightness"
    if op == "match":  # the colours' distance to the reference's, closed by enough
        reference = params.get("ref_stats") or {"mean": [0, 0, 0], "std": [0, 0, 0]}
        parts = _parts(whole0, inside, reference)
        was, now = match_distance(lab0, reference, parts), match_distance(lab1, reference, parts)
        return was - now, 0.5 * amount * max(0.0, was - 1.0), "the colours (to the reference's)"
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
    return Verdict(score, "; ".join(reasons), dict(defects), untouched=untouched)
