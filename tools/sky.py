"""A sky from a reference photo put in place of the photo's own (offline, no model).

Where the sky ends is settled on a copy of about two megapixels: the found sky (tools/
sky_region.py: its border where the gradients best split sky and ground colours) is
certain well inside, what lies well outside it is not sky, and between the two the
watershed of the picture's edges decides (Meyer's flooding, OpenCV), so the line
follows blades, branches, roofs and the horizon rather than the finder's coarse
outline. The reference's sky is the band of rows at its top that its sky fills, what
stands in it (a mast, a blade) filled in from the sky around it; scaled to cover the
photo's sky, its lowest rows meet the photo's horizon. Along the line a pixel moves by
its share of sky times the difference between the new sky and the old one behind it,
so what stands in front keeps its colour and the old sky leaves no halo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import BadInput, ToolFailed
from layerpath.kit.imaging import mask_box, mean_near, rgb, shrunk, with_rgb
from layerpath.kit.regions import crop, grow_box, paste
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.adjust import follows_edges
from layerpath.tools.background import small_copy
from layerpath.tools.base import Tool
from layerpath.tools.finders import full_size_mask
from layerpath.tools.sky_region import FOREIGN, find_sky, sky_alone, sky_coloured, sky_model

#: the share of a row a reference's sky must fill for the row to count as sky
ROW_SKY = 0.85
#: the least share of the reference's height its sky must have to be used
LEAST_SKY = 0.12
#: how far from a found sky's outline, which lies on the photo's edges, its edge may
#: lie (a share of the longer side: 7 px at 2 MP)
ON_EDGES_REACH = 0.004
#: pixels the sky's edge is settled at
EDGE_PIXELS = 2_000_000
#: how far from the found sky's outline its true edge may lie, as a share of the
#: picture's longer side
REACH = 0.03
#: how far (CIELAB) a pixel past the sky's edge may lie from the old sky's colour
#: there and still be all sky, and from how far it is none
SKY_LIKE, SKY_UNLIKE = 4.0, 8.0
#: how many times a found sky's typical fine detail marks what stands in it (measured
#: on a launch pad's masts against a sky, and a storm's clouds: 12 % and none of
#: the sky above that at 5)
DETAILED = 5.0
#: the least share of a reference's sky band a stretch with nothing in it must cover
#: to be used alone (else what stands in the sky is filled in)
CLEAR_SHARE = 0.3


def _working(picture: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    markers = np.zeros(found.shape, np.int32)
    markers[inside] = 1
    markers[outside] = 2
    soft = cv2.GaussianBlur(picture, (0, 0), 0.8)
    flooded = cv2.watershed(np.ascontiguousarray(soft), markers)
    sky = flooded == 1
    return sky | (inside & (flooded == -1))  # (a boundary pixel between two sky pixels)


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
    found = find_sky(small)
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
    work, mask = _working(band, full_size_mask(found, picture.shape)[:bottom])
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


def covering(sky: np.ndarray, width: int, height: int) -> np.ndarray:
    """The reference's sky scaled to cover width x height, its horizon (lowest rows)
    kept at the bottom and its middle at the middle."""
    h, w = sky.shape[:2]
    scale = max(width / w, height / h)
    size = (max(width, round(w * scale)), max(height, round(h * scale)))
    scaled = cv2.resize(sky, size, interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)
    left = (size[0] - width) // 2
    return scaled[size[1] - height :, left : left + width]


def replaced(
    picture: np.ndarray, mask: np.ndarray, new: np.ndarray, within: float = REACH
) -> np.ndarray:
    """The picture (RGB) with its sky (found in `mask`) replaced by `new` (RGB, same
    size): the sky's edge settled on a working copy (sky_edge) and softened by a pixel
    there; each pixel moves by its share of sky times the difference between the new
    sky and the old sky behind it (the sky's colour carried in from around it), so a
    blade's soft edge keeps the blade's colour; in the sky itself, the new sky. `within`:
    how far from the mask's outline its true edge may lie (a share of the longer side:
    a rough mask's far, a found sky's, already on the photo's edges, a few pixels)."""
    work, coarse = _working(picture, mask)
    sky = sky_edge(work, coarse, objects=True, within=within)
    if sky.sum() < 64:
        raise ToolFailed("No sky was left to replace once its edge was settled.")
    values = work.astype(np.float32)
    old = mean_near(values, sky, max(2.0, 0.01 * max(sky.shape)))
    # along the settled edge a pixel is part sky, part what stands there: how far its
    # colour lies from that thing's colour towards the old sky's (a colour-line matte)
    kernel = np.ones((3, 3), np.uint8)
    edge = (cv2.dilate(sky.astype(np.uint8), kernel) > 0) & ~(
        cv2.erode(sky.astype(np.uint8), kernel) > 0
    )
    front = mean_near(values, ~sky, 2.0)
    line = old - front
    along = ((values - front) * line).sum(axis=2) / np.maximum((line * line).sum(axis=2), 1.0)
    share = np.where(edge, np.clip(along, 0.0, 1.0), sky.astype(np.float32))
    # the old sky showing past the settled edge (a fringe along a blade, the gaps in a
    # lattice) is sky as far as its colour is the old sky's colour there
    lab = cv2.cvtColor(work.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    behind = cv2.cvtColor(old / 255.0, cv2.COLOR_RGB2LAB)
    alike = np.linalg.norm(lab - behind, axis=2)
    reach = max(3, round(REACH * max(sky.shape)))
    beyond = cv2.distanceTransform((~sky).astype(np.uint8), cv2.DIST_L2, 5)
    fringe = np.clip((SKY_UNLIKE - alike) / (SKY_UNLIKE - SKY_LIKE), 0.0, 1.0)
    share = np.maximum(share, fringe * (beyond <= reach))
    h, w = mask.shape
    share = cv2.resize(share, (w, h), interpolation=cv2.INTER_LINEAR)[..., None]
    old = cv2.resize(old, (w, h), interpolation=cv2.INTER_LINEAR)
    out = picture.astype(np.float32) + share * (new.astype(np.float32) - old)
    inside = share[..., 0] >= 0.999
    out[inside] = new[inside]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


class SkyReplace(Tool):
    """The photo's sky replaced by a reference photo's ('replace the sky with the one
    in ref'); its mask from a finder or the user's."""

    def declines(self, ctx: ToolContext) -> str | None:
        if (ctx.target or "") not in ("sky", "the sky"):
            return "it replaces skies only"
        if (ctx.to or "").lstrip("@") not in ctx.references:
            return "it needs a reference photo with the new sky ('the one in ref')"
        return None

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        reason = self.declines(ctx)
        if reason is not None:
            raise ToolFailed(f"sky_replace: {reason}.")
        image, mask = inputs[ArtifactKind.IMAGE], inputs[ArtifactKind.MASK].astype(bool)
        bounds = mask_box(mask)
        if bounds is None:
            raise ToolFailed("The sky to replace is empty.")
        # the edge may lie past the found sky (a fringe it left out)
        reach = max(8, round(REACH * max(image.shape[:2])))
        window = grow_box(bounds, reach, image.shape)
        new = covering(
            sky_of(ctx.references[(ctx.to or "").lstrip("@")]), window.width, window.height
        )
        part = crop(image, window)
        within = ON_EDGES_REACH if follows_edges(ctx) else REACH
        changed = replaced(rgb(part), crop(mask, window), new, within)
        return ToolResult(
            {ArtifactKind.IMAGE: paste(image, window, with_rgb(part, changed))}, window=window
        )
