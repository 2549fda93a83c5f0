"""A sky's edge and a reference photo's sky (offline, no model), for the sky tools and the
checks of a replaced sky alike.

Where the sky ends is settled on a copy of about two megapixels: the found sky (kit/
sky.py) is certain well inside, what lies well outside it is not sky, and between the
two the watershed of the picture's edges decides (Meyer's flooding, OpenCV), so the
line follows blades, branches, roofs and the horizon rather than the finder's coarse
outline. What stands in a sky (a mast, a wire, a blade) has far more fine detail than
the sky around it. A reference's sky is the band of rows at its top that its sky
fills, what stands in it filled in from the sky around it.
"""

from __future__ import annotations

import cv2
import numpy as np

from layerpath.errors import BadInput
from layerpath.kit.imaging import rgb, shrunk, small_copy, watershed
from layerpath.kit.regions import full_size_mask
from layerpath.kit.sky import FOREIGN, find_sky, sky_alone, sky_coloured, sky_model

#: the share of a row a reference's sky must fill for the row to count as sky
ROW_SKY = 0.85
#: the least share of the reference's height its sky must have to be used
LEAST_SKY = 0.12
#: pixels the sky's edge is settled at
EDGE_PIXELS = 2_000_000
#: how far from the found sky's outline its true edge may lie, as a share of the
#: picture's longer side
REACH = 0.03
#: how many times a found sky's typical fine detail marks what stands in it (measured
#: on a launch pad's masts against a sky, and a storm's clouds: 12 % and none of
#: the sky above that at 5)
DETAILED = 5.0
#: the share of a piece left out of a reference's found sky that must be of a sky's
#: colours for it to count as floating in the sky (a cloud)
FLOATING = 0.8
#: the least share of a reference's sky band a stretch with nothing in it must cover
#: to be used alone (else what stands in the sky is filled in)
CLEAR_SHARE = 0.3


