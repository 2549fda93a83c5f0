"""The colour regions of a picture and the lines that carry across a hole: a k-means
palette in CIELAB, connected regions of alike colours, and which regions of the ground
around a hole run on through it (rays marched across the hole from its ring), and how
unlike the picture's border each pixel is (border saliency). The removal and region
checks and the fill, subject and framing tools read them."""

from __future__ import annotations

import cv2
import numpy as np

from layerpath.kit.imaging import dilate, nearest_of, shrunk


def _kmeans(
    points: np.ndarray, count: int, rng: np.random.Generator, rounds: int = 15
) -> np.ndarray:
    """k-means centres (k-means++ start, Lloyd rounds), repeatable from `rng`."""
    centres = [points[rng.integers(len(points))]]
    for _ in range(count - 1):
        nearest = ((points[:, None, :] - np.array(centres)[None]) ** 2).sum(axis=2).min(axis=1)
        total = float(nearest.sum())
        pick = (
            rng.choice(len(points), p=nearest / total) if total > 0 else rng.integers(len(points))
        )
        centres.append(points[pick])
    found = np.array(centres, np.float32)
    points = points.astype(np.float64)
    for _ in range(rounds):
        owner = _nearest(points, found)
        members = np.bincount(owner, minlength=count)
        for channel in range(points.shape[1]):
            sums = np.bincount(owner, weights=points[:, channel], minlength=count)
            taken = members > 0
            found[taken, channel] = sums[taken] / members[taken]
    return found


