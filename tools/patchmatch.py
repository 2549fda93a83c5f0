"""Exemplar-based image completion: the hole is filled with patches of the picture
around it, found by PatchMatch and blended by voting, coarse to fine (Wexler, Shechtman
and Irani, "Space-Time Completion of Video", 2007; Barnes et al., "PatchMatch", 2009;
the method behind content-aware fill).

Unlike diffusion fills (OpenCV's Telea and Navier-Stokes), which smear the border's
colours inwards, this copies real texture: wood grain, grass, a glaze's highlights and a
cup's rim continue through the hole.

All of it is numpy, vectorised over the hole: PatchMatch's propagation runs in parallel
(every pixel looks at its neighbours' matches at once, at growing distances) and patch
distances compare short descriptors (a patch's colours at a 3x3 grid of taps over a
lightly blurred copy) instead of whole patches. It works at a resolution where the
completion stays a few seconds (WORK_PIXELS); on a larger photo the matches found there
are carried to the photo's own pixels, so the fill keeps the photo's native grain
instead of an enlarged, soft copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from layerpath.kit.imaging import dilate, sector_energy, shrunk
from layerpath.kit.segments import alike, regions

#: the completion runs on at most this many pixels of window (the finest level)
WORK_PIXELS = 360_000
#: patch radius (7x7 patches) at every level
RADIUS = 3
#: the coarsest level: where the hole spans about this many patches (any coarser and
#: thin structures such as a brick wall's mortar vanish before the search sees them)
COARSEST_PATCHES = 4
#: tap offsets of a patch descriptor (3x3 grid over the patch)
_TAPS = [(dy, dx) for dy in (-RADIUS, 0, RADIUS) for dx in (-RADIUS, 0, RADIUS)]
#: neighbours whose matches a pixel tries (shifted), at growing distances
_JUMPS = [(0, 1), (0, -1), (1, 0), (-1, 0), (0, 4), (0, -4), (4, 0), (-4, 0), (8, 8), (-8, -8)]


@dataclass
class _Level:
    """One pyramid level: the picture (Lab, padded by RADIUS), the hole, where patches
    may be copied from (sources), which pixels need a match (targets), and each pixel's
    region (a target copies only from sources of its own region)."""

    lab: np.ndarray  # (h + 2r, w + 2r, 3) float32, reflect-padded
    hole: np.ndarray  # (h, w) bool
    source: np.ndarray  # (h, w) bool: patch centres whose patch lies wholly outside the hole
    ty: np.ndarray  # target centres (pixels whose patch overlaps the hole)
    tx: np.ndarray
    region: np.ndarray  # (h, w) int32

    @property
    def shape(self) -> tuple[int, int]:
        h, w = self.hole.shape
        return int(h), int(w)


def _pad(lab: np.ndarray) -> np.ndarray:
    return cv2.copyMakeBorder(lab, RADIUS, RADIUS, RADIUS, RADIUS, cv2.BORDER_REFLECT_101)


def _level(lab: np.ndarray, hole: np.ndarray, region: np.ndarray) -> _Level:
    source = ~dilate(hole, RADIUS)
    source[:RADIUS] = source[-RADIUS:] = False  # whole patches only: no reflected border
    source[:, :RADIUS] = source[:, -RADIUS:] = False
    if not source.any():
        source = ~hole
    ty, tx = np.nonzero(dilate(hole, RADIUS))
    region = region.copy()
    for label in np.unique(region[ty, tx]):  # a region with nothing to copy from: any
        if not (source & (region == label)).any():
            region[region == label] = -1
    region[region < 0] = -1
    return _Level(_pad(lab), hole, source, ty.astype(np.int32), tx.astype(np.int32), region)


#: weight of a patch's detail in its descriptor
DETAIL_WEIGHT = 3.0


def _descriptors(level: _Level) -> np.ndarray:
    """Every pixel's patch descriptor: the lightly blurred colours at the 3x3 taps, and
    how much fine detail the patch has. In the hole, where the estimate is still soft,
    the detail asked for is the ring's typical one: smooth patches, which match a soft
    estimate best, would otherwise win and leave a smooth blob."""
    soft = cv2.GaussianBlur(level.lab, (0, 0), 1.0)
    h, w = level.shape
    r = RADIUS
    taps = [soft[r + dy : r + dy + h, r + dx : r + dx + w] for dy, dx in _TAPS]
    luma = level.lab[r:-r, r:-r, 0]
    detail = cv2.GaussianBlur(np.abs(cv2.Laplacian(luma, cv2.CV_32F)), (0, 0), float(RADIUS))
    ring = dilate(level.hole, 3 * RADIUS) & ~dilate(level.hole, RADIUS)
    if ring.any():
        detail = detail.copy()
        detail[level.hole] = float(np.median(detail[ring]))
    return np.concatenate([*taps, DETAIL_WEIGHT * detail[..., None]], axis=2)


def _distance(
    features: np.ndarray, ty: np.ndarray, tx: np.ndarray, qy: np.ndarray, qx: np.ndarray
) -> np.ndarray:
    width, depth = features.shape[1], features.shape[2]
    flat = features.reshape(-1, depth)  # rows taken by one flat index: quicker
    difference = flat.take(ty * width + tx, axis=0) - flat.take(qy * width + qx, axis=0)
    return np.einsum("ij,ij->i", difference, difference)


def _random_sources(
    level: _Level, ty: np.ndarray, tx: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A random source of its own region for each target."""
    qy = np.zeros(len(ty), np.int32)
    qx = np.zeros(len(ty), np.int32)
    own = level.region[ty, tx]
    for label in np.unique(own):
        sy, sx = np.nonzero(level.source & ((level.region == label) if label >= 0 else True))
        these = own == label
        pick = rng.integers(0, len(sy), int(these.sum()))
        qy[these], qx[these] = sy[pick], sx[pick]
    return qy, qx


