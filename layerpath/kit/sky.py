"""Where the sky is, offline (no model): its border found column by column where the
picture's gradients best split the sky's colours from the ground's (Shen and Wang's
sky border, "Sky region detection in a single image for autonomous ground robot
navigation", 2013), grown across the soft edges of clouds and the columns a wire or a
blade stopped short, and settled by GrabCut on the sky's and the ground's colours.

The border search picks, among gradient thresholds, the one whose sky (each column's
pixels above its first gradient past the threshold) and ground have the tightest
colours: a hazy blue mountain under a pale sky, or a cloud's edge, is not where the sky
ends; a ridge against it is. What the search took is then grown into the neighbouring
sky-coloured, smooth pixels no edge as strong as the border separates (clouds, the gap
a pole left) and cut by GrabCut, whose colour models follow the border's blades and
branches. A photo without sky (a forest, a ceiling's lamps, a bokeh of flowers) may
still yield a region: `sky_doubts` says how far the found one is to be trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from layerpath.kit.imaging import (
    guided_mask,
    mean_and_reach_near,
    mean_near,
    on_picture_edges,
    rgb,
    rgb_contiguous,
    small_copy,
)

#: the long side the sky is looked for at
WORK_SIDE = 512
#: gradient thresholds the border search tries
THRESHOLDS = 48
#: Shen and Wang's weight of the sky's colour spread against the ground's
SKY_WEIGHT = 2.0
#: the least share of the picture a found sky's seed must hold
LEAST_SEED = 0.005
#: fine detail (texture(), at WORK_SIDE, averaged over 9 pixels) past which a patch is
#: ground, not sky: a cloud's soft puffs stay under it (0.009-0.012 on a tuning photo's
#: cumulus; lower, the rim of detail along a ridge or a cloud's edge is cut off the
#: sky), a crag's does not (0.02 and more; a pale rock face's 0.014 is not caught)
DETAILED = 0.02


def _work_copy(picture: np.ndarray) -> np.ndarray:
    h, w = picture.shape[:2]
    scale = min(1.0, WORK_SIDE / max(h, w))
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    return cv2.resize(picture, size, interpolation=cv2.INTER_AREA) if scale < 1 else picture


def gradient(picture: np.ndarray) -> np.ndarray:
    """The grey picture's gradient magnitude, softened by a pixel (0..255 grey levels)."""
    grey = cv2.cvtColor(np.ascontiguousarray(picture), cv2.COLOR_RGB2GRAY).astype(np.float32)
    grey = cv2.GaussianBlur(grey, (0, 0), 1.0).astype(np.float32)
    return np.hypot(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))


def texture(picture: np.ndarray) -> np.ndarray:
    """Fine detail per pixel (the softened grey picture's Laplacian, averaged): a sky's
    clouds have little, leaves and rocks much."""
    soft = cv2.GaussianBlur(picture.astype(np.float32) / 255.0, (0, 0), 1.2)
    grey = soft @ np.array([0.299, 0.587, 0.114], np.float32)
    return cv2.GaussianBlur(np.abs(cv2.Laplacian(grey, cv2.CV_32F)), (0, 0), 3)


#: the most red (CIELAB a*) a dusk's violet sky has (a purple thing has 40 and more)
VIOLET = 30.0


#: the greenest (CIELAB a*) a sunset's yellow is (a lit meadow's grass has -30 and less)
SUNSET_GREEN = -12.0