def _nearest(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each point's nearest centre: |p - c|^2 = |p|^2 - 2 p.c + |c|^2 as one matrix
    product (|p|^2, the same for every centre, left out; in float64, where no near tie
    is lost to rounding)."""
    points = points.astype(np.float64, copy=False)
    centres = centres.astype(np.float64)
    return np.argmin(-2 * points @ centres.T + (centres**2).sum(axis=1), axis=1)


#: colour clusters closer than this (CIE76 Delta E) are one region: a plain grey floor's
#: noise split in two by k-means is not two surfaces meeting at a line
ALIKE = 10.0


def alike(centres: np.ndarray, within: float = ALIKE) -> np.ndarray:
    """For each cluster, the first cluster it is alike to, closer than `within` (chains
    of alike clusters join)."""
    owner = np.arange(len(centres))
    close = np.linalg.norm(centres[:, None] - centres[None], axis=2) < within
    for a in range(len(centres)):
        for b in np.flatnonzero(close[a]):
            owner[owner == owner[b]] = owner[a]
    return owner


def regions(
    lab: np.ndarray,
    hole: np.ndarray,
    rng: np.random.Generator,
    count: int = 8,
    span: int = 96,
) -> np.ndarray:
    """Each pixel's region: the known pixels clustered by colour (colour_labels), and
    each hole pixel given the region continued across the hole (_continued, worked out
    where the hole spans at most `span` pixels), so a cup's rim, a saucer and the table
    each carry on through it."""
    labels = colour_labels(lab, ~hole, rng, count)
    border = dilate(hole, 2) & ~hole
    present = np.unique(labels[border])
    if len(present) <= 1:
        labels[hole] = present[0] if len(present) else 0
        return labels
    labels[hole] = _continued(labels, hole, span)
    return labels


def colour_labels(
    lab: np.ndarray, known: np.ndarray, rng: np.random.Generator, count: int = 8
) -> np.ndarray:
    """Every pixel's colour region: the `known` pixels clustered by colour (k-means in
    Lab, clusters of alike colour joined), each pixel given its nearest cluster, the
    labels median-filtered (no speckle)."""
    points = lab[known].reshape(-1, 3).astype(np.float32)
    if len(points) < count:
        return np.zeros(known.shape, np.int32)
    centres = _kmeans(points[:: max(1, len(points) // 20000)], count, rng)
    nearest = alike(centres)[_nearest(lab.reshape(-1, 3), centres)]
    return cv2.medianBlur(nearest.reshape(known.shape).astype(np.uint8), 5).astype(np.int32)


#: directions of the rays cast across a hole (half a turn: each ray goes both ways)
_RAYS = 16
#: lines_across: the padding's mark (off the picture) beside the hole's 1 and the ground's 0
_OFF = 2
#: lines_across: the steps taken at once
_CHUNK = 16


def _continued(labels: np.ndarray, hole: np.ndarray, most: int = 96) -> np.ndarray:
    """Each hole pixel's region, continued straight across the hole (continued_across),
    worked out on a copy where the hole spans at most about `most` pixels."""
    h, w = hole.shape
    rows, cols = np.flatnonzero(hole.any(axis=1)), np.flatnonzero(hole.any(axis=0))
    span = max(rows[-1] - rows[0], cols[-1] - cols[0]) + 1
    scale = min(1.0, most / span)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small_labels = cv2.resize(labels.astype(np.int32), size, interpolation=cv2.INTER_NEAREST)
    small_hole = cv2.resize(hole.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
    small_hole |= shrunk(hole, size)
    region = continued_across(small_labels, small_hole)
    small = small_labels.copy()
    small[small_hole] = region
    if scale >= 1.0:
        return small[hole]
    # enlarged smoothly (each region's share interpolated, the largest wins): an outline
    # that runs on through the hole stays a line, not a staircase of the copy's pixels
    present = np.unique(region)
    shares = [cv2.resize((small == k).astype(np.float32), (w, h)) for k in present]
    return present[np.argmax(np.stack(shares), axis=0)][hole]


def continued_across(labels: np.ndarray, hole: np.ndarray) -> np.ndarray:
    """Each hole pixel's region (in the order of np.nonzero(hole)), continued straight
    across the hole: of the lines through the pixel whose two ends leave the hole in the
    same region, the shortest gives its region (a wall's edge behind a ball runs on as a
    straight line, a cup's rim under a spoon), if it is nearly as short as the shortest
    line through the pixel (lines_across); any other pixel takes the nearest border's
    region."""
    hy, hx = np.nonzero(hole)
    region = labels.ravel()[nearest_of(~hole, hole)]  # the nearest known pixel's: the fallback
    agree, length, local = lines_across(labels, hole)
    best = np.argmin(length, axis=0)
    pick = np.arange(len(hy))
    found = local[best, pick]
    region[found] = agree[best, pick][found]
    return region


def lines_across(
    labels: np.ndarray,
    hole: np.ndarray,
    rays: int = _RAYS,
    depth: int = 1,
    longest: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of `rays` directions (half a turn) and each hole pixel (in the order of
    np.nonzero(hole)): the region both ends of the line through it leave the hole in
    (-1 where they differ), the line's length (inf where they differ), and whether the
    line counts as a continuation: it must be about as short as any line through the
    pixel (a spoon's handle lying along a cup's edge is crossed by short lines that
    disagree, and a long line along the handle, from the rim to the saucer, is no
    continuation of either). An end's region must hold for `depth` pixels beyond the
    border along the line (a shape heading into the hole, not one grazing it). Lines
    with an end more than `longest` pixels away are left out (a quicker, rougher
    answer for a long hole)."""
    sh, sw = hole.shape
    hy, hx = np.nonzero(hole)
    lengths: list[np.ndarray] = []  # per direction: the line's length through the hole
    agreed: list[np.ndarray] = []  # per direction: the region both its ends are in, or -1
    limit = 2 * (sh + sw) if longest is None else longest + 1
    # the march is made on flat indices into copies padded by `pad`: a line moves at
    # most a pixel a step, so in the _CHUNK steps taken at once it cannot leave the
    # copies once it meets the padding (OFF); the padding repeats the edge for the reads
    # past the border (as clipping to the picture would). A pixel's line at step k is
    # the pixel plus the step's rounded offset (the pixel's coordinates are whole)
    pad = max(depth, _CHUNK) + 1
    state = cv2.copyMakeBorder(
        hole.astype(np.uint8), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=_OFF
    ).ravel()
    edged = lambda a: cv2.copyMakeBorder(a, pad, pad, pad, pad, cv2.BORDER_REPLICATE)  # noqa: E731
    inside = edged(hole.astype(np.uint8)).ravel().astype(bool)
    known = edged(labels.astype(np.int32)).ravel()
    row = sw + 2 * pad
    start = (hy + pad) * row + hx + pad
    steps_taken = np.arange(1, limit)
    for angle in np.arange(rays) * np.pi / rays:
        dy, dx = np.sin(angle), np.cos(angle)
        ends = []
        for sign in (1.0, -1.0):
            moves = np.rint(sign * steps_taken * dy).astype(np.int64) * row + np.rint(
                sign * steps_taken * dx
            ).astype(np.int64)
            # the pixels past the border, one to `depth` further along the line
            past = [
                int(np.rint(sign * k * dy)) * row + int(np.rint(sign * k * dx))
                for k in range(1, depth + 1)
            ]
            steps = np.full(len(hy), np.inf)
            label = np.full(len(hy), -1, np.int32)
            which = np.arange(len(hy))  # the lines still inside the hole
            for at in range(0, len(moves), _CHUNK):  # a few steps at once
                if not len(which):
                    break
                where = start[which, None] + moves[None, at : at + _CHUNK]
                leaving = state[where] != 1
                left = leaving.any(axis=1)
                if not left.any():
                    continue
                taken = np.argmax(leaving[left], axis=1)  # the step it leaves at
                ended = where[left][np.arange(len(taken)), taken]
                out = state[ended] == 0  # left into the picture (not off its edge)
                gone, ended = which[left][out], ended[out]
                # the region a pixel past the border (not a halo the mask left)
                ahead = ended + past[0]
                beyond = np.where(inside[ahead], known[ended], known[ahead])
                for further in past[1:]:
                    beyond = np.where(known[ended + further] == beyond, beyond, -1)
                label[gone] = beyond
                steps[gone] = steps_taken[at + taken[out]]
                which = which[~left]
            ends.append((label, steps))
        (first, near), (second, far) = ends
        lengths.append(near + far)  # inf unless both ends leave the hole
        agreed.append(np.where(first == second, first, -1))
    length, agree = np.array(lengths), np.array(agreed)
    local = (agree >= 0) & (length <= 1.3 * length.min(axis=0))
    length[agree < 0] = np.inf
    return agree, length, local


def nearest_distance(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each point's (N x 3) Euclidean distance to the nearest of `centres` (M x 3): an
    N x 1 float32 array, in one pass of OpenCV's over all of them."""
    distance, _ = cv2.batchDistance(
        np.ascontiguousarray(points, np.float32),
        np.ascontiguousarray(centres, np.float32),
        cv2.CV_32F,
        normType=cv2.NORM_L2,
        K=1,
    )
    return distance


def border_saliency(small_rgb: np.ndarray) -> np.ndarray:
    """How unlike the picture's border each pixel is (0..1): the Lab distance to the
    nearest of the border's representative colours, softened, with a mild preference
    for the centre. Background usually reaches the border; a subject usually does not,
    or only at the bottom (a person, a plant)."""
    from layerpath.kit.colours import to_lab

    lab = to_lab(small_rgb)
    h, w = lab.shape[:2]
    edge = max(2, min(h, w) // 40)
    # the bottom edge is left out: subjects stand on it as often as not
    border = np.concatenate(
        [lab[:edge].reshape(-1, 3), lab[:, :edge].reshape(-1, 3), lab[:, -edge:].reshape(-1, 3)]
    )
    rng = np.random.default_rng(0)
    sample = border[rng.permutation(len(border))[:4000]]
    centres = sample[rng.choice(len(sample), min(12, len(sample)), replace=False)]
    for _ in range(8):
        owner = np.argmin(((sample[:, None] - centres[None]) ** 2).sum(axis=2), axis=1)
        centres = np.array(
            [
                sample[owner == k].mean(axis=0) if (owner == k).any() else centres[k]
                for k in range(len(centres))
            ]
        )
    distance = nearest_distance(lab.reshape(-1, 3), centres)
    unlike = cv2.GaussianBlur(distance.reshape(h, w), (0, 0), max(1.0, min(h, w) / 100))
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    centre_prior = 1.0 - 0.5 * np.hypot((xx - w / 2) / (w / 2), (yy - h / 2) / (h / 2)) / np.sqrt(2)
    saliency = unlike * centre_prior
    return np.clip(saliency / (np.percentile(saliency, 99) + 1e-3), 0.0, 1.0)
