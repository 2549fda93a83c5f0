"""Tasks of the photos suite whose truth is a region (issue 25): a sky from one photo put
above another photo's horizon (the sky's truth), a photographed thing with its own alpha
put on a photo (the subject's and the background's truth), and a thing with a soft edge
to recolour through a mask drawn a little loose. Each is asked in everyday words, and
scored by what changed where: inside the region that should change, and outside it.

Everything put in comes from benchmarks/sources.py, by split: the tuning photos, skies
and things, or the held-out ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from layerpath.benchmarks.sources import Cutout
from layerpath.kit.imaging import dilate, erode

#: what a sky task asks, and whether the sky is what changes ('kept': all but the sky)
SKY_EDITS = (
    ("darken the sky", "sky"),
    ("darken the sky with a graduated filter", "graduated"),
    ("make the sky bluer", "sky"),
    ("give it a dramatic look but don't touch the sky", "kept"),
    ("replace the sky with the one in ref", "replaced"),
)
#: what a subject task asks of the background
BACKGROUND_EDITS = (
    "blur the background",
    "darken the background",
    "make the background black and white",
)
RECOLOURS = ("red", "deep blue", "green", "pale yellow", "purple", "orange", "navy", "pink")
#: a pixel changed by more than this (grey levels, any channel) counts as changed
CHANGED = 3


@dataclass(frozen=True)
class RegionTruth:
    """Where a region task's result must change and where it must not."""

    change: np.ndarray  # bool
    keep: np.ndarray  # bool
    #: the share of `change` that must change (a graduated filter fades out: its top half)
    enough: float = 0.85
    #: where the asked change cannot show (a blur where the photo is smooth already, black
    #: and white where it is grey already): counted as reached
    shown_already: np.ndarray | None = None
    #: the bands a few pixels either side of the region's edge, past what is left to
    #: its softness, where what should change must (`edge_change`) and what should stay
    #: must stay (`edge_keep`): a sliver of old sky along a ridge is a small share of a
    #: sky but a visible seam
    edge_change: np.ndarray | None = None
    edge_keep: np.ndarray | None = None


#: how much of the band along the edge a right result leaves unchanged (or changes, on
#: the side that stays) at most
EDGE_MISSED = 0.05