def sky_coloured(picture: np.ndarray) -> np.ndarray:
    """Pixels a sky could have (CIELAB): blue (a dusk's deep blue too), near grey and
    light (overcast, clouds), or light and warm in the upper part of the frame
    (sunrise, sunset)."""
    lab = cv2.cvtColor(picture.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    lightness, a, b = lab[..., 0], lab[..., 1], lab[..., 2]
    upper = np.arange(picture.shape[0])[:, None] < 0.6 * picture.shape[0]
    blue = ((b < -4) & (lightness > 20) | (b < -10) & (lightness > 5)) & (a < 15)
    # (a clear dusk's violet, to the lavender above its horizon: more red than a blue
    # sky's, never as much as a purple thing's)
    violet = (b < -10) & (a < VIOLET) & (a < 5 - b) & (lightness > 20)
    neutral = (np.hypot(a, b) < 14) & (lightness > 50)
    warm = (lightness > 55) & (b > 5) & (a > SUNSET_GREEN) & upper
    return blue | violet | neutral | warm


def border(picture: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, float] | None:
    """Each column's sky border (the first row whose gradient passes the threshold) for
    the threshold whose sky and ground colours spread least (Shen and Wang's energy:
    1 / (g|S_s| + |S_g| + g l_s + l_g), S the colours' covariances, l their largest
    eigenvalues), and that threshold; None when no threshold leaves both."""
    h, w = grad.shape
    step = max(1, int(np.sqrt(h * w / 40_000)))
    colours = picture[::step, ::step].reshape(-1, 3).astype(np.float64)
    rows = np.arange(h)[::step, None]
    best: tuple[float, np.ndarray, float] | None = None
    low, high = np.percentile(grad, 50), np.percentile(grad, 99.5)
    for threshold in np.linspace(low, high, THRESHOLDS):
        above = grad > threshold
        edge = np.where(above.any(axis=0), above.argmax(axis=0), h)
        sky = (rows < edge[None, ::step]).reshape(-1)
        if sky.sum() < 50 or (~sky).sum() < 50:
            continue
        spread_sky, spread_ground = np.cov(colours[sky].T), np.cov(colours[~sky].T)
        energy = 1.0 / (
            SKY_WEIGHT * abs(np.linalg.det(spread_sky))
            + abs(np.linalg.det(spread_ground))
            + SKY_WEIGHT * np.linalg.eigvalsh(spread_sky)[-1]
            + np.linalg.eigvalsh(spread_ground)[-1]
            + 1e-6
        )
        if best is None or energy > best[0]:
            best = (energy, edge, float(threshold))
    return None if best is None else (best[1], best[2])


def find_sky(small: np.ndarray) -> np.ndarray:
    """The sky (bool, the size of `small`, an RGB copy of the photo); False everywhere
    when there is none."""
    h, w = small.shape[:2]
    work = _work_copy(small)
    found = _sky(work)
    sky = cv2.resize(found.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST) > 0
    # found on the work copy, its outline is a work pixel or two off the picture's edge
    # (a pale sliver of sky left in each valley of a ridge): moved onto it
    # (taking in only what is of a sky's colour: not a dark tree's tips)
    reach = int(np.ceil(max(h, w) / max(work.shape[:2]))) + 1
    settled = on_picture_edges(small, sky, reach)
    return settled & (sky | sky_coloured(small))


def _sky(work: np.ndarray) -> np.ndarray:
    h, w = work.shape[:2]
    none = np.zeros((h, w), bool)
    grad = gradient(work)
    found = border(work, grad)
    if found is None:
        return none
    edge, threshold = found
    above = np.arange(h)[:, None] < edge[None, :]
    detail = texture(work)
    colour = sky_coloured(work)
    kernel = np.ones((5, 5), np.uint8)
    seed = cv2.erode((above & colour).astype(np.uint8), kernel) > 0
    if seed.sum() < LEAST_SEED * h * w:
        return none
    plain = float(np.median(detail[above & colour]))
    smooth = detail < max(0.012, 3 * plain)
    # grown across what no edge as strong as the border's separates: clouds, the gap a
    # blade or a wire stopped a column short
    candidate = (colour & smooth & (grad < threshold)).astype(np.uint8)
    _, parts = cv2.connectedComponents(candidate, connectivity=4)
    reached = np.unique(parts[seed & (candidate > 0)])
    grown = np.isin(parts, reached[reached > 0]) | (above & colour)
    # settled by GrabCut: sure inside the grown sky's smooth core, sure ground far from
    # it where it is detailed or of no sky's colour, the rest decided by the colours
    labels = np.full((h, w), cv2.GC_PR_BGD, np.uint8)
    labels[grown] = cv2.GC_PR_FGD
    labels[(cv2.erode(grown.astype(np.uint8), kernel) > 0) & smooth] = cv2.GC_FGD
    far = cv2.dilate(grown.astype(np.uint8), np.ones((15, 15), np.uint8)) == 0
    labels[far & ((detail > max(0.03, 6 * plain)) | ~colour)] = cv2.GC_BGD
    background, foreground = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)  # (the same photo, the same sky)
    bgr = np.ascontiguousarray(work[..., ::-1])
    cv2.grabCut(bgr, labels, (0, 0, 0, 0), background, foreground, 4, cv2.GC_INIT_WITH_MASK)
    sky = np.isin(labels, (cv2.GC_FGD, cv2.GC_PR_FGD))
    # what GrabCut's colours took but is detailed around (a crag, snow fields between
    # crags) is ground: a sky's clouds are smooth
    sky &= cv2.blur(detail, (5, 5)) < max(DETAILED, 4 * plain)
    _, parts, stats, _ = cv2.connectedComponentsWithStats(sky.astype(np.uint8))
    keep = [
        k
        for k in np.unique(parts[seed])
        if k > 0 and stats[k, cv2.CC_STAT_AREA] >= LEAST_SEED * parts.size
    ]
    sky = regrown(work, with_small_holes_filled(np.isin(parts, keep), SMALL_HOLE * h * w))
    sky |= clouds_in(sky, colour & smooth)
    sky &= ~below_horizon(work, sky)
    return sky | sky_elsewhere(work, sky, colour & smooth)


#: how far (CIELAB) from the sky's colour there a pixel in a found sky is something
#: else standing in it (a cloud stays within it)
FOREIGN = 25.0
#: how near (CIELAB) the sky's colour there a patch apart from the found sky must be to
#: be sky too (seen between leaves, past a wire)
SKY_NEAR = 6.0


