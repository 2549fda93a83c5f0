"""Straight lines and edges that cross a hole, carried across it before the rest is
filled: a wire, a horizon, a pole, a shadow's edge or a road marking that enters the
hole on one side and leaves it on the other runs on straight through it, as a
photographer retouching by hand would draw it first (structure before texture, as in
Sun et al., "Image Completion with Structure Propagation", 2005, for straight lines).

A line is carried only when the photo shows it on both sides: a straight segment found
(Canny edges, probabilistic Hough) in a ring around the hole on one side, and one on the
same line (within a few degrees and pixels) on the far side. Its band (a few pixels
either side, or the whole width between two edges of one thick line) is painted by
interpolating, along the line, the photo's colours just outside the hole at each
distance from the line; the fill then completes the rest around it.

On out-of-focus ground whose shapes all run one way (a blurred treeline, bands of
water, a sky's gradient), too soft for any edge to be found, the whole hole is painted
the same way along that direction (fill_along), instead of a disc of the ring's colour.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from layerpath.kit.imaging import dilate, nearest_of, sample_at

#: how far either side of a carried line its band reaches (pixels)
HALF_BAND = 3
#: two segments are one line when their directions differ by less than this (degrees)
#: and their distances from the hole's centre by less than OFFSET pixels
ANGLE = 4.0
OFFSET = 3.0
#: two carried lines closer than this (pixels), and parallel, are the two edges of one
#: thick line: the band between them is carried too
THICK = 14.0
#: at most this many lines are carried (a hole crossed by more is texture, not lines),
#: and none where the ring holds more than SEGMENTS straight pieces of edge (grass,
#: gravel, foliage: edges every which way, where a pairing across the hole is chance)
MOST = 4
SEGMENTS = 32
#: an edge is a line's when it is this many times as strong as the ring's usual edges
#: (the 75th percentile of its gradient)
STANDS_OUT = 2.5
#: a carried band's pixels stay within its profile's range outside the hole, widened by
#: this many times the ground's usual grain (the median of its finest detail, per channel)
GRAIN = 3.0


@dataclass(frozen=True)
class Line:
    """A straight line through the hole: its direction (unit, x and y), its distance
    from the hole's centre along the normal, and the band's reach either side."""

    dx: float
    dy: float
    offset: float
    below: float = HALF_BAND
    above: float = HALF_BAND


def _segments(rgb: np.ndarray, hole: np.ndarray, reach: int) -> np.ndarray:
    """Straight segments of the photo's edges in a ring `reach` wide around the hole:
    edges of lightness and of colour (a blue wall on a grey floor of one lightness),
    those that stand out from the ground's own texture only (a wire over gravel, not
    one blade of grass among many)."""
    ring = dilate(hole, reach) & ~dilate(hole, 2)
    lab = cv2.cvtColor(cv2.GaussianBlur(np.ascontiguousarray(rgb), (0, 0), 1.0), cv2.COLOR_RGB2LAB)
    edges = np.zeros(hole.shape, np.uint8)
    strength = np.zeros(hole.shape, np.float32)
    for channel in cv2.split(lab):
        edges = np.maximum(edges, cv2.Canny(channel, 40, 120))
        plane = channel.astype(np.float32)
        strength = np.maximum(
            strength,
            cv2.magnitude(cv2.Sobel(plane, cv2.CV_32F, 1, 0), cv2.Sobel(plane, cv2.CV_32F, 0, 1)),
        )
    edges[~ring] = 0
    found = cv2.HoughLinesP(
        edges,
        1,
        np.pi / 180,
        threshold=max(10, reach // 3),
        minLineLength=max(10, int(0.4 * reach)),
        maxLineGap=5,
    )
    if found is None:
        return np.zeros((0, 4), np.int32)
    usual = float(np.percentile(strength[ring], 75)) if ring.any() else 0.0
    kept = []
    for x0, y0, x1, y1 in found[:, 0]:
        t = np.linspace(0.0, 1.0, 16)
        along = strength[
            np.rint(y0 + (y1 - y0) * t).astype(int), np.rint(x0 + (x1 - x0) * t).astype(int)
        ]
        if float(along.mean()) >= STANDS_OUT * usual:
            kept.append((x0, y0, x1, y1))
    return np.array(kept, np.int32).reshape(-1, 4)


def crossing_lines(rgb: np.ndarray, hole: np.ndarray) -> list[Line]:
    """The straight lines the photo (RGB) shows on both sides of the hole."""
    ys, xs = np.nonzero(hole)
    if len(ys) < 16:
        return []
    cy, cx = float(ys.mean()), float(xs.mean())
    size = float(np.sqrt(len(ys)))
    reach = int(np.clip(0.6 * size, 10, 120))
    segments = _segments(rgb, hole, reach)
    if len(segments) > SEGMENTS:
        return []
    found = []
    for x0, y0, x1, y1 in segments:
        length = float(np.hypot(x1 - x0, y1 - y0))
        dx, dy = (x1 - x0) / length, (y1 - y0) / length
        if dx < 0 or (dx == 0 and dy < 0):
            dx, dy = -dx, -dy
        offset = (x0 - cx) * -dy + (y0 - cy) * dx  # signed distance from the centre
        along = sorted(((x0 - cx) * dx + (y0 - cy) * dy, (x1 - cx) * dx + (y1 - cy) * dy))
        found.append((dx, dy, offset, along))
    lines: list[Line] = []
    for i, (dx, dy, offset, along) in enumerate(found):
        for ex, ey, other, far in found[i + 1 :]:
            if _turn(dx, dy, ex, ey) > ANGLE or abs(offset - other) > OFFSET:
                continue
            if not (along[1] < far[0] or far[1] < along[0]):
                continue  # overlapping: one piece of one side
            if (along[0] + along[1]) * (far[0] + far[1]) >= 0:
                continue  # both on one side of the hole: not across it
            mx, my = (dx + ex) / 2, (dy + ey) / 2
            norm = float(np.hypot(mx, my))
            line = Line(mx / norm, my / norm, (offset + other) / 2)
            if _crosses(line, hole, cy, cx) and not any(_same(line, kept) for kept in lines):
                lines.append(line)
    return _thick(lines)[:MOST] if len(lines) <= MOST else []


def _turn(ax: float, ay: float, bx: float, by: float) -> float:
    """The angle between two directions, either way round (degrees)."""
    return float(np.degrees(np.arccos(np.clip(abs(ax * bx + ay * by), 0.0, 1.0))))


def _crosses(line: Line, hole: np.ndarray, cy: float, cx: float) -> bool:
    """Whether the line runs through the hole."""
    h, w = hole.shape
    t = np.arange(-(h + w), h + w)
    x = np.rint(cx - line.dy * line.offset + line.dx * t).astype(int)
    y = np.rint(cy + line.dx * line.offset + line.dy * t).astype(int)
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    return bool(hole[y[inside], x[inside]].any())


def _same(a: Line, b: Line) -> bool:
    return _turn(a.dx, a.dy, b.dx, b.dy) <= ANGLE and abs(a.offset - b.offset) <= OFFSET


def _thick(lines: list[Line]) -> list[Line]:
    """Parallel lines close together are the two edges of one thick line: one band."""
    lines = sorted(lines, key=lambda line: line.offset)
    merged: list[Line] = []
    for line in lines:
        last = merged[-1] if merged else None
        if (
            last is not None
            and _turn(last.dx, last.dy, line.dx, line.dy) < ANGLE
            and line.offset - (last.offset + last.above) < THICK
        ):
            top = line.offset + line.above
            merged[-1] = Line(last.dx, last.dy, last.offset, last.below, top - last.offset)
        else:
            merged.append(line)
    return merged


def carry_lines(
    rgb: np.ndarray, hole: np.ndarray, deep: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The picture with the lines crossing the hole painted in (and `deep`, the same
    picture at 16 bits, painted the same way), and what is left of the hole."""
    lines = crossing_lines(rgb, hole)
    if not lines:
        return rgb, hole, deep
    grey = cv2.cvtColor(np.ascontiguousarray(rgb[..., :3]), cv2.COLOR_RGB2GRAY)
    painter = _Painter(rgb, hole, deep)
    ys, xs = np.nonzero(hole)
    ring = dilate(hole, int(np.clip(0.6 * np.sqrt(len(ys)), 10, 120))) & ~hole
    for found in lines:
        line = _profiled(found, grey, ring, painter.cy, painter.cx, float(np.sqrt(len(ys))))
        painter.paint(line, ring, 0.8)
    return painter.out, painter.rest, painter.deep_out


