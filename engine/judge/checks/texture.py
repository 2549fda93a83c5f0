"""Picture statistics the checks share: texture energy, palettes, seams, streaks and
repeats, each comparing a region with the photo around it."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from layerpath.kit.colours import to_lab
from layerpath.kit.imaging import angular_sectors, dilate, erode, nearest_of, rgb
from layerpath.kit.segments import colour_labels, lines_across, regions


def grey(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(np.ascontiguousarray(rgb(image)), cv2.COLOR_RGB2GRAY).astype(np.float32)


def energy(luma: np.ndarray, sigma: float = 0.0) -> np.ndarray:
    """Gradient magnitude, after a blur of `sigma` (0: the finest scale)."""
    if sigma > 0:
        luma = cv2.GaussianBlur(luma, (0, 0), sigma)
    return cv2.magnitude(cv2.Sobel(luma, cv2.CV_32F, 1, 0), cv2.Sobel(luma, cv2.CV_32F, 0, 1))


def grain(luma: np.ndarray, region: np.ndarray) -> float:
    """The photo's finest texture (sensor grain, fibres) in a region: the mean absolute
    Laplacian of its calmer three quarters (edges left out)."""
    values = np.abs(cv2.Laplacian(luma, cv2.CV_32F))[region]
    if not len(values):
        return 0.0
    return float(values[values <= np.percentile(values, 75)].mean())


def shape_contrast(luma: np.ndarray, sigma: float = 2.0) -> np.ndarray:
    """How far each pixel's luma, blurred at `sigma`, stands from its neighbourhood's
    (blurred at three times that): the contrast of the ground's shapes at that scale
    (stones in gravel, leaves, bricks), which a washed-out fill lacks even where it has
    the photo's fine grain and edges."""
    shapes = cv2.GaussianBlur(luma, (0, 0), sigma)
    return np.abs(shapes - cv2.GaussianBlur(shapes, (0, 0), 3 * sigma))


def bands(region: np.ndarray, near: int, far: int) -> np.ndarray:
    """The pixels between `near` and `far` pixels outside the region."""
    return dilate(region, far) & ~dilate(region, near)


@dataclass(frozen=True)
class Palette:
    """A few representative colours of some pixels (k-means in Lab) and how far their
    members spread (the RMS distance to their centre); empty for fewer than 8 pixels."""

    centres: np.ndarray
    spread: np.ndarray

    @classmethod
    def of(cls, lab: np.ndarray, count: int = 8, seed: int = 0) -> Palette:
        if len(lab) < 8:
            return cls(np.zeros((0, 3), np.float32), np.zeros(0, np.float32))
        rng = np.random.default_rng(seed)
        points = lab[rng.permutation(len(lab))[:6000]].astype(np.float32)
        centres = points[rng.choice(len(points), min(count, len(points)), replace=False)]
        for _ in range(10):
            owner = np.argmin(((points[:, None] - centres[None]) ** 2).sum(axis=2), axis=1)
            centres = np.array(
                [
                    points[owner == k].mean(axis=0) if (owner == k).any() else centres[k]
                    for k in range(len(centres))
                ]
            )
        owner = np.argmin(((points[:, None] - centres[None]) ** 2).sum(axis=2), axis=1)
        spread = np.array(
            [
                float(np.sqrt(((points[owner == k] - centres[k]) ** 2).sum(axis=1).mean()))
                if (owner == k).any()
                else 0.0
                for k in range(len(centres))
            ]
        )
        return cls(centres, spread)


def foreign(lab_pixels: np.ndarray, context: np.ndarray | Palette) -> np.ndarray:
    """Which pixels have a colour the context (Lab pixels, or their Palette, worked out
    once for several questions) does not have: farther from every one of its
    representative colours than that colour's members are, plus a margin."""
    colours = context if isinstance(context, Palette) else Palette.of(context)
    if len(lab_pixels) == 0 or not len(colours.centres):
        return np.zeros(len(lab_pixels), bool)
    distance = np.sqrt(((lab_pixels[:, None] - colours.centres[None]) ** 2).sum(axis=2))
    allowed = 2.0 * colours.spread[None] + 10.0
    return np.asarray((distance > allowed).all(axis=1))


