"""A sky from a reference photo put in place of the photo's own (offline, no model).

Where the sky ends is settled on a copy of about two megapixels (kit/sky_edge.py: the
found sky's edge moved onto the picture's own edges by a watershed). The reference's
sky (kit/sky_edge.py's sky_of: the band of rows at its top that its sky fills, what
stands in it filled in) is scaled to cover the photo's sky, its lowest rows meeting
the photo's horizon. Along the line a pixel moves by
its share of sky times the difference between the new sky and the old one behind it,
so what stands in front keeps its colour and the old sky leaves no halo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.imaging import mask_box, mean_near, rgb, with_rgb
from layerpath.kit.regions import crop, grow_box, paste
from layerpath.kit.sky_edge import REACH, sky_edge, sky_of, working_copies
from layerpath.kit.types import ArtifactKind, ToolContext, ToolResult
from layerpath.tools.adjust import follows_edges
from layerpath.tools.base import Tool

#: how far from a found sky's outline, which lies on the photo's edges, its edge may
#: lie (a share of the longer side: 7 px at 2 MP)
ON_EDGES_REACH = 0.004
#: how far (CIELAB) a pixel past the sky's edge may lie from the old sky's colour
#: there and still be all sky, and from how far it is none
SKY_LIKE, SKY_UNLIKE = 4.0, 8.0


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
    work, coarse = working_copies(picture, mask)
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