#: out-of-focus ground whose shapes all run one way (a blurred horizon or treeline, bands
#: of water, a sky's gradient) is filled along them when the ring's structure (its
#: structure tensor's coherence, 0..1) is at least this one-way
COHERENT = 0.6


def _one_way(rgb: np.ndarray, ring: np.ndarray) -> tuple[float, float] | None:
    """The direction (unit, x and y) the shapes in the ring run, where they all run
    one way (COHERENT); None where they do not."""
    grey = cv2.GaussianBlur(
        cv2.cvtColor(np.ascontiguousarray(rgb[..., :3]), cv2.COLOR_RGB2GRAY).astype(np.float32),
        (0, 0),
        2.0,
    )
    gx, gy = cv2.Sobel(grey, cv2.CV_32F, 1, 0)[ring], cv2.Sobel(grey, cv2.CV_32F, 0, 1)[ring]
    jxx, jyy, jxy = float((gx * gx).mean()), float((gy * gy).mean()), float((gx * gy).mean())
    if jxx + jyy < 1e-6:
        return None
    if np.hypot(jxx - jyy, 2 * jxy) / (jxx + jyy) < COHERENT:
        return None
    across = 0.5 * np.arctan2(2 * jxy, jxx - jyy)  # the direction brightness changes
    dx, dy = float(-np.sin(across)), float(np.cos(across))
    if dx < 0 or (dx == 0 and dy < 0):
        dx, dy = -dx, -dy
    return dx, dy