def edge_bands(region: np.ndarray, soft: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The region's pixels, and the others, from `soft` pixels off its edge to a few
    more (0.3 % of the frame's shorter side, 4 at least)."""
    width = soft + max(4, round(0.003 * min(region.shape)))
    inside = region & dilate(~region, width) & ~dilate(~region, soft)
    outside = ~region & dilate(region, width) & ~dilate(region, soft)
    return inside, outside


def horizon_line(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A ridge's height in each column: a level between 0.3 and 0.6 of the frame, a few
    slow waves and a little roughness."""
    xs = np.arange(w) / w
    line = np.full(w, rng.uniform(0.3, 0.6) * h)
    for k in range(1, 6):
        line += h * rng.uniform(0, 0.06 / k) * np.sin(2 * np.pi * (k * xs + rng.uniform()))
    rough = cv2.GaussianBlur(rng.normal(0, 1, (1, w)).astype(np.float32), (0, 0), max(1, w / 400))
    return line + rough[0] / (rough[0].std() + 1e-6) * h * 0.004


def sky_over(
    rng: np.random.Generator, ground: np.ndarray, sky: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A sky (RGB) scaled to cover the frame above a ridge cut into `ground` (RGB, a photo
    without sky of its own): the picture, and the sky's coverage (float 0..1, the ridge
    anti-aliased)."""
    h, w = ground.shape[:2]
    line = horizon_line(rng, w, h)
    top = int(line.max()) + 8
    sh, sw = sky.shape[:2]
    scale = max(w / sw, top / sh)
    size = (int(np.ceil(sw * scale)), int(np.ceil(sh * scale)))
    grown = cv2.resize(sky, size, interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)
    left = (grown.shape[1] - w) // 2
    band = grown[grown.shape[0] - top :, left : left + w].astype(np.float32)
    share = np.clip(line[None, :] - np.arange(h)[:, None] + 0.5, 0.0, 1.0)
    picture = ground.astype(np.float32).copy()
    picture[:top] = band * share[:top, :, None] + picture[:top] * (1 - share[:top, :, None])
    return np.clip(np.rint(picture), 0, 255).astype(np.uint8), share.astype(np.float32)


def sky_behind(skyline: np.ndarray, sky: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A sky (RGB) scaled to the frame of a horizon whose sky was cut out (RGBA, alpha 0
    where the sky was) and put behind it: the picture and the sky's coverage (float)."""
    h, w = skyline.shape[:2]
    sh, sw = sky.shape[:2]
    scale = max(w / sw, h / sh)
    size = (int(np.ceil(sw * scale)), int(np.ceil(sh * scale)))
    grown = cv2.resize(sky, size, interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)
    left = (grown.shape[1] - w) // 2
    behind = grown[:h, left : left + w].astype(np.float32)
    ground = skyline[..., 3:4].astype(np.float32) / 255.0
    picture = skyline[..., :3].astype(np.float32) * ground + behind * (1.0 - ground)
    return np.clip(np.rint(picture), 0, 255).astype(np.uint8), 1.0 - ground[..., 0]


#: how much of a sky put behind a real skyline a found sky must hold, and how much of the
#: ground at most, to be right (the sky between a tree's twigs may stay out)
SKY_HELD, GROUND_TAKEN = 0.95, 0.02


def found_sky_right(found: np.ndarray, coverage: np.ndarray) -> bool:
    """Whether a found sky is right by the truth of a sky put behind a skyline."""
    sky, ground = coverage > 0.5, coverage < 0.5
    held = float((found & sky).sum()) / max(1.0, float(sky.sum()))
    taken = float((found & ground).sum()) / max(1.0, float(ground.sum()))
    return held >= SKY_HELD and taken <= GROUND_TAKEN


def pasted(
    rng: np.random.Generator, photo: np.ndarray, thing: Cutout, share: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """A thing put on a photo at a random place, its long side `share` (a range) of the
    photo's shorter side, its edge softened by a pixel: the picture and its alpha there."""
    h, w = photo.shape[:2]
    side = rng.uniform(*share) * min(h, w)
    scale = side / max(thing.alpha.shape)
    size = (
        max(8, round(thing.alpha.shape[1] * scale)),
        max(8, round(thing.alpha.shape[0] * scale)),
    )
    colour = cv2.resize(thing.rgb, size, interpolation=cv2.INTER_CUBIC).astype(np.float32)
    alpha = cv2.resize(thing.alpha, size, interpolation=cv2.INTER_LINEAR)
    alpha = np.clip(cv2.GaussianBlur(alpha, (0, 0), 1.0), 0.0, 1.0)
    x = int(rng.integers(0, max(1, w - size[0])))
    y = int(rng.integers(0, max(1, h - size[1])))
    out = photo.astype(np.float32).copy()
    spot = out[y : y + size[1], x : x + size[0]]
    a = alpha[: spot.shape[0], : spot.shape[1], None]
    spot[:] = colour[: spot.shape[0], : spot.shape[1]] * a + spot * (1 - a)
    full = np.zeros((h, w), np.float32)
    full[y : y + spot.shape[0], x : x + spot.shape[1]] = a[..., 0]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8), full


def sky_truth(coverage: np.ndarray, asked: str) -> RegionTruth:
    """Where a sky edit must change the picture and where not: the sky and the ground
    away from the ridge (three pixels either side are left to the edge's softness)."""
    sky, ground = erode(coverage > 0.5, 3), erode(coverage <= 0.5, 3)
    sky_edge, ground_edge = edge_bands(coverage > 0.5)
    if asked == "kept":  # (a dark ground may show a look little at its edge)
        return RegionTruth(change=ground, keep=sky, enough=0.8, edge_keep=sky_edge)
    if asked == "graduated":  # whole at the top, fading across the sky: its upper half
        rows = np.nonzero(sky.any(axis=1))[0]
        upper = sky.copy()
        upper[int(np.median(rows)) :] = False
        return RegionTruth(change=upper, keep=ground, edge_keep=ground_edge)
    return RegionTruth(change=sky, keep=ground, edge_change=sky_edge, edge_keep=ground_edge)


def background_truth(alpha: np.ndarray, picture: np.ndarray, asked: str) -> RegionTruth:
    """A background edit: all but the thing changes, the thing stays (its soft edge
    and a few pixels around it left to the region's edge); where the photo cannot show
    the asked change (smooth already for a blur, grey already for black and white),
    nothing need change."""
    side = float(np.sqrt((alpha > 0.5).sum()))
    margin = max(3, round(0.03 * side))
    already = None
    if "blur" in asked:
        grey = cv2.cvtColor(picture, cv2.COLOR_RGB2GRAY).astype(np.float32)
        detail = cv2.GaussianBlur(np.abs(cv2.Laplacian(grey, cv2.CV_32F)), (0, 0), 2.0)
        already = detail < 1.5
    elif "black and white" in asked:
        spread = picture.astype(np.int16).max(axis=2) - picture.astype(np.int16).min(axis=2)
        already = spread <= 2 * CHANGED
    return RegionTruth(
        change=erode(alpha < 0.02, margin),
        keep=erode(alpha > 0.98, 2),
        enough=0.8,
        shown_already=already,
    )


def score_region(truth: RegionTruth, before: np.ndarray, after: np.ndarray) -> tuple[float, str]:
    """1 when enough of where it should change changed and (almost) nothing where it
    should not; 0 when little changed or much of what should stay changed; else 1/2."""
    moved = np.abs(after[..., :3].astype(np.int16) - before[..., :3].astype(np.int16)).max(axis=2)
    changed = moved > CHANGED
    counted = changed if truth.shown_already is None else changed | truth.shown_already
    reached = float(counted[truth.change].mean()) if truth.change.any() else 0.0
    spilled = float(changed[truth.keep].mean()) if truth.keep.any() else 0.0
    reason = f"{reached:.0%} of where it should changed, {spilled:.1%} of what should stay"
    missed = []
    if truth.edge_change is not None and truth.edge_change.any():
        missed.append(1.0 - float(counted[truth.edge_change].mean()))
    if truth.edge_keep is not None and truth.edge_keep.any():
        missed.append(float(changed[truth.edge_keep].mean()))
    seam = max(missed, default=0.0)
    if seam > EDGE_MISSED:
        reason += f"; {seam:.0%} of the band along the edge wrong"
    good = reached >= truth.enough and spilled <= 0.02 and seam <= EDGE_MISSED
    poor = reached < 0.5 * truth.enough or spilled > 0.1
    return (1.0 if good else 0.0 if poor else 0.5), reason


def ground_recoloured(
    alpha: np.ndarray, mask: np.ndarray, before: np.ndarray, after: np.ndarray
) -> float:
    """The share of the ground a loose mask took in (inside the mask, none of the thing)
    that took a new colour."""
    ground = mask & (alpha < 0.02)
    if not ground.any():
        return 0.0
    moved = np.abs(after[..., :3].astype(np.int16) - before[..., :3].astype(np.int16)).max(axis=2)
    return float((moved[ground] > 20).mean())


def loose_mask(alpha: np.ndarray, grow: int = 2) -> np.ndarray:
    """The mask a photographer draws a little loose: the thing, grown by `grow` px."""
    return dilate(alpha > 0.05, grow)


# --- the found-region checks' labelled cases (bench checks) -------------------------------


def sky_regions(
    rng: np.random.Generator, coverage: np.ndarray
) -> list[tuple[str, bool, np.ndarray]]:
    """A sky's truth and regions a finder could return for it, labelled: the truth and
    the truth a pixel off are right; a sky stopped at a row, a band of old sky left along
    the ridge, the ridge taken in, a sky cut to its bounds' rows, half its width missing
    are wrong."""
    sky = coverage > 0.5
    h, w = sky.shape
    rows = np.nonzero(sky.any(axis=1))[0]
    lowest = int(rows.max())
    band = max(4, round(0.03 * h))
    stopped = sky.copy()
    stopped[int(rng.uniform(0.35, 0.65) * lowest) :] = False
    shy = sky & ~dilate(~sky, band)  # a band of old sky along the ridge
    over = dilate(sky, band)  # the ridge and some ground taken in
    block = np.zeros_like(sky)
    block[: int(np.percentile(rows, 10))] = True  # a row-cut block above the ridge
    half = sky.copy()
    cut = int(rng.uniform(0.3, 0.7) * w)
    half[:, cut:] = False if rng.random() < 0.5 else half[:, cut:]
    if half.sum() == sky.sum():
        half[:, :cut] = False
    return [
        ("the sky", True, sky),
        ("the sky a pixel short", True, erode(sky, 1)),
        ("the sky a pixel over", True, dilate(sky, 1)),
        ("stopped at a row", False, stopped),
        ("a band of old sky along the ridge", False, shy),
        ("the ridge taken in", False, over),
        ("a block of rows", False, block),
        ("half of it", False, half),
    ]


def background_regions(
    rng: np.random.Generator, alpha: np.ndarray
) -> list[tuple[str, bool, np.ndarray]]:
    """A background's truth (all but the thing put in) and regions a finder could return,
    labelled: the truth and the truth a pixel off are right; a background that leaves out
    another patch of the same size instead, one that leaves out scattered patches, one
    that takes half the thing in, and one that leaves out a large stretch around it are
    wrong."""
    thing = alpha > 0.5
    h, w = thing.shape
    ys, xs = np.nonzero(thing)
    bh, bw = int(ys.max() - ys.min()), int(xs.max() - xs.min())
    elsewhere = np.zeros_like(thing)
    cy = int(rng.integers(bh // 2, max(bh // 2 + 1, h - bh // 2)))
    cx = (int(xs.mean()) + w // 2) % w
    cv2.ellipse(
        elsewhere.view(np.uint8), (cx, cy), (max(4, bw // 2), max(4, bh // 2)), 0, 0, 360, 1, -1
    )
    elsewhere &= ~dilate(thing, 8)
    scattered = np.zeros_like(thing)
    for _ in range(5):
        y, x = int(rng.integers(0, h - h // 8)), int(rng.integers(0, w - w // 8))
        scattered[y : y + h // 10, x : x + w // 10] = True
    halved = thing.copy()
    halved[: int(ys.min() + bh / 2)] = False
    wide = dilate(thing, max(h, w) // 5)
    return [
        ("all but the thing", True, ~thing),
        ("all but the thing, a pixel off", True, ~dilate(thing, 1)),
        ("another patch left out instead", False, ~elsewhere),
        ("scattered patches left out", False, ~scattered),
        ("half the thing in the background", False, ~halved),
        ("a wide stretch around it left out", False, ~wide),
    ]