def _improve(
    level: _Level,
    features: np.ndarray,
    qy: np.ndarray,
    qx: np.ndarray,
    cost: np.ndarray,
    rng: np.random.Generator,
    rounds: int,
) -> None:
    """PatchMatch rounds, in place: each target tries its neighbours' matches shifted to
    it, then random matches in a window around its own that halves down to a pixel."""
    h, w = level.shape
    where = np.full((h, w), -1, np.int32)
    where[level.ty, level.tx] = np.arange(len(level.ty), dtype=np.int32)
    # looked up by flat index (quicker than by row and column)
    owns = level.region[level.ty, level.tx]  # each target's region
    source, region = level.source.ravel(), level.region.ravel()

    def consider(cy: np.ndarray, cx: np.ndarray, among: np.ndarray) -> None:
        cy, cx = np.clip(cy, 0, h - 1), np.clip(cx, 0, w - 1)
        at = cy * w + cx
        own = owns[among]
        valid = source.take(at) & ((own < 0) | (region.take(at) == own))
        if not valid.any():
            return
        pick, cy, cx = among[valid], cy[valid], cx[valid]
        new = _distance(features, level.ty[pick], level.tx[pick], cy, cx)
        better = new < cost[pick]
        chosen = pick[better]
        qy[chosen], qx[chosen], cost[chosen] = cy[better], cx[better], new[better]

    every = np.arange(len(level.ty))
    for _ in range(rounds):
        for dy, dx in _JUMPS:
            ny, nx = level.ty + dy, level.tx + dx
            inside = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
            neighbour = np.full(len(level.ty), -1, np.int32)
            neighbour[inside] = where[ny[inside], nx[inside]]
            has = neighbour >= 0
            if has.any():
                consider(qy[neighbour[has]] - dy, qx[neighbour[has]] - dx, every[has])
        radius = max(h, w)
        while radius >= 1:
            jitter = rng.integers(-radius, radius + 1, (2, len(every)))
            consider(qy + jitter[0], qx + jitter[1], every)
            radius //= 2