def fill_along(
    rgb: np.ndarray, hole: np.ndarray, deep: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Soft ground filled along the way its shapes run: each hole pixel the blend of
    the ground where that direction leaves the hole either side (read a little way out,
    past an object's soft fringe), with the photo's grain; a blurred treeline carries
    on straight instead of a disc of its mean colour. None where the ring's shapes do
    not run one way (isolated bokeh discs) or the direction leaves the picture."""
    size = float(np.sqrt(hole.sum()))
    if size < 4:
        return None
    ring = dilate(hole, int(np.clip(0.35 * size, 6, 120))) & ~dilate(hole, 2)
    way = _one_way(rgb, ring)
    if way is None:
        return None
    dx, dy = way
    painter = _Painter(rgb, hole, deep)
    reach = float(hole.shape[0] + hole.shape[1])
    skip = max(2.0, 0.04 * size)
    painter.paint(Line(dx, dy, 0.0, reach, reach), ring, 1.0, skip)
    if painter.rest.any():
        return None
    return painter.out, painter.deep_out


class _Painter:
    """Paints bands of the hole along lines, in the picture and its 16-bit twin: each
    picture's colours in float (hole pixels the nearest ground's) and finest detail
    worked out once for every line."""

    def __init__(self, rgb: np.ndarray, hole: np.ndarray, deep: np.ndarray | None) -> None:
        self.hole = hole
        self.out = rgb.copy()
        self.deep_out = None if deep is None else deep.copy()
        nearest = nearest_of(~hole, hole)
        self.sources = [(self.out, rgb, *_colours(rgb, hole, nearest))]
        if deep is not None and self.deep_out is not None:
            self.sources.append((self.deep_out, deep, *_colours(deep, hole, nearest)))
        self.ys, self.xs = np.nonzero(hole)
        self.cy, self.cx = float(self.ys.mean()), float(self.xs.mean())
        self.rest = hole.copy()

    def paint(self, line: Line, ring: np.ndarray, usable_share: float, skip: float = 0.0) -> None:
        """The line's band painted by blending, along the line, the picture where it
        leaves the hole either side (`skip` pixels further out); nothing where less
        than `usable_share` of the band has ground both ways (the line leaves the
        picture)."""
        ys, xs = self.ys, self.xs
        across = (xs - self.cx) * -line.dy + (ys - self.cy) * line.dx - line.offset
        band = (across >= -line.below) & (across <= line.above)
        if not band.any():
            return
        by, bx = ys[band], xs[band]
        da, dz = (_beyond(self.hole, by, bx, line, sign) for sign in (-1.0, 1.0))
        usable = np.isfinite(da) & np.isfinite(dz)
        if usable.mean() < usable_share:
            return  # the line leaves the picture: nothing to carry it to
        by, bx, da, dz = by[usable], bx[usable], da[usable], dz[usable]
        weight = (dz / np.maximum(da + dz, 1e-6))[:, None]  # near the first end: 1
        nearer = np.where(da <= dz, -1.0, 1.0)
        for target, source, colours, detail in self.sources:
            first = _around(colours, by, bx, da + skip, line, -1.0)
            last = _around(colours, by, bx, dz + skip, line, 1.0)
            grain = _grain(detail, by, bx, da + skip, dz + skip, nearer, line)
            value = first * weight + last * (1 - weight) + grain
            # no brighter or darker than the line's profile outside, but for grain: a
            # grain tap a pixel off across a sharp edge adds the edge's own step (a
            # bright rim along a carried shadow's edge)
            limit = GRAIN * np.median(np.abs(detail[ring]), axis=0) + 1.0
            ends = np.concatenate([first, last])
            value = np.clip(value, ends.min(axis=0) - limit, ends.max(axis=0) + limit)
            top = np.iinfo(source.dtype).max
            target[by, bx] = np.clip(np.rint(value), 0, top).astype(source.dtype)
        self.rest[by, bx] = False


def _profiled(
    line: Line, grey: np.ndarray, ring: np.ndarray, cy: float, cx: float, size: float
) -> Line:
    """The line with its band as wide as the photo shows it: across the line, outside
    the hole, how far either side the brightness still differs from the level it
    settles to (a thick line's body, a soft glow, an edge's blur), at least HALF_BAND
    and at most an eighth of the hole's size past the found edges."""
    most = float(np.clip(0.12 * size, 6.0, 30.0))
    ry, rx = np.nonzero(ring)
    across = (rx - cx) * -line.dy + (ry - cy) * line.dx - line.offset
    near = np.abs(across) <= line.below + line.above + most
    bins = np.rint(across[near]).astype(int)
    values = grey[ry[near], rx[near]].astype(np.float64)
    if not len(bins):
        return line
    low = int(bins.min())
    counts = np.bincount(bins - low)
    sums = np.bincount(bins - low, weights=values)
    offsets = np.arange(len(counts)) + low
    enough = counts >= 3
    if enough.sum() < 6:
        return line
    profile, offsets = sums[enough] / counts[enough], offsets[enough]

    def reach(side: float, edge: float) -> float:
        beyond = offsets * side > edge
        if beyond.sum() < 3:
            return edge
        far = offsets * side >= edge + 0.6 * most
        level = float(np.median(profile[far])) if far.any() else float(profile[beyond][-1])
        spread = float(np.abs(profile - level).max())
        tolerance = max(4.0, 0.15 * spread)
        apart = beyond & (np.abs(profile - level) > tolerance)
        return (
            float(np.clip(np.abs(offsets[apart]).max() + 1, edge, edge + most))
            if apart.any()
            else edge
        )

    return Line(line.dx, line.dy, line.offset, reach(-1.0, line.below), reach(1.0, line.above))


def _colours(
    picture: np.ndarray, hole: np.ndarray, nearest: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A picture's colours in float, each hole pixel given the colour of the nearest
    pixel outside it (nearest_of), and its finest detail (what a blur of a pixel
    and a half takes away). So what a line carries comes from the ground only: a read
    between pixels at the hole's edge, or past a sliver of ground between two parts of
    the object (a broccoli's stems), never picks up the object's own colour."""
    colours = np.ascontiguousarray(picture[..., :3]).astype(np.float32)
    flat = colours.reshape(-1, 3)
    colours[hole] = flat[nearest]
    return colours, colours - cv2.GaussianBlur(colours, (0, 0), 1.5)


def _grain(
    detail: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    first: np.ndarray,
    last: np.ndarray,
    nearer: np.ndarray,
    line: Line,
) -> np.ndarray:
    """The photo's grain for the carried band: its finest `detail` (_colours) mirrored
    from past the nearer end of the line, each pixel as far out as it is in, so the
    band is not a smooth ribbon of repeated pixels."""
    reach = np.where(nearer < 0, first, last)
    steps = nearer * (2 * reach + 0.5)  # past the border by as much as the pixel is inside
    x, y = xs + steps * line.dx, ys + steps * line.dy
    mirrored = sample_at(detail, x, y, cv2.INTER_NEAREST, cv2.BORDER_REFLECT_101)
    return mirrored.astype(np.float64)


def _beyond(
    hole: np.ndarray, ys: np.ndarray, xs: np.ndarray, line: Line, sign: float
) -> np.ndarray:
    """From each pixel along the line (one way): how far the first pixel outside the
    hole is (inf where the picture ends first)."""
    h, w = hole.shape
    distance = np.full(len(ys), np.inf)
    going = np.ones(len(ys), bool)
    for step in range(1, 2 * (h + w)):
        if not going.any():
            break
        idx = np.flatnonzero(going)
        y = np.rint(ys[idx] + sign * step * line.dy).astype(int)
        x = np.rint(xs[idx] + sign * step * line.dx).astype(int)
        off = (y < 0) | (y >= h) | (x < 0) | (x >= w)
        going[idx[off]] = False
        idx, y, x = idx[~off], y[~off], x[~off]
        out = ~hole[y, x]
        distance[idx[out]] = step
        going[idx[out]] = False
    return distance


def _around(
    colours: np.ndarray,
    ys: np.ndarray,
    xs: np.ndarray,
    distance: np.ndarray,
    line: Line,
    sign: float,
) -> np.ndarray:
    """The picture's colour (`colours`, float) `distance` pixels along the line from
    each pixel (and the next two pixels further out, averaged: its grain evened out),
    sampled between pixels (bilinear), so a line's profile is carried without a
    staircase."""
    total = np.zeros((len(ys), 3), np.float64)
    for step in range(3):
        reach = sign * (distance + step + 0.5)
        x, y = xs + reach * line.dx, ys + reach * line.dy
        total += sample_at(colours, x, y, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE)
    return total / 3.0