def working_copies(picture: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A copy of about EDGE_PIXELS of the picture (RGB) and of its mask."""
    h, w = mask.shape
    scale = min(1.0, float(np.sqrt(EDGE_PIXELS / max(1, h * w))))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(np.ascontiguousarray(picture), size, interpolation=cv2.INTER_AREA)
    return small, cv2.resize(mask.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0


def fine_detail(picture: np.ndarray) -> np.ndarray:
    """How much fine detail each pixel has (the grey picture's Laplacian, its size
    averaged over a few pixels): a mast, a lattice, a wire have much; a sky, its clouds
    included, has little."""
    grey = cv2.cvtColor(np.ascontiguousarray(picture), cv2.COLOR_RGB2GRAY).astype(np.float32)
    laplace = cv2.Laplacian(cv2.GaussianBlur(grey, (0, 0), 0.7), cv2.CV_32F)
    return cv2.GaussianBlur(np.abs(laplace), (0, 0), 1.5)


def things_in(picture: np.ndarray, sky: np.ndarray) -> np.ndarray:
    """What stands in a found sky (bool): pixels with far more fine detail than the sky
    around them has (DETAILED times its median, and a few grey levels at least)."""
    detail = fine_detail(picture)
    if not sky.any():
        return np.zeros(sky.shape, bool)
    return (detail > max(DETAILED * float(np.median(detail[sky])), 3.0)) & sky


def sky_edge(
    picture: np.ndarray,
    found: np.ndarray,
    objects: bool = False,
    foreign: float = FOREIGN,
    within: float = REACH,
) -> np.ndarray:
    """The sky (bool) with its edge settled by the watershed of the picture's edges
    between the sky certain well inside `found` and what lies well outside it. With
    `objects`, what stands in the found sky (a mast, a rocket, a wire, a blade: fine
    detail, or a colour `foreign` or further from the sky's there and no sky's colour,
    which a softened finder may take for sky) is not sky either; a cloud is. `within`:
    how far from the found outline (a share of the longer side) the edge may lie."""
    reach = max(3, round(within * max(found.shape)))
    kernel = np.ones((3, 3), np.uint8)
    inside = cv2.erode(found.astype(np.uint8), kernel, iterations=max(1, reach // 3)) > 0
    outside = cv2.dilate(found.astype(np.uint8), kernel, iterations=reach) == 0
    if objects:
        standing = things_in(picture, found)
        if found.sum() >= 64:  # and what is of another colour than the sky around it,
            # and of no sky's (a cloud, white against the blue, is of the sky)
            lab = cv2.cvtColor(picture.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
            foreign_colour = np.linalg.norm(lab - sky_model(lab, found), axis=2) > foreign
            standing |= foreign_colour & ~sky_coloured(picture)
        standing = cv2.dilate(standing.astype(np.uint8), kernel) > 0
        outside |= standing
        inside &= ~cv2.dilate(standing.astype(np.uint8), kernel, iterations=2).astype(bool)
    if not inside.any():
        return found.astype(bool)
    flooded = watershed(picture, inside, outside)
    return (flooded == 1) | (inside & (flooded == -1))  # (a boundary pixel between two sky pixels)


def sky_of(reference: np.ndarray) -> np.ndarray:
    """The reference's sky: the rows at its top its sky fills (RGB, full resolution),
    what stands in them (a mast, a blade, a roof's corner) filled in from the sky
    around it. A picture of the sky alone is all sky. A clear error when it shows too
    little sky. A sky alone of any colour (a dark evening, a sunset's glow: colours the
    sky finder does not take for sky in a photo) is all sky."""
    picture = rgb(reference)
    if sky_alone(picture):
        return picture.copy()
    small = small_copy(picture, 640)
    found = with_what_floats(small, find_sky(small))
    rows = found.mean(axis=1) >= ROW_SKY
    depth = int(np.argmin(rows)) if not rows.all() else len(rows)
    if depth < LEAST_SKY * len(rows):
        raise BadInput(
            "The reference shows too little sky to use (a sky fills its top rows: blue or "
            "overcast, smooth); give a photo whose upper part is sky, or a picture of the "
            "sky alone."
        )
    bottom = round(depth / len(rows) * picture.shape[0])
    band = picture[:bottom].copy()  # (the reference itself stays as it is)
    work, mask = working_copies(band, full_size_mask(found, picture.shape)[:bottom])
    # (strict: a faint, blurred blade in a reference sky would float in the new one)
    other = ~sky_edge(work, mask, objects=True, foreign=FOREIGN / 2)
    if not other.any():
        return band
    margin = 2 * max(2, round(0.006 * max(other.shape))) + 1  # (a soft, blurred edge too)
    hole = cv2.dilate(other.astype(np.uint8), np.ones((margin, margin), np.uint8))
    clear = largest_rectangle(hole == 0)
    if clear is not None and clear[2] * clear[3] >= CLEAR_SHARE * hole.size:
        # the largest stretch of sky with nothing in it: no filling needed
        x, y, w, h = (round(v * band.shape[1] / hole.shape[1]) for v in clear)
        inset = max(2, round(0.02 * max(w, h)))  # (off the rectangle's rounded edges)
        return band[y + inset : y + h - inset, x + inset : x + w - inset].copy()
    # what is not sky, with a margin for its soft edge, filled from the sky around it
    # on the working copy (a sky is smooth) and put back in its place only
    filled = cv2.inpaint(work, hole, 5, cv2.INPAINT_TELEA)
    h, w = band.shape[:2]
    filled = cv2.resize(filled, (w, h), interpolation=cv2.INTER_LINEAR)
    covered = cv2.resize(hole, (w, h), interpolation=cv2.INTER_LINEAR) > 0
    band[covered] = filled[covered]
    return band


def with_what_floats(picture: np.ndarray, found: np.ndarray) -> np.ndarray:
    """A found sky (bool) with what floats in it: every piece the finder left out that
    does not reach the picture's bottom row (the ground and what stands on it do) and is
    of a sky's colours nearly all over (FLOATING: a cumulus; not a stain on a slide).
    A reference's clouds are of its sky."""
    pieces, labels = cv2.connectedComponents((~found).astype(np.uint8), connectivity=8)
    coloured = np.bincount(labels.ravel(), sky_coloured(picture).ravel(), pieces)
    floats = coloured >= FLOATING * np.maximum(1, np.bincount(labels.ravel(), minlength=pieces))
    floats[labels[-1]] = False
    floats[0] = False  # (the label of the sky itself)
    return found | floats[labels]


def largest_rectangle(free: np.ndarray) -> tuple[int, int, int, int] | None:
    """The largest upright rectangle (x, y, width, height) of True pixels, worked out on
    a copy about 200 pixels wide (the largest rectangle under each row's histogram of
    free pixels above it, with a stack); None when there is none."""
    scale = min(1.0, 200 / max(free.shape))
    size = (max(1, round(free.shape[1] * scale)), max(1, round(free.shape[0] * scale)))
    small = shrunk(free, size, whole=True)
    heights = np.zeros(small.shape[1] + 1, np.int32)
    best: tuple[int, int, int, int] | None = None
    for row in range(small.shape[0]):
        heights[:-1] = np.where(small[row], heights[:-1] + 1, 0)
        stack: list[int] = []
        for col, height in enumerate(heights):
            while stack and heights[stack[-1]] >= height:
                top = heights[stack.pop()]
                left = stack[-1] + 1 if stack else 0
                if top and (best is None or top * (col - left) > best[2] * best[3]):
                    best = (left, row - top + 1, col - left, int(top))
            stack.append(col)
    if best is None:
        return None
    x, y, w, h = (round(v / scale) for v in best)
    return x, y, w, h