def _vote(
    level: _Level, qy: np.ndarray, qx: np.ndarray, cost: np.ndarray, sharpness: float = 1.0
) -> np.ndarray:
    """The hole's new colours: every patch overlapping a hole pixel votes the colour its
    match has there, weighted by how well the patch matched (the larger `sharpness`,
    the more the best matches win)."""
    h, w = level.shape
    r = RADIUS
    lab = level.lab
    scale = float(np.percentile(cost, 50)) / sharpness + 1e-6
    weight = np.exp(-cost / (2.0 * scale)).astype(np.float32)
    total = np.zeros((h, w, 3), np.float32)
    weights = np.zeros((h, w), np.float32)
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            y, x = level.ty + dy, level.tx + dx
            inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
            y, x, sy, sx, wt = (
                y[inside],
                x[inside],
                qy[inside] + dy,
                qx[inside] + dx,
                weight[inside],
            )
            total[y, x] += wt[:, None] * lab[sy + r, sx + r]  # (y, x) unique for one offset
            weights[y, x] += wt
    out = lab[r:-r, r:-r].copy()
    filled = level.hole & (weights > 0)
    out[filled] = total[filled] / weights[filled, None]
    return out


def _winning_sources(
    level: _Level, qy: np.ndarray, qx: np.ndarray, cost: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For every pixel, the pixel its colour is copied from: in the hole, from the
    best-matching patch that covers it; elsewhere itself."""
    h, w = level.shape
    r = RADIUS
    best = np.full((h, w), np.inf, np.float32)
    source_y, source_x = np.mgrid[0:h, 0:w].astype(np.int32)
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            y, x = level.ty + dy, level.tx + dx
            inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
            y, x, c = y[inside], x[inside], cost[inside]
            better = c < best[y, x]
            y, x = y[better], x[better]
            best[y, x] = c[better]
            source_y[y, x] = qy[inside][better] + dy
            source_x[y, x] = qx[inside][better] + dx
    keep = ~level.hole
    source_y[keep], source_x[keep] = np.nonzero(keep)
    return source_y, source_x


def _winners(level: _Level, qy: np.ndarray, qx: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """The hole's colours copied, each from the best-matching patch that covers it (no
    averaging: the fill keeps the sharpness of what it copies)."""
    source_y, source_x = _winning_sources(level, qy, qx, cost)
    return level.lab[source_y + RADIUS, source_x + RADIUS]


def _seamless(level: _Level, source_y: np.ndarray, source_x: np.ndarray) -> np.ndarray:
    """The copied fill with its seams taken out in the gradient domain (as Photomontage
    fuses its pieces): between two neighbouring pixels copied from neighbouring pixels
    the step stays as copied; across a seam (two pieces from different places, or a
    piece against the hole's edge) a step larger than the photo takes beside either
    source becomes the photo's own step there, and the fill is the least change that
    makes its steps so. A patchwork of lighter and darker pieces becomes one surface;
    its texture stays. Where two surfaces meet (a cup's rim and its body: colour regions
    far apart, see _surfaces) the step stays: that edge is the photo's."""
    h, w = level.shape
    r = RADIUS
    picture = level.lab[r:-r, r:-r]
    filled = picture[source_y, source_x]
    hole = level.hole
    surface = _surfaces(picture, level.region, hole)
    divergence = np.zeros_like(filled)
    for ey, ex in ((0, 1), (1, 0)):
        # edges from p = (y, x) to q = (y + ey, x + ex)
        py, px = np.mgrid[0 : h - ey, 0 : w - ex]
        qy, qx = py + ey, px + ex
        touching = hole[py, px] | hole[qy, qx]
        py, px, qy, qx = py[touching], px[touching], qy[touching], qx[touching]
        spy, spx, sqy, sqx = source_y[py, px], source_x[py, px], source_y[qy, qx], source_x[qy, qx]
        seam = (sqy != spy + ey) | (sqx != spx + ex)
        seam &= surface[py, px] == surface[qy, qx]  # two surfaces meet: an edge
        py, px, qy, qx = py[seam], px[seam], qy[seam], qx[seam]
        spy, spx, sqy, sqx = spy[seam], spx[seam], sqy[seam], sqx[seam]
        # the steps the photo takes beside p's source and beside q's (where it is photo):
        # a copied step no larger than them is texture and stays; a larger one is a
        # seam, and becomes the photo's own step beside p's source (or q's)
        natural = np.zeros((len(py), 3), np.float32)
        bound = np.zeros((len(py), 3), np.float32)
        found = np.zeros(len(py), bool)
        for ay, ax, by, bx in (
            (sqy - ey, sqx - ex, sqy, sqx),
            (spy, spx, spy + ey, spx + ex),  # last: p's source wins where both are photo
        ):
            ok = (ay >= 0) & (ax >= 0) & (by < h) & (bx < w)
            ok[ok] &= ~hole[ay[ok], ax[ok]] & ~hole[by[ok], bx[ok]]
            step = picture[by[ok], bx[ok]] - picture[ay[ok], ax[ok]]
            natural[ok] = step
            bound[ok] = np.maximum(bound[ok], np.abs(step))
            found |= ok
        copied = filled[qy, qx] - filled[py, px]
        wanted = np.where(np.abs(copied) <= bound, copied, natural)
        wanted[~found] = 0.0
        residual = wanted - copied
        np.add.at(divergence, (py, px), residual)
        np.add.at(divergence, (qy, qx), -residual)
    out = filled.copy()
    # each surface on its own: a correction must not spread across its edge
    for label in np.unique(surface[hole]):
        free = hole & (surface == label)
        rows, cols = np.flatnonzero(free.any(axis=1)), np.flatnonzero(free.any(axis=0))
        y0, y1 = max(0, rows[0] - 2), min(h, rows[-1] + 3)
        x0, x1 = max(0, cols[0] - 2), min(w, cols[-1] + 3)
        part = free[y0:y1, x0:x1]
        correction = _membrane(
            np.zeros((y1 - y0, x1 - x0, 3), np.float32),
            ~part,
            divergence=divergence[y0:y1, x0:x1],
        )
        out[y0:y1, x0:x1][part] += correction[part]
    return out


#: colour regions whose typical colours are closer than this (CIE76 Delta E) are one
#: surface to the seam fusion: shades of a cat's fur, not a cup's white rim and its body
SURFACE_APART = 25.0


def _surfaces(picture: np.ndarray, region: np.ndarray, hole: np.ndarray) -> np.ndarray:
    """Each pixel's surface: its colour region, regions of alike typical colour (the
    median of their known pixels) joined."""
    labels = np.unique(region)
    known = ~hole
    typical = np.array(
        [
            np.median(picture[known & (region == k)], axis=0)
            if (known & (region == k)).any()
            else np.full(3, np.inf, np.float32)
            for k in labels
        ]
    )
    owner = alike(typical, SURFACE_APART)
    lookup = np.zeros(int(labels.max() - labels.min()) + 1, np.int32)
    lookup[labels - labels.min()] = owner
    return lookup[region - labels.min()]


def _pyramid(lab: np.ndarray, hole: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(picture, hole) from the finest level down to where the hole spans about
    COARSEST_PATCHES patches (and the picture stays larger than a few patches)."""
    levels = [(lab, hole)]

    def span(gap: np.ndarray) -> int:
        rows, cols = np.flatnonzero(gap.any(axis=1)), np.flatnonzero(gap.any(axis=0))
        return int(max(rows[-1] - rows[0], cols[-1] - cols[0])) + 1 if len(rows) else 0

    patch = 2 * RADIUS + 1
    while (
        span(levels[-1][1]) > 2 * COARSEST_PATCHES * patch and min(levels[-1][1].shape) > 8 * patch
    ):
        picture, gap = levels[-1]
        size = (max(1, gap.shape[1] // 2), max(1, gap.shape[0] // 2))
        small = cv2.resize(picture, size, interpolation=cv2.INTER_AREA)
        smaller_gap = cv2.resize(gap.astype(np.float32), size, interpolation=cv2.INTER_AREA) > 0
        levels.append((small, smaller_gap))
    return levels


@dataclass
class Completion:
    """A completed picture: `picture` (RGB uint8, the photo's own pixels outside the
    hole), `fill` (its values in float, 0..255, before they were cut to 8 bits), the
    match field (for each patch centre, the row and column of the centre it copies;
    -1 where none) and each pixel's source (the pixel its colour was copied from;
    itself outside the hole)."""

    picture: np.ndarray
    fill: np.ndarray
    field_y: np.ndarray
    field_x: np.ndarray
    source_y: np.ndarray
    source_x: np.ndarray


def complete(
    rgb: np.ndarray,
    hole: np.ndarray,
    seed: int = 0,
    iterations: int = 6,
    guided: bool = True,
    progress: Callable[[float], None] = lambda share: None,
) -> Completion:
    """Fill `hole` in the RGB uint8 picture from the rest of it. `guided`: each hole
    pixel copies only from the colour region its nearest border pixel is in."""
    rng = np.random.default_rng(seed)
    lab = cv2.cvtColor(rgb.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    labels = regions(lab, hole, rng) if guided else np.zeros(hole.shape, np.int32)
    levels = _pyramid(lab, hole)
    qy = qx = cost = None
    previous: _Level | None = None
    estimate: np.ndarray | None = None
    for depth, (picture, gap) in enumerate(reversed(levels)):
        coarse = depth == 0
        current = picture.copy()
        region = cv2.resize(labels, (gap.shape[1], gap.shape[0]), interpolation=cv2.INTER_NEAREST)
        if coarse:  # a smooth first guess from the border; the object's colours never count
            guess = cv2.inpaint(
                np.clip(rgb_of(current), 0, 255).astype(np.uint8),
                gap.astype(np.uint8),
                3,
                cv2.INPAINT_TELEA,
            )
            current[gap] = cv2.cvtColor(guess.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)[gap]
            if guided:  # each region's own colour where it continues (no mound of a smear)
                near = dilate(gap, max(2, min(gap.shape) // 8)) & ~gap
                for label in np.unique(region[gap]):
                    own = near & (region == label)
                    if own.any():
                        current[gap & (region == label)] = np.median(current[own], axis=0)
        else:
            assert estimate is not None
            size = (gap.shape[1], gap.shape[0])
            current[gap] = cv2.resize(estimate, size, interpolation=cv2.INTER_LINEAR)[gap]
        level = _level(current, gap, region)
        if not len(level.ty):
            none = np.full(hole.shape, -1, np.int32)
            own_y, own_x = np.mgrid[0 : hole.shape[0], 0 : hole.shape[1]].astype(np.int32)
            return Completion(rgb.copy(), rgb.astype(np.float32), none, none, own_y, own_x)
        features = _descriptors(level)
        if coarse or previous is None or qy is None or qx is None:
            qy, qx = _random_sources(level, level.ty, level.tx, rng)
        else:
            qy, qx = _upsampled(previous, qy, qx, level, rng)
        cost = _distance(features, level.ty, level.tx, qy, qx)
        rounds = iterations + 4 if coarse else iterations
        for _ in range(rounds):
            _improve(level, features, qy, qx, cost, rng, 2 if coarse else 1)
            blend = _vote if coarse else _winners  # a sharp estimate draws sharp matches
            level.lab[RADIUS:-RADIUS, RADIUS:-RADIUS] = blend(level, qy, qx, cost)
            features = _descriptors(level)
            cost = _distance(features, level.ty, level.tx, qy, qx)
        estimate = level.lab[RADIUS:-RADIUS, RADIUS:-RADIUS]
        previous = level
        progress((depth + 1) / len(levels))
    assert previous is not None and qy is not None and qx is not None and cost is not None
    # the last votes averaged: copy the best, and fuse the pieces without seams
    source_y, source_x = _winning_sources(previous, qy, qx, cost)
    fill = np.clip(rgb_of(_seamless(previous, source_y, source_x)), 0, 255)
    out = fill.astype(np.uint8)
    out[~hole] = rgb[~hole]
    field_y = np.full(hole.shape, -1, np.int32)
    field_x = np.full(hole.shape, -1, np.int32)
    field_y[previous.ty, previous.tx], field_x[previous.ty, previous.tx] = qy, qx
    return Completion(out, fill, field_y, field_x, source_y, source_x)


def rgb_of(lab: np.ndarray) -> np.ndarray:
    """Float Lab (OpenCV's float ranges) to float RGB 0..255."""
    return cv2.cvtColor(lab.astype(np.float32), cv2.COLOR_LAB2RGB) * 255.0


def _upsampled(
    coarse: _Level, qy: np.ndarray, qx: np.ndarray, fine: _Level, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The coarse level's matches carried to the finer level (twice the coordinates,
    plus the pixel's place within its 2x2 block); random where the coarse had none."""
    ch, cw = coarse.shape
    field_y = np.full((ch, cw), -1, np.int32)
    field_x = np.full((ch, cw), -1, np.int32)
    field_y[coarse.ty, coarse.tx], field_x[coarse.ty, coarse.tx] = qy, qx
    py = np.clip(fine.ty // 2, 0, ch - 1)
    px = np.clip(fine.tx // 2, 0, cw - 1)
    my, mx = field_y[py, px], field_x[py, px]
    h, w = fine.shape
    ny = np.clip(my * 2 + fine.ty % 2, 0, h - 1)
    nx = np.clip(mx * 2 + fine.tx % 2, 0, w - 1)
    own = fine.region[fine.ty, fine.tx]
    bad = (my < 0) | ~fine.source[ny, nx] | ((own >= 0) & (fine.region[ny, nx] != own))
    if bad.any():
        ry, rx = _random_sources(fine, fine.ty[bad], fine.tx[bad], rng)
        ny[bad], nx[bad] = ry, rx
    return ny.astype(np.int32), nx.astype(np.int32)


def fill_window(
    rgb: np.ndarray,
    hole: np.ndarray,
    *,
    seed: int = 0,
    iterations: int = 6,
    guided: bool = True,
    progress: Callable[[float], None] = lambda share: None,
    deep: np.ndarray | None = None,
) -> np.ndarray:
    """Complete `hole` in the RGB window. A window larger than WORK_PIXELS is completed
    on a scaled-down copy; its fill is enlarged and the photo's own fine detail (grain,
    fibres) is added back from where the matches point, at the photo's scale, so the
    fill is neither soft nor blocky.

    With `deep`, the same window at 16 bits (RGB uint16; `rgb` is what the 8-bit run
    saw), the same fill is returned at 16 bits: the same matches, each hole pixel its
    source's 16-bit value moved by what the fill did to its 8-bit one (the seams taken
    out, in float), so copied texture keeps the photo's 16-bit values."""
    h, w = hole.shape
    scale = min(1.0, (WORK_PIXELS / max(1, h * w)) ** 0.5)
    if scale >= 1.0:
        done = complete(rgb, hole, seed, iterations, guided, progress)
        if deep is None:
            return done.picture
        hy, hx = np.nonzero(hole)
        sy, sx = done.source_y[hy, hx], done.source_x[hy, hx]
        moved = (done.fill[hy, hx] - rgb[sy, sx].astype(np.float32)) * 257.0
        out = deep.copy()
        out[hy, hx] = np.clip(np.rint(deep[sy, sx].astype(np.float32) + moved), 0, 65535)
        return out
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    small_hole = shrunk(hole, size)
    done = complete(small, small_hole, seed, iterations, guided, progress)
    field_y, field_x = done.field_y, done.field_x
    # the photo's detail: what the scaled-down copy cannot hold
    if deep is None:
        top, detail = (
            255,
            rgb.astype(np.float32) - cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR),
        )
        base_of = done.picture
    else:
        small_deep = cv2.resize(deep, size, interpolation=cv2.INTER_AREA)
        enlarged = cv2.resize(small_deep, (w, h), interpolation=cv2.INTER_LINEAR)
        top, detail = 65535, deep.astype(np.float32) - enlarged
        base_of = done.fill.copy()  # the fill in float, the photo's own 16 bits around it
        base_of[~small_hole] = small_deep[~small_hole] / 257.0
    sy_scale, sx_scale = size[1] / h, size[0] / w
    hy, hx = np.nonzero(hole)
    fy, fx = (hy + 0.5) * sy_scale - 0.5, (hx + 0.5) * sx_scale - 0.5  # on the small grid
    y0, x0 = np.floor(fy).astype(np.int32), np.floor(fx).astype(np.int32)
    total = np.zeros((len(hy), 3), np.float32)
    weights = np.zeros(len(hy), np.float32)
    for dy in (0, 1):
        for dx in (0, 1):
            cy = np.clip(y0 + dy, 0, size[1] - 1)
            cx = np.clip(x0 + dx, 0, size[0] - 1)
            weight = (1 - np.abs(fy - (y0 + dy))) * (1 - np.abs(fx - (x0 + dx)))
            my, mx = field_y[cy, cx], field_x[cy, cx]
            # the match's offset at the photo's scale, applied to this pixel
            src_y = np.rint(hy + (my - cy) / sy_scale).astype(np.int32)
            src_x = np.rint(hx + (mx - cx) / sx_scale).astype(np.int32)
            usable = (my >= 0) & (src_y >= 0) & (src_y < h) & (src_x >= 0) & (src_x < w)
            usable[usable] &= ~hole[src_y[usable], src_x[usable]]
            weight = np.where(usable, np.maximum(weight, 1e-3), 0.0).astype(np.float32)
            src_y, src_x = np.clip(src_y, 0, h - 1), np.clip(src_x, 0, w - 1)
            total += weight[:, None] * detail[src_y, src_x]
            weights += weight
    base = cv2.resize(base_of, (w, h), interpolation=cv2.INTER_LINEAR)[hy, hx].astype(np.float32)
    if deep is not None:
        base *= 257.0
    grain = np.where(weights[:, None] > 0, total / np.maximum(weights, 1e-6)[:, None], 0.0)
    out = (rgb if deep is None else deep).copy()
    out[hy, hx] = np.clip(np.rint(base + grain), 0, top).astype(out.dtype)
    return out


# --- plain and out-of-focus ground --------------------------------------------------------

#: below this ring texture (ring_texture: the gradient of the grey picture's fine detail,
#: levels per pixel) the ground is plain or out of focus: copied patches would piece a
#: soft gradient together from blocks, so the hole is filled smoothly instead (measured
#: on the photos suite: bokeh and sky 2-9; a petal's or a pole's edge beside the hole, fur
#: and grass 22-150)
SMOOTH_BELOW = 16.0


def ring_texture(rgb: np.ndarray, hole: np.ndarray) -> float:
    """How textured the ground around the hole is: the gradient of its grey picture's
    fine detail (a smooth gradient has none) in a ring as wide as a third of the hole,
    in its most detailed eighth (a sharp edge running into the hole on one side is
    detail a smooth fill would smear); measured where the hole is at most about 100
    pixels across."""
    side = float(np.sqrt(hole.sum()))
    if side > 120:  # measured where the hole is about 100 pixels across, at any photo size
        size = (
            max(8, round(hole.shape[1] * 100 / side)),
            max(8, round(hole.shape[0] * 100 / side)),
        )
        rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
        hole = cv2.resize(hole.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).astype(np.float32)
    detail = grey - cv2.GaussianBlur(grey, (0, 0), 2.0)  # what a smooth gradient lacks
    gradient = cv2.magnitude(
        cv2.Sobel(detail, cv2.CV_32F, 1, 0), cv2.Sobel(detail, cv2.CV_32F, 0, 1)
    )
    width = max(4, round(0.35 * float(np.sqrt(hole.sum()))))
    ring = dilate(hole, 2 + width) & ~dilate(hole, 2)
    if ring.sum() < 16:
        return float(gradient.mean())
    return float(sector_energy(gradient, ring).max())


#: Jacobi sweeps per level of the coarse-to-fine membrane and Poisson solves
RELAX = 40


def _membrane(
    values: np.ndarray,
    known: np.ndarray,
    default: np.ndarray | None = None,
    divergence: np.ndarray | None = None,
) -> np.ndarray:
    """`values` where `known`, and elsewhere the membrane they span (Laplace's equation
    solved with the known pixels as its border): a gradient carries on as a gradient,
    not towards the ring's average. With `divergence`, Poisson's equation instead (the
    Laplacian of the answer is `divergence` where it is free). Solved coarse to fine,
    each level started from the coarser one's answer and relaxed (Jacobi) until it
    settles."""
    if known.any():
        default = values[known].mean(axis=0)
    elif default is None:
        return values.astype(np.float32)  # nothing known: nothing to spread
    if min(values.shape[:2]) > 16:
        h, w = values.shape[:2]
        size = ((w + 1) // 2, (h + 1) // 2)
        weight = cv2.resize(known.astype(np.float32), size, interpolation=cv2.INTER_AREA)
        small = cv2.resize(values * known[..., None], size, interpolation=cv2.INTER_AREA)
        coarse_known = weight > 0.99
        small = np.where(coarse_known[..., None], small / np.maximum(weight, 1e-6)[..., None], 0)
        # a Laplacian at twice the spacing is four times as large: the blocks' sums
        coarser = (
            None
            if divergence is None
            else 4.0 * cv2.resize(divergence, size, interpolation=cv2.INTER_AREA)
        )
        coarse = _membrane(small, coarse_known, default, coarser)
        guess = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_LINEAR)
    else:
        guess = np.broadcast_to(default, values.shape).astype(np.float32)
    out = np.where(known[..., None], values, guess).astype(np.float32)
    free = ~known
    kernel = np.array([[0, 0.25, 0], [0.25, 0, 0.25], [0, 0.25, 0]], np.float32)
    source = 0.0 if divergence is None else divergence[free] / 4.0
    for _ in range(RELAX):
        out[free] = cv2.filter2D(out, -1, kernel, borderType=cv2.BORDER_REPLICATE)[free] - source
    return out


def smooth_fill(rgb: np.ndarray, hole: np.ndarray, seed: int = 0) -> np.ndarray:
    """Fill `hole` smoothly from its border (a membrane: the ring's colours spread as a
    soft background's gradient carries on), with the photo's grain added
    (noise as strong as the ring's finest detail), so the fill is neither a patchwork
    nor plastic. 8- or 16-bit RGB. (Colour regions continued across the hole, as the patch fill does, cut
    a soft gradient into wedges at their arbitrary borders.)"""
    h, w = hole.shape
    scale = min(1.0, (WORK_PIXELS / max(1, h * w)) ** 0.5)
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    small, small_hole = rgb, hole
    if scale < 1:
        small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
        small_hole = shrunk(hole, size)
    rng = np.random.default_rng(seed)
    # a band around the hole is left out of what is spread (an object's soft fringe or
    # shadow would tint the fill) and blended back across, so no outline shows
    band = max(2, round(0.04 * float(np.sqrt(small_hole.sum()))))
    values = small.astype(np.float32)
    membrane_small = _membrane(values, ~dilate(small_hole, band))
    membrane = (
        cv2.resize(membrane_small, (w, h), interpolation=cv2.INTER_LINEAR)
        if scale < 1
        else membrane_small
    )
    reach = max(2, round(band / scale))  # the band at the photo's scale
    outside = cv2.distanceTransform((~hole).astype(np.uint8), cv2.DIST_L2, 5)
    blend = np.clip(1.0 - outside / (reach + 1), 0.0, 1.0)  # 1 in the hole, 0 past the band
    # the photo's grain: its finest detail in the ring, as noise of the same strength
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).astype(np.float32)
    fine = grey - cv2.GaussianBlur(grey, (0, 0), 1.0)
    ring = dilate(hole, reach + 12) & ~dilate(hole, reach + 2)
    strength = float(fine[ring].std()) if ring.any() else 0.0
    noise = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.5)
    noise = noise * np.float32(strength / max(1e-6, float(noise.std())))
    changed = blend > 0
    mix = blend[changed, None]
    painted = membrane[changed] + noise[changed, None]
    top = 65535 if rgb.dtype == np.uint16 else 255  # (a 16-bit photo's own depth)
    out = rgb.copy()
    out[changed] = np.clip(np.rint(mix * painted + (1 - mix) * rgb[changed]), 0, top).astype(
        rgb.dtype
    )
    return out