def foreign_blob(
    lab: np.ndarray,
    region: np.ndarray,
    context: np.ndarray | Palette,
    also: np.ndarray | None = None,
) -> float:
    """The largest connected patch of the region whose colours the context (Lab
    pixels) does not have (foreign), as a share of the region; with `also` (a mask),
    only where that holds too. Single pixels and threads a pixel wide do not count. A
    leftover piece of the object is such a patch even where it is too small a share of
    the hole to move its mean colour."""
    odd = np.zeros(region.shape, np.uint8)
    odd[region] = foreign(lab[region], context)
    if also is not None:
        odd[~also] = 0
    kept = cv2.morphologyEx(odd, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(kept, connectivity=8)
    if count <= 1:
        return 0.0
    return float(stats[1:, cv2.CC_STAT_AREA].max()) / max(1, int(region.sum()))


def foreign_share(lab_region: np.ndarray, context: np.ndarray | Palette) -> float:
    """The share of a region's colours that the context around it does not have."""
    if len(lab_region) == 0:
        return 0.0
    sample = lab_region[np.random.default_rng(1).permutation(len(lab_region))[:6000]]
    return float(foreign(sample, context).mean())


def seam_offset(luma: np.ndarray, region: np.ndarray, width: int) -> float:
    """How much brighter or darker the region is just inside its edge than the photo just
    outside: the median of the brightness differences of pixel pairs across the edge
    (each pixel of a band `width` wide inside paired with its nearest in the band
    outside). A ghost of an outline is a steady step and survives the median; the
    photo's own texture and edges, crossing the edge every which way, even out."""
    soft = cv2.GaussianBlur(luma, (0, 0), 1.5)
    w = max(2, width)
    inner = region & ~erode(region, w)
    outer = bands(region, 0, w)
    if not inner.any() or not outer.any():
        return 0.0
    partner = soft.ravel()[nearest_of(outer, inner)]  # each inner pixel's nearest outside
    return abs(float(np.median(soft[inner] - partner)))


def coherence(luma: np.ndarray, sigma: float = 2.5) -> np.ndarray:
    """How strongly the texture runs in one direction (0 = none, 1 = all of it): the
    structure tensor's coherence."""
    gx = cv2.Sobel(luma, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(luma, cv2.CV_32F, 0, 1)
    jxx = cv2.GaussianBlur(gx * gx, (0, 0), sigma)
    jyy = cv2.GaussianBlur(gy * gy, (0, 0), sigma)
    jxy = cv2.GaussianBlur(gx * gy, (0, 0), sigma)
    root = np.sqrt((jxx - jyy) ** 2 + 4 * jxy**2)
    return root / (jxx + jyy + 1e-3)


def repeated_share(luma: np.ndarray, region: np.ndarray, side: int = 6) -> float:
    """The share of a region's textured patches that appear again, the same, elsewhere
    in it (a tiled patch; copies of one spot). Patches (every second pixel) are compared
    with their mean taken away, in steps of 4 grey levels; flat patches do not count."""
    from numpy.lib.stride_tricks import sliding_window_view

    windows = sliding_window_view(luma, (side, side))[::2, ::2]
    inside = sliding_window_view(region, (side, side))[::2, ::2].all(axis=(2, 3))
    ys, xs = np.nonzero(inside)
    if not len(ys):
        return 0.0
    patches = windows[ys, xs].reshape(len(ys), -1)
    textured = patches.std(axis=1) >= 4.0
    if not textured.any():
        return 0.0
    patches, ys, xs = patches[textured], ys[textured] * 2, xs[textured] * 2
    keys = np.round((patches - patches.mean(axis=1, keepdims=True)) / 4.0).astype(np.int8)
    _, group, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    group = group.ravel()
    shared = counts[group] > 1
    if not shared.any():
        return 0.0
    # a repeat counts when copies of the patch lie apart (not the same spot twice)
    spread = np.zeros(len(counts), np.int64)
    for coordinate in (ys, xs):
        low = np.full(len(counts), np.iinfo(np.int64).max)
        high = np.full(len(counts), np.iinfo(np.int64).min)
        np.minimum.at(low, group, coordinate)
        np.maximum.at(high, group, coordinate)
        spread = np.maximum(spread, high - low)
    return float((shared & (spread[group] >= side)).sum() / len(keys))


def acutance(
    fine: np.ndarray, blurred: np.ndarray, region: np.ndarray, share: float = 0.15
) -> float:
    """How crisp the region's strongest edges are, from the gradient maps `fine` (the
    finest scale) and `blurred` (after a blur of sigma 2): at its `share` of pixels with
    the most blurred gradient, the fine gradient against the blurred one. A sharp edge
    keeps its fine gradient (about 1 and up); the same edge smeared or blurred loses it
    (0.5-0.7): a diffusion fill drags a mortar line into a soft fan."""
    return _acutance(fine[region], blurred[region], share)


def _acutance(fine: np.ndarray, blurred: np.ndarray, share: float = 0.15) -> float:
    if not len(blurred):
        return 0.0
    top = blurred >= np.percentile(blurred, 100 * (1 - share))
    return float(fine[top].mean() / (blurred[top].mean() + 1e-3))


def sector_acutance(
    fine: np.ndarray, blurred: np.ndarray, region: np.ndarray, sectors: int = 8
) -> np.ndarray:
    """acutance() in each angular sector of the region around its centre (sectors
    with too few pixels left out): a ring beside a sharp object on one side and soft
    ground on the other has both."""
    if not region.any():
        return np.zeros(1, np.float32)
    ys, xs, sector = angular_sectors(region, sectors)
    found = [
        _acutance(fine[ys[sector == k], xs[sector == k]], blurred[ys[sector == k], xs[sector == k]])
        for k in range(sectors)
        if (sector == k).sum() >= 64
    ]
    return np.array(found or [acutance(fine, blurred, region)], np.float32)


def lab_of(image: np.ndarray) -> np.ndarray:
    return to_lab(rgb(image))


def broken_lines(luma: np.ndarray, region: np.ndarray, width: int) -> tuple[int, int]:
    """Straight lines of the photo that run into the region and stop at its edge: a
    brick wall's mortar, a pole, a rim that the fill did not carry on. Segments found
    (Hough) in a band around the region that end at its edge are extended into it by
    `width` pixels; a line is broken when the picture has no edge along most of the
    extension. Returns (broken, lines that ran in)."""
    edges = cv2.Canny(np.clip(luma, 0, 255).astype(np.uint8), 50, 150)
    around = bands(region, 1, 2 * width)
    outside = np.where(around, edges, 0).astype(np.uint8)
    found = cv2.HoughLinesP(
        outside,
        1,
        np.pi / 180,
        threshold=max(8, width // 2),
        minLineLength=max(8, width),
        maxLineGap=2,
    )
    if found is None:
        return 0, 0
    near_edge = cv2.dilate(edges, np.ones((5, 5), np.uint8)) > 0
    inside = erode(region, 2)
    h, w = region.shape
    running, broken = 0, 0
    for x0, y0, x1, y1 in found[:, 0]:
        for (ax, ay), (bx, by) in (((x0, y0), (x1, y1)), ((x1, y1), (x0, y0))):
            length = float(np.hypot(bx - ax, by - ay))
            if length < 1:
                continue
            dx, dy = (bx - ax) / length, (by - ay) / length
            ahead = [
                (int(round(bx + dx * t)), int(round(by + dy * t))) for t in range(2, width + 2)
            ]
            ahead = [(x, y) for x, y in ahead if 0 <= x < w and 0 <= y < h]
            into = [(x, y) for x, y in ahead if inside[y, x]]
            if len(into) < max(4, width // 2):
                continue  # this end does not run into the region
            running += 1
            if np.mean([near_edge[y, x] for x, y in into]) < 0.4:
                broken += 1
    return broken, running


def ground_unpredictability(image: np.ndarray, region: np.ndarray) -> float:
    """How far the photo around a region departs from what its surroundings predict
    (Lab Delta E, once softened by a tenth of the region's size): a band around the
    region as wide as a third of its size is predicted from outside it, pixel by pixel
    by the better of two models: the softened picture continued smoothly (Telea: sky,
    a wall, bokeh) and colour regions continued straight across (a table's edge, a
    wall beside a floor). Such ground scores 1-2.5; a garden, a crate, a face, a
    lattice or a tyre change within a hole's width (2.5 and more, 5-15 for the
    busiest), and whatever was behind the region could be anything: no fill there can
    be vouched for by the photo around it. The size is the
    side of a square of the region's area, or less for a long thin region (a spoon's
    handle: the fill bridges its width, not its length)."""
    area = float(region.sum())
    contours, _ = cv2.findContours(region.astype(np.uint8), cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
    perimeter = sum(cv2.arcLength(c, True) for c in contours)
    size = min(np.sqrt(area), 2 * np.sqrt(np.pi) * area / max(perimeter, 1.0))  # (a disc: equal)
    picture, region, size = _at_most(image, region, size)
    sigma = max(2.0, 0.1 * size)
    soft = cv2.GaussianBlur(picture, (0, 0), sigma)
    grown = dilate(region, int(np.ceil(2 * sigma)))  # past what the softening mixed in
    width = max(3, int(0.3 * size))
    unknown = dilate(grown, width)
    band = unknown & ~grown
    if not band.any():
        return 0.0
    lab = lab_of(soft)
    smooth = lab_of(cv2.inpaint(soft, unknown.astype(np.uint8), 3, cv2.INPAINT_TELEA))
    labels = regions(lab, unknown, np.random.default_rng(0), span=48)
    near = dilate(unknown, width) & ~unknown
    continued = smooth.copy()
    for label in np.unique(labels[band]):
        own = near & (labels == label)
        if own.any():
            continued[band & (labels == label)] = np.median(lab[own], axis=0)
    misses = [np.linalg.norm(lab[band] - guess[band], axis=1) for guess in (smooth, continued)]
    return float(np.minimum(*misses).mean())


#: the size (pixels) a region is worked out at by the measures of its whole shape: they
#: soften the picture anyway
SHAPE_SIZE = 60.0


def _at_most(
    image: np.ndarray, region: np.ndarray, size: float, most: float = SHAPE_SIZE
) -> tuple[np.ndarray, np.ndarray, float]:
    """The picture (RGB) and region scaled so that the region's `size` is at most
    `most`, and its size there."""
    picture = np.ascontiguousarray(rgb(image))
    scale = min(1.0, most / max(size, 1.0))
    if scale < 1.0:
        dsize = (max(8, round(region.shape[1] * scale)), max(8, round(region.shape[0] * scale)))
        picture = cv2.resize(picture, dsize, interpolation=cv2.INTER_AREA)
        region = cv2.resize(region.astype(np.uint8), dsize, interpolation=cv2.INTER_NEAREST) > 0
    return picture, region, size * scale


def cut_off_shapes(image: np.ndarray, region: np.ndarray) -> float:
    """How much of a shape that runs across the region the fill leaves out (0..1): a
    stem, a pole or a stripe of the ground enters on one side and leaves on the other,
    and the fill there has another colour (a dark blob where the stem should carry
    on). The ground around the region is split into colour regions; a minor one (at
    most a quarter of the ring around the region) that lines through the fill continue
    from both sides, heading in (it holds for half the ring's width beyond the border),
    predicts where it runs; the share of that path whose colour is far from the shape's
    own, weighted down when the path is small (under a tenth of the fill). The worst
    such shape counts. Lines that leave the region in two different colours predict
    nothing: where the ground is busier than that, ground_unpredictability says so.
    Worked out where the region's size is 40 pixels."""
    picture, region, size = _at_most(image, region, float(np.sqrt(region.sum())), 40.0)
    sigma = max(1.5, 0.05 * size)
    lab = lab_of(cv2.GaussianBlur(picture, (0, 0), sigma))
    grown = dilate(region, int(np.ceil(2 * sigma)))  # past where the softening mixed the fill in
    width = max(4, int(0.35 * size))
    ring = bands(grown, 0, width)
    within = erode(region, 2)
    if not ring.any() or not within.any():
        return 0.0
    labels = colour_labels(lab, ring, np.random.default_rng(0), count=6)
    agree, length, local = lines_across(
        labels, grown, rays=32, depth=max(2, width // 2), longest=int(1.5 * size)
    )
    # a line of the shape's colour as short as the shortest continuation (a stem across
    # the sky: the line along the stem and the one across it, sky to sky, tie)
    local &= length <= 1.1 * length.min(axis=0)
    ys, xs = np.nonzero(grown)
    # each colour region's median colour in the ring (every line leaves into the ring)
    colours = {k: np.median(lab[ring & (labels == k)], axis=0) for k in np.unique(labels[ring])}
    worst = 0.0
    for label in np.unique(agree[local]):
        own = ring & (labels == label)
        path = np.zeros_like(grown)
        path[ys, xs] = (local & (agree == label)).any(axis=0)
        # a band as wide as a shape: lines between specks of a colour are no shape
        path = dilate(erode(path, 1), 1) & within
        if own.sum() > 0.25 * ring.sum() or path.sum() < 0.03 * within.sum():
            continue
        colour = colours[label]
        spread = float(np.percentile(np.linalg.norm(lab[own] - colour, axis=1), 75))
        others = [other for k, other in colours.items() if k != label]
        apart = min((float(np.linalg.norm(colour - other)) for other in others), default=0.0)
        far = np.linalg.norm(lab[path] - colour, axis=1) > max(12.0, 2 * spread, 0.5 * apart)
        worst = max(worst, float(far.mean()) * min(1.0, path.sum() / (0.1 * within.sum())))
    return worst