def sky_model(lab: np.ndarray, sky: np.ndarray) -> np.ndarray:
    """The sky's colour everywhere (CIELAB), as a smooth surface over the rows and
    columns fitted to the sky's own pixels (a sky darkens or pales towards the horizon
    smoothly): least squares on a sample, fitted again without the pixels it misses
    by more than FOREIGN (what stands in the sky); below the sky's lowest row it stays
    as it is there."""
    h, w = sky.shape
    ys, xs = np.nonzero(sky)
    step = max(1, len(ys) // 20_000)
    ys, xs = ys[::step].astype(np.float64), xs[::step].astype(np.float64)
    values = lab[ys.astype(int), xs.astype(int)]

    def terms(y: np.ndarray, x: np.ndarray) -> np.ndarray:
        y, x = y / h, x / w
        return np.stack([np.ones_like(y), y, x, y * y, x * y, x * x], axis=-1)

    kept = np.ones(len(ys), bool)
    for _ in range(2):
        fit, *_ = np.linalg.lstsq(terms(ys[kept], xs[kept]), values[kept], rcond=None)
        kept = np.linalg.norm(terms(ys, xs) @ fit - values, axis=1) < FOREIGN
        if kept.sum() < 16:
            break
    grid_y, grid_x = np.mgrid[:h, :w].astype(np.float64)
    return (terms(np.minimum(grid_y, float(ys.max())), grid_x) @ fit).astype(np.float32)


def sky_elsewhere(work: np.ndarray, sky: np.ndarray, plain: np.ndarray) -> np.ndarray:
    """Patches of sky apart from the found one (between leaves, on the far side of a
    wire or a cable): smooth pixels of a sky's colour, within SKY_NEAR of the found
    sky's colour where they are, no lower than the found sky reaches."""
    h, w = sky.shape
    if sky.sum() < 64:
        return np.zeros((h, w), bool)
    lab = cv2.cvtColor(work.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    near = np.linalg.norm(lab - sky_model(lab, sky), axis=2) < SKY_NEAR
    lowest = int(np.nonzero(sky.any(axis=1))[0].max())
    patches = near & plain & ~sky
    patches[lowest + 1 :] = False
    count, parts, stats, _ = cv2.connectedComponentsWithStats(patches.astype(np.uint8))
    big = [k for k in range(1, count) if stats[k, cv2.CC_STAT_AREA] >= 0.0005 * h * w]
    return np.isin(parts, big)


#: a change of colour (CIELAB, across four rows) sharp enough to be a horizon
HORIZON_STEP = 10.0
#: the share of the frame's width a horizon runs across, inside the sky
HORIZON_SPAN = 0.8


def below_horizon(work: np.ndarray, sky: np.ndarray) -> np.ndarray:
    """Where water or haze of the sky's colour carries on below a horizon: the rows
    under a straight line of sharp colour change across the frame inside the sky (a
    cloud's edge is short and ragged, a mountain breaks the sky's span), when what lies
    below it is of another colour than what lies above. False everywhere when there is
    no such line."""
    h, w = sky.shape
    lab = cv2.cvtColor(cv2.GaussianBlur(work, (0, 0), 1.0).astype(np.float32) / 255.0,
                       cv2.COLOR_RGB2LAB)  # fmt: skip
    step = np.zeros((h, w), np.float32)
    step[2:-2] = np.linalg.norm(lab[4:] - lab[:-4], axis=2)
    across = (step > HORIZON_STEP) & sky
    # a straight line one pixel either way: the share of the frame's width it crosses
    span = cv2.dilate(across.astype(np.uint8), np.ones((3, 1), np.uint8)).sum(axis=1) / w
    span[sky.sum(axis=1) < HORIZON_SPAN * w] = 0.0
    # only rows with sky enough on either side: the found sky's own lower edge (a pier,
    # a beach) is no horizon inside it, and must not hide one higher up
    total = max(1.0, float(sky.sum()))
    above_share = np.concatenate([[0.0], np.cumsum(sky.sum(axis=1))[:-1]]) / total
    span[(above_share < 0.03) | (1.0 - above_share < 0.03)] = 0.0
    span[:4] = span[h - 4 :] = 0.0
    below = np.zeros((h, w), bool)
    row = int(np.argmax(span))
    if span[row] < 0.6:
        return below
    above_part, below_part = sky[: row - 2], sky[row + 3 :]
    if below_part.sum() < 0.03 * sky.sum() or above_part.sum() < 0.03 * sky.sum():
        return below
    upper = lab[: row - 2][above_part].mean(axis=0)
    lower = lab[row + 3 :][below_part].mean(axis=0)
    if float(np.linalg.norm(upper - lower)) < HORIZON_STEP:
        return below
    below[row + 1 :] = True
    return below


#: the largest share of the picture a hole in the sky may have and still be of it (a
#: bird, a star, a speck of cloud GrabCut left out)
SMALL_HOLE = 0.002


#: how far (pixels at WORK_SIDE) the sky is grown back to the edge of what stands in it
REGROW = 6
#: how near (CIELAB) the sky's colour beside it a pixel must be to be grown back
REGROW_NEAR = 6.0


def regrown(work: np.ndarray, sky: np.ndarray) -> np.ndarray:
    """The sky grown back, a pixel at a time for up to REGROW pixels, over the pixels
    beside it of the sky's own colour there (within REGROW_NEAR): the measures of
    detail the finder reads spread a few pixels past a pole or a blade, and the sky's
    edge belongs on theirs."""
    if sky.sum() < 64:
        return sky
    lab = cv2.cvtColor(work.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    weight = cv2.GaussianBlur(sky.astype(np.float32), (0, 0), 3.0)
    beside = (
        cv2.GaussianBlur(lab * sky[..., None], (0, 0), 3.0) / np.maximum(weight, 1e-4)[..., None]
    )
    alike = np.linalg.norm(lab - beside, axis=2) < REGROW_NEAR
    grown = sky.copy()
    kernel = np.ones((3, 3), np.uint8)
    for _ in range(REGROW):
        edge = (cv2.dilate(grown.astype(np.uint8), kernel) > 0) & ~grown & alike
        if not edge.any():
            break
        grown |= edge
    return grown


def clouds_in(sky: np.ndarray, plain: np.ndarray) -> np.ndarray:
    """Clouds the found sky left out (white and grey, which GrabCut may give to the
    ground against a blue sky): smooth pieces of a sky's colour outside it whose outline
    runs mostly (CLOUD_BORDER of it) along the sky, low clouds resting on a ridge too;
    a snow field or a pale wall below a ridge is bordered by the ground instead."""
    pieces = (~sky & plain).astype(np.uint8)
    count, parts, stats, _ = cv2.connectedComponentsWithStats(pieces, connectivity=4)
    if count <= 1:
        return np.zeros(sky.shape, bool)
    kernel = np.ones((3, 3), np.uint8)
    around = (cv2.dilate(pieces, kernel) > 0) & ~(pieces > 0)  # each piece's outline
    owner = cv2.dilate(parts.astype(np.float32), kernel).astype(np.int32)  # (whose)
    outline = np.bincount(owner[around], minlength=count).astype(np.float64)
    on_sky = np.bincount(owner[around & sky], minlength=count)
    share = on_sky / np.maximum(outline, 1.0)
    clouds = [k for k in range(1, count) if share[k] >= CLOUD_BORDER]
    return np.isin(parts, clouds)


#: the share of a left-out piece's outline that must run along the sky for it to be a cloud
CLOUD_BORDER = 0.5


def with_small_holes_filled(region: np.ndarray, largest: float) -> np.ndarray:
    """The region with the holes it encloses of at most `largest` pixels filled."""
    holes = (~region).astype(np.uint8)
    count, parts, stats, _ = cv2.connectedComponentsWithStats(holes, connectivity=4)
    edge = set(np.unique(np.concatenate([parts[0], parts[-1], parts[:, 0], parts[:, -1]])))
    small = [k for k in range(1, count) if k not in edge and stats[k, cv2.CC_STAT_AREA] <= largest]
    return region | np.isin(parts, small)


# --- how sure a found sky is (engine/judge/checks/region.py makes it a verdict) -------------

CHECK_SIDE = 512
#: pixels (at CHECK_SIDE) on each side of an outline whose colours are compared
SIDE = 4
#: the colour difference (CIELAB) across an outline that makes it a real edge
CHANGE = 8.0
#: the share of an outline that must lie on a real edge
ON_EDGES = 0.65
#: the share of a sky's outline that must lie on a gradient past STRONG
SKY_ON_GRADIENT = 0.6
#: a gradient (grey levels per pixel, at CHECK_SIDE) past which a sky's outline is an edge
STRONG = 8.0
#: the share of the band outside a sky that may look like that sky (smooth, its colour)
SKY_LEFT = 0.2
#: the sky further away that may be left out, as a share of the found sky
SKY_ELSEWHERE = 0.05
#: fine detail (kit/sky.py's texture) under which a piece of sky is smooth
SMOOTH = 0.012
#: how far (a share of the long side) the found sky's colours are carried to judge a
#: patch apart from it as the same sky
CARRIED = 0.1
#: the share of the frame's top a sky reaches across, at least, before it is doubted, and
#: the share short of it that is the tolerance: a sky lies over the scene and meets the
#: top of the frame across much of it (the finder's right skies on the tuning photos
#: reach 0.6 and more, a sky seen through leaves the least), where a pale wall in a
#: corner or a flower's petals out of focus do not (0.1-0.16). (A scan with a plain
#: border above its picture has no sky in its top rows: it is refused, asking for a
#: selection)
REACHES_TOP = (0.4, 0.2)


def work_copies(picture: np.ndarray, region: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Copies of a picture (RGB or RGBA, 8 or 16 bits) and a region of it at CHECK_SIDE
    on the long side, where an outline is a few pixels wide at any photo size: the
    picture's as RGB, 8 bits."""
    h, w = region.shape[:2]
    scale = min(1.0, CHECK_SIDE / max(h, w))
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    if picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 4:
        # scaled whole, its alpha dropped after: each channel is scaled alone, so this is
        # the RGB a copy of its RGB would give, without that copy (60 MB at 20 MP)
        whole = cv2.resize(np.ascontiguousarray(picture), size, interpolation=cv2.INTER_AREA)
        small = rgb_contiguous(whole)
    else:
        rgb = np.ascontiguousarray(picture[..., :3])
        if rgb.dtype == np.uint16:
            rgb = (rgb >> 8).astype(np.uint8)
        small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    inside = cv2.resize(region.astype(np.float32), size, interpolation=cv2.INTER_AREA) > 0.5
    return small, inside


def outline(region: np.ndarray) -> np.ndarray:
    """The region's own edge pixels inside the frame (the frame's edge is no outline)."""
    kernel = np.ones((3, 3), np.uint8)
    edge = region & ~(cv2.erode(region.astype(np.uint8), kernel) > 0)
    edge[0, :] = edge[-1, :] = False
    edge[:, 0] = edge[:, -1] = False
    return edge


def on_edges(picture: np.ndarray, region: np.ndarray) -> float:
    """The share of the region's outline where the colours just inside differ from those
    just outside by CHANGE or more (1 when it has no outline inside the frame)."""
    edge = outline(region)
    if not edge.any():
        return 1.0
    lab = cv2.cvtColor(picture.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    inside = mean_near(lab, region, SIDE)
    outside = mean_near(lab, ~region, SIDE)
    return float((np.linalg.norm(inside - outside, axis=2)[edge] > CHANGE).mean())


@dataclass(frozen=True)
class Look:
    """What the found-sky measures read of a picture (a work copy) and its found sky,
    worked out once for all of them: the CIELAB picture, its gradient and the gradient
    past which a pixel is on an edge (strong_gradient), fine detail (texture), which
    pixels are of a sky's colour (sky_coloured), and the sky's colour fitted over the
    frame (sky_model)."""

    lab: np.ndarray
    grad: np.ndarray
    strong: float
    detail: np.ndarray
    coloured: np.ndarray
    model: np.ndarray


def look_at(picture: np.ndarray, sky: np.ndarray) -> Look:
    """The Look of a picture (RGB, 8 bits) and the sky found in it."""
    lab = cv2.cvtColor(picture.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    grad = gradient(picture)
    return Look(
        lab, grad, strong_gradient(grad, sky), texture(picture), sky_coloured(picture),
        sky_model(lab, sky),
    )  # fmt: skip


def sky_measures(
    picture: np.ndarray, sky: np.ndarray, look: Look | None = None
) -> tuple[float, float, float]:
    """(the share of the sky's outline on a gradient past STRONG, or past six times the
    sky's own; the share of a band just outside it that looks like the sky nearby:
    within 6 of its colour, CIELAB, and smooth; the sky left out further away, as a
    share of the found sky: smooth patches within 10 of the found sky's colour there
    (fitted over the frame, for a sky's colour, or carried across from the sky nearby),
    no lower than it reaches, and clouds it left out)."""
    look = look or look_at(picture, sky)
    lab, grad, strong = look.lab, look.grad, look.strong
    kernel = np.ones((3, 3), np.uint8)
    edge = outline(sky)
    peak = cv2.dilate(grad, np.ones((5, 5), np.uint8))
    gradient_share = float((peak[edge] > strong).mean()) if edge.any() else 1.0
    grown = cv2.dilate(sky.astype(np.uint8), kernel, iterations=6) > 0
    band = grown & ~(cv2.dilate(sky.astype(np.uint8), kernel, iterations=2) > 0)
    near = mean_near(lab, sky, max(2.0, 0.02 * max(sky.shape)))
    smooth = grad < strong
    alike = (np.linalg.norm(lab - near, axis=2) < 6.0) & smooth
    left = float(alike[band].mean()) if band.any() else 0.0
    # of the sky's colours: of a sky's colour and near the smooth surface fitted to the
    # found sky, or near the found sky's own colour carried across to it (a dusk's violet
    # or a sunset's pink, which are no sky's colour to sky_coloured, left out past a cut)
    modelled = (np.linalg.norm(lab - look.model, axis=2) < 10.0) & look.coloured
    sky_colour, reached = mean_and_reach_near(lab, sky, CARRIED * max(sky.shape))
    carried = reached & (np.linalg.norm(lab - sky_colour, axis=2) < 10.0)
    patches = (modelled | carried) & smooth & ~grown
    patches[int(np.nonzero(sky.any(axis=1))[0].max()) + 1 :] = False
    patches = cv2.morphologyEx(patches.astype(np.uint8), cv2.MORPH_OPEN, kernel) > 0
    # and clouds left out: smooth pieces of a sky's colour bordered mostly by the sky
    patches |= clouds_in(sky, look.coloured & (look.detail < SMOOTH))
    return gradient_share, left, float(patches.sum()) / max(1.0, float(sky.sum()))


def strong_gradient(grad: np.ndarray, sky: np.ndarray) -> float:
    """The gradient past which a pixel is on an edge, for a found sky: STRONG, or six
    times the sky's own median gradient (a noisy or textured sky's) where that is more."""
    inner = cv2.erode(sky.astype(np.uint8), np.ones((3, 3), np.uint8), iterations=3) > 0
    return max(STRONG, 6.0 * float(np.median(grad[inner]))) if inner.any() else STRONG


def runs(values: np.ndarray) -> list[tuple[int, int]]:
    """A 1-D array's runs of equal values: (value, length) from its start."""
    if not len(values):
        return []
    starts = np.concatenate([[0], np.nonzero(np.diff(values))[0] + 1])
    lengths = np.diff(np.concatenate([starts, [len(values)]]))
    return [(int(values[a]), int(n)) for a, n in zip(starts, lengths, strict=True)]


#: pixels (at CHECK_SIDE) of a cloud's underside, at least, and of lit sky under it, with
#: edges of at most EDGE_GAP pixels between them, that make a column of sky left out (on
#: the tuning split an edge gap of 4, 6 or 8 refuses no right sky; 8 finds the most
#: wrong ones)
LEAST_UNDERSIDE, LEAST_LIT, EDGE_GAP = 3, 5, 8
#: how much darker (L*) than the found sky's median lit sky under a cloud may be
LIT_DARKER = 10.0
#: the share of the found sky that may be left out under clouds, and the tolerance past
#: it: chosen on the tuning split, where right skies (the finder's by eye, and skies put
#: above its grounds) leave at most 0.012 and wrong 'skies' on photos without one up
#: to 0.32
UNDER_CLOUDS = (0.02, 0.02)

#: what a pixel under a found sky is, to left_under_clouds
_OTHER, _UNDERSIDE, _LIT, _SKY = 0, 1, 2, 3


def left_under_clouds(picture: np.ndarray, sky: np.ndarray, look: Look | None = None) -> np.ndarray:
    """The sky a found one stops short of at a cloud: in each column, under the found
    sky's first stretch from the top, a smooth piece that is no lit sky (a cloud's
    underside, dusky or brown) and, under that past an edge a few pixels wide, smooth
    lit sky (of a sky's colour, about as light as the found sky: a sunset's glow under
    its clouds), all above the lowest row the found sky reaches. A ridge's or a hill's
    silhouette under a right sky has ground under it, not lit sky; a wire or a branch
    across the sky has the found sky under it again (bool, the sky's size: the
    underside and the lit sky left out)."""
    h, w = sky.shape
    left = np.zeros((h, w), bool)
    rows = np.nonzero(sky.any(axis=1))[0]
    if len(rows) == 0:
        return left
    lowest = int(rows.max())
    look = look or look_at(picture, sky)
    smooth = (look.grad < look.strong) & (look.detail < SMOOTH)
    lightness = look.lab[..., 0]
    lit = look.coloured & (lightness >= np.median(lightness[sky]) - LIT_DARKER)
    kind = np.where(sky, _SKY, np.where(~smooth, _OTHER, np.where(lit, _LIT, _UNDERSIDE)))
    for column in np.nonzero(sky.any(axis=0))[0]:
        run = sky[:, column]
        first = int(np.argmax(run))
        end = first + int(np.argmin(run[first:])) if not run[first:].all() else h
        at, under = end, False
        for value, length in runs(kind[end : lowest + 1, column]):
            if value == _OTHER and length <= EDGE_GAP:
                pass
            elif not under and value == _UNDERSIDE and length >= LEAST_UNDERSIDE:
                under = True
            elif under and value == _LIT and length >= LEAST_LIT:
                left[end : at + length, column] = True
                break
            elif not (under and value == _UNDERSIDE):
                break
            at += length
    return left


#: how far (CIELAB) from the sky's colour there a piece of a found sky is something else
PIECE_APART = 12.0
#: how hard a piece's edge against the sky around it must be (its median gradient, in
#: units of strong_gradient) to be a solid thing's (a roof's, a tower's, a dome's): on
#: the tuning split the right skies' pieces (clouds, a sun, the sky through leaves) stay
#: under 5.2, and the pieces of buildings taken in on GCompris' monuments (held out) lie
#: at 7.6-27 where they count
HARD_EDGE = 7.0
#: the least share of the found sky a piece holds to count (a bird, a lamp's top, a
#: weather vane do not): one that counts refuses the sky
PIECE_SHARE = 0.004


def taken_in(picture: np.ndarray, sky: np.ndarray, look: Look | None = None) -> float:
    """The share of a found sky that is pieces of something solid (solid_pieces)."""
    return float(solid_pieces(picture, sky, look).sum()) / max(1.0, float(sky.sum()))


def solid_pieces(picture: np.ndarray, sky: np.ndarray, look: Look | None = None) -> np.ndarray:
    """The pieces of something solid taken into a found sky (a roof, a tower, a dome,
    part of a minaret): pieces of at least PIECE_SHARE of it, unlike the sky's colour
    there (PIECE_APART from sky_model), bordering the ground along a tenth of their
    outline at least, whose edge against the sky around them is hard (HARD_EDGE). A
    cloud, even one resting on a ridge, fades into the sky: its edge is soft."""
    look = look or look_at(picture, sky)
    kernel = np.ones((3, 3), np.uint8)
    apart = sky & (np.linalg.norm(look.lab - look.model, axis=2) > PIECE_APART)
    apart = cv2.morphologyEx(apart.astype(np.uint8), cv2.MORPH_OPEN, kernel) > 0
    count, parts, stats, _ = cv2.connectedComponentsWithStats(apart.astype(np.uint8))
    peak, strong = cv2.dilate(look.grad, kernel), look.strong
    ground = cv2.dilate((~sky).astype(np.uint8), kernel, iterations=2) > 0
    inside = np.zeros(sky.shape, bool)
    inside[2:-2, 2:-2] = True  # (the frame's edge borders nothing)
    solid, total = [], max(1.0, float(sky.sum()))
    for piece in range(1, count):
        if stats[piece, cv2.CC_STAT_AREA] < PIECE_SHARE * total:
            continue
        x, y, w, h = stats[piece, :4]
        box = np.s_[max(0, y - 2) : y + h + 2, max(0, x - 2) : x + w + 2]
        own = parts[box] == piece
        rim = (cv2.dilate(own.astype(np.uint8), kernel) > 0) & ~own & inside[box]
        against_sky = rim & ~ground[box] & ~apart[box]
        if rim.sum() == 0 or (rim & ground[box]).sum() < 0.1 * rim.sum():
            continue
        if against_sky.sum() >= 5 and np.median(peak[box][against_sky]) >= HARD_EDGE * strong:
            solid.append(piece)
    return np.isin(parts, solid)


#: the share of the found sky that may be left out in openings below it, and the
#: tolerance past it: on the tuning split right skies leave at most 0.035 so (the sky
#: through a dragonfly's leaves), a hotel's facade taken for sky with the real sky below
#: it left out 3.7
OPENINGS = (0.1, 0.1)


def through_openings(picture: np.ndarray, sky: np.ndarray, look: Look | None = None) -> float:
    """The share of a found sky left out below it in openings of the ground (openings)."""
    return float(openings(picture, sky, look).sum()) / max(1.0, float(sky.sum()))


def openings(picture: np.ndarray, sky: np.ndarray, look: Look | None = None) -> np.ndarray:
    """The sky a found one leaves out below it in openings of the ground (an arch, a
    window, the gaps of a lattice): smooth patches of a sky's colour within 10 (CIELAB)
    of the found sky's fitted colour, under the lowest row it reaches, enclosed by the
    ground (touching no edge of the frame: water below a horizon runs to the frame's
    sides)."""
    look = look or look_at(picture, sky)
    kernel = np.ones((3, 3), np.uint8)
    like = (np.linalg.norm(look.lab - look.model, axis=2) < 10.0) & look.coloured
    patches = like & (look.grad < look.strong)
    patches &= cv2.dilate(sky.astype(np.uint8), kernel, iterations=6) == 0
    patches[: int(np.nonzero(sky.any(axis=1))[0].max()) + 1] = False
    patches = cv2.morphologyEx(patches.astype(np.uint8), cv2.MORPH_OPEN, kernel) > 0
    _, parts, stats, _ = cv2.connectedComponentsWithStats(patches.astype(np.uint8), connectivity=4)
    h, w = sky.shape
    x, y, width, height = (stats[1:, k] for k in range(4))
    enclosed = (x > 0) & (y > 0) & (x + width < w) & (y + height < h)
    return np.isin(parts, np.nonzero(enclosed)[0] + 1)


#: how far above a found sky's lowest edge (a share of the long side, at CHECK_SIDE) the
#: real horizon may lie when the ground below it was taken in, and how much stronger an
#: edge there must be than any at the found edge to be the horizon
ABOVE_REACH, ABOVE_STRONGER = 0.03, 1.5
#: the share of columns where that is so past which a sky is doubted, and the share more
#: that is the tolerance: chosen on the tuning split, where right skies have at most 0.24
#: (clouds just above a soft dune), a sky grown 3 % of the frame into the ground 0.23 and
#: more, mostly over 0.37
GROUND_TAKEN_IN = (0.25, 0.15)


def ground_taken_in(sky: np.ndarray, look: Look) -> float:
    """The share of the columns in which the sky's lowest edge lies below the horizon:
    a few pixels above it the picture has an edge (past the sky's strong gradient) far
    stronger than any at the edge itself, where a right sky's edge is the strongest
    there. (The ridge and the ground below it taken in: its edge lies on the ground's
    texture, which on_edges takes for an outline.)"""
    h, w = sky.shape
    reach = max(4, round(ABOVE_REACH * max(h, w)))
    lowest = h - 1 - np.argmax(sky[::-1], axis=0)
    columns = np.flatnonzero(sky.any(axis=0) & (lowest >= reach) & (lowest < h - 2))
    if not columns.size:
        return 0.0
    rows = lowest[columns][:, None]
    at_edge = look.grad[rows + np.arange(-2, 3), columns[:, None]].max(axis=1)
    above = look.grad[rows + np.arange(-reach, -2), columns[:, None]].max(axis=1)
    return float(((above > ABOVE_STRONGER * at_edge) & (above > look.strong)).mean())


#: the share of the found sky that may be left out past its outline where that runs
#: through no edge, and the share more that is the tolerance: on the tuning split right
#: skies leave at most 0.021 so (a dragonfly's sky past a soft leaf), a sky cut at a row
#: across a treeline with the sky beside the trees 0.27
PAST_A_CUT = (0.05, 0.05)


def left_past_a_cut(sky: np.ndarray, look: Look) -> float:
    """The sky left out past a cut (a share of the found sky): pieces outside it, smooth
    and within 6 (CIELAB) of the sky's colour fitted there, that meet its outline where
    the outline lies on no edge (the sky carries on across it). Water below a horizon
    meets it along the horizon's edge, a patch between leaves along the leaves'."""
    kernel = np.ones((3, 3), np.uint8)
    alike = (np.linalg.norm(look.lab - look.model, axis=2) < 6.0) & (look.grad < look.strong)
    alike = cv2.morphologyEx((alike & ~sky).astype(np.uint8), cv2.MORPH_OPEN, kernel) > 0
    cut = outline(sky) & (cv2.dilate(look.grad, kernel) < look.strong)
    across = cv2.dilate(cut.astype(np.uint8), kernel, iterations=2) > 0
    _, parts = cv2.connectedComponents(alike.astype(np.uint8))
    met = np.unique(parts[across & alike])
    left = np.isin(parts, met[met > 0])
    return float(left.sum()) / max(1.0, float(sky.sum()))


#: the foot of a found sky (the band of a twentieth of the frame's height above its
#: lowest row in a column) and the band of sky above that (twice as high): where the
#: foot is this much darker (L*) than the sky above it, far land or water lies there. A
#: clear sky is palest at its horizon; a low cloud leaves a darker foot of blue under it
#: in some columns, not in most
FOOT, FOOT_DARKER = 0.05, 8.0
#: the share of the columns judged whose foot is darker so past which a sky is doubted,
#: and the share more that is the tolerance: chosen on the tuning split, where right
#: skies have at most 0.34 (grey cloud low over Route 66, a white cloud over Picos de
#: Europa's peaks with blue sky under it) and skies with the sea or far hills taken in
#: 0.69-0.71 (a mural's top at Faro 0.54)
DARK_FOOT = (0.4, 0.1)


def dark_foot(sky: np.ndarray, look: Look) -> float:
    """The share of the sky's columns in which its lowest part is darker than the sky
    above it (FOOT_DARKER): the sea, a far ridge or a haze of far hills under the real
    horizon, taken in with the sky, which the ground's edge then bounds. Judged are the
    columns where the sky stands high enough above its lowest row and ends on the
    ground, not at the frame's bottom (a dark cloud bank there is no foot)."""
    h, _ = sky.shape
    band = max(3, round(FOOT * h))
    lowest = h - 1 - np.argmax(sky[::-1], axis=0)
    columns = np.flatnonzero(sky.any(axis=0) & (lowest > 3 * band) & (lowest < h - 2))
    if not columns.size:
        return 0.0
    lightness = np.where(sky, look.lab[..., 0], np.nan)

    def median(first: int, last: int) -> np.ndarray:
        rows = lowest[columns][:, None] + np.arange(first, last)[None, :]
        values = lightness[rows, columns[:, None]]
        enough = np.isfinite(values).sum(axis=1) >= (last - first) // 2
        middle = np.full(len(columns), np.nan)
        middle[enough] = np.nanmedian(values[enough], axis=1)
        return middle

    foot, above = median(-band, 0), median(-3 * band, -band)
    judged = np.isfinite(foot) & np.isfinite(above)
    if not judged.any():
        return 0.0
    return float((above[judged] - foot[judged] > FOOT_DARKER).mean())


def top_reached(sky: np.ndarray) -> float:
    """The share of the frame's columns whose top rows (a fiftieth of its height, two at
    least) the sky reaches."""
    return float(sky[: max(2, sky.shape[0] // 50)].any(axis=0).mean())


def edge_doubt(picture: np.ndarray, region: np.ndarray) -> float:
    """The doubt (in units of its tolerance) that a region's outline lies on the
    picture's own edges: how far short of ON_EDGES its share on them falls."""
    return max(0.0, ON_EDGES - on_edges(picture, region)) / 0.15


def sky_doubts(picture: np.ndarray, sky: np.ndarray) -> dict[str, float]:
    """What speaks against a found sky (on work copies: work_copies), each in units of
    its tolerance: its edge off the picture's edges or running through smooth sky, sky
    of its colour left beside it, and elsewhere, sky left out under a cloud's underside
    and past a cut through it, something solid taken in (a roof, a tower, a dome), the
    sky seen through an opening below it left out, the ground below the horizon taken
    in, far land or water under it taken in (a darker foot), and a 'sky' that stays in
    a corner of the frame's top."""
    look = look_at(picture, sky)
    on_gradient, left, elsewhere = sky_measures(picture, sky, look)
    under = float(left_under_clouds(picture, sky, look).sum()) / max(1.0, float(sky.sum()))
    return {
        "its edge does not follow the picture": edge_doubt(picture, sky),
        "the sky's edge runs through smooth sky": max(0.0, SKY_ON_GRADIENT - on_gradient) / 0.15,
        "sky left out along its edge": max(0.0, left - SKY_LEFT) / 0.1,
        "sky left out elsewhere": max(0.0, elsewhere - SKY_ELSEWHERE) / 0.05,
        "sky left out under a cloud": max(0.0, under - UNDER_CLOUDS[0]) / UNDER_CLOUDS[1],
        "sky left out past a cut through it": (
            max(0.0, left_past_a_cut(sky, look) - PAST_A_CUT[0]) / PAST_A_CUT[1]
        ),
        "something solid seems taken into the sky": taken_in(picture, sky, look) / PIECE_SHARE,
        "the ground below the horizon seems taken in": (
            max(0.0, ground_taken_in(sky, look) - GROUND_TAKEN_IN[0]) / GROUND_TAKEN_IN[1]
        ),
        "far land or water seems taken in below the sky": (
            max(0.0, dark_foot(sky, look) - DARK_FOOT[0]) / DARK_FOOT[1]
        ),
        "sky seen through an opening below is left out": (
            max(0.0, through_openings(picture, sky, look) - OPENINGS[0]) / OPENINGS[1]
        ),
        "the sky found does not reach across the top of the photo": (
            max(0.0, REACHES_TOP[0] - top_reached(sky)) / REACHES_TOP[1]
        ),
    }


#: a picture is a sky alone (given for its sky: the reference of a sky replacement) when
#: it is smooth nearly all over and no row holds an edge across most of its width (a
#: horizon, a rooftop, the slats of a blind), its gradients measured against its own
#: brightness (per cent of the softened grey level + 12: a dark evening's ground is as
#: faint in grey levels as a bright sky's clouds, not against its own light). At
#: WORK_SIDE, chosen on the tuning split: the sky bands of its skies and photos (Storm, a
#: sunset, the tops of Bridge, Dune, Picos de Europa, Aitzgorri), each also made darker
#: (x0.5, x0.35, x0.25 in L*) and oranger (a glow), have a 90th percentile of at most 9.5
#: and a largest row edge (each row's 90th percentile) of at most 33; its 26 whole
#: photos, none a sky alone, at those four darknesses, at least 10.5 or 45. (Fine grain
#: counts: a dark sky with heavy noise at that size is refused, never taken wrongly)
ALONE_GRADIENT = 10.5
ALONE_ROW_EDGE = 45.0


def sky_alone(picture: np.ndarray) -> bool:
    """Whether an RGB picture shows nothing but sky (any colour: a dark evening, a
    sunset's glow), so all of it is the sky it is given for."""
    work = _work_copy(picture)
    grey = cv2.cvtColor(np.ascontiguousarray(work), cv2.COLOR_RGB2GRAY).astype(np.float32)
    relative = 100.0 * gradient(work) / (cv2.GaussianBlur(grey, (0, 0), 8.0) + 12.0)
    row_edge = float(np.percentile(relative, 90, axis=1).max())
    return float(np.percentile(relative, 90)) < ALONE_GRADIENT and row_edge < ALONE_ROW_EDGE


def sure_sky(picture: np.ndarray, sky: np.ndarray) -> bool:
    """Whether a found sky is sure enough to act on unasked (a colour match's parts):
    its doubts together (their 4-norm) within their tolerance."""
    small, inside = work_copies(picture, sky)
    if not inside.any() or inside.all():
        return False
    return sum(d**4 for d in sky_doubts(small, inside).values()) ** 0.25 <= 1.0


#: the share of a picture its sky must fill (at least, at most) for a match to pair skies
SKY_SHARE = (0.05, 0.9)


def picture_sky(part: np.ndarray) -> np.ndarray | None:
    """A picture's sky as a soft weight (float32 0..1, its size): the offline finder's,
    snapped to the picture's edges, its edge softened by a few pixels; None when it
    has no sky worth the name or one not sure enough (sure_sky)."""
    eight = rgb(part) if part.dtype == np.uint8 else (rgb(part) // 257).astype(np.uint8)
    small = small_copy(eight, 1024)
    found = find_sky(small)
    if not SKY_SHARE[0] <= float(found.mean()) <= SKY_SHARE[1] or not sure_sky(small, found):
        return None
    sky = guided_mask(found, eight).astype(np.float32)
    return cv2.GaussianBlur(sky, (0, 0), max(1.0, 0.002 * max(sky.shape)))
