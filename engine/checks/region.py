"""Is a region a finder found the right one? Measured on the picture, not taken from the
finder: a region edit is done only on a region these measures vouch for, and a doubtful
one is refused with what to do instead (select it, or name a mask after it).

- Its edge lies on a change in the picture: along a right region's outline the colours
  just inside differ from those just outside (a sky cut by a straight row, or a band
  left along a ridge, runs through one colour).
- A sky's edge lies on the picture's edges and no sky carries on past it: the pixels
  just outside are not of the sky's colour nearby and smooth (a sky that stops at a
  row, or leaves clouds out, fails); a ceiling's lamps or a bokeh's smooth light in no
  sky's place fail the first measures.

Measured on a copy of WORK_SIDE pixels on its long side, where a region's outline is a
few pixels wide at any photo size.
"""

from __future__ import annotations

import cv2
import numpy as np

from layerpath.engine.checks.verdict import Verdict, verdict
from layerpath.tools.sky_region import clouds_in, gradient, sky_coloured, sky_model, texture

WORK_SIDE = 512
#: pixels (at WORK_SIDE) on each side of an outline whose colours are compared
SIDE = 4
#: the colour difference (CIELAB) across an outline that makes it a real edge
CHANGE = 8.0
#: the share of an outline that must lie on a real edge
ON_EDGES = 0.65
#: the share of a sky's outline that must lie on a gradient past STRONG
SKY_ON_GRADIENT = 0.6
#: a gradient (grey levels per pixel, at WORK_SIDE) past which a sky's outline is an edge
STRONG = 8.0
#: the share of the band outside a sky that may look like that sky (smooth, its colour)
SKY_LEFT = 0.2
#: the sky further away that may be left out, as a share of the found sky
SKY_ELSEWHERE = 0.05
#: fine detail (tools/sky_region.py's texture) under which a piece of sky is smooth
SMOOTH = 0.012


def _work(picture: np.ndarray, region: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h, w = region.shape[:2]
    scale = min(1.0, WORK_SIDE / max(h, w))
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    rgb = np.ascontiguousarray(picture[..., :3])
    if rgb.dtype == np.uint16:
        rgb = (rgb >> 8).astype(np.uint8)
    small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    inside = cv2.resize(region.astype(np.float32), size, interpolation=cv2.INTER_AREA) > 0.5
    return small, inside


def _mean_within(values: np.ndarray, where: np.ndarray, sigma: float) -> np.ndarray:
    weight = cv2.GaussianBlur(where.astype(np.float32), (0, 0), sigma)
    spread = cv2.GaussianBlur(values * where[..., None], (0, 0), sigma)
    return spread / np.maximum(weight, 1e-4)[..., None]


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
    inside = _mean_within(lab, region, SIDE)
    outside = _mean_within(lab, ~region, SIDE)
    return float((np.linalg.norm(inside - outside, axis=2)[edge] > CHANGE).mean())


def sky_measures(picture: np.ndarray, sky: np.ndarray) -> tuple[float, float, float]:
    """(the share of the sky's outline on a gradient past STRONG, or past six times the
    sky's own; the share of a band just outside it that looks like the sky nearby:
    within 6 of its colour, CIELAB, and smooth; the sky left out further away, as a
    share of the found sky: smooth patches of a sky's colour within 10 of the found
    sky's there, no lower than it reaches, and clouds it left out)."""
    grad = gradient(picture)
    kernel = np.ones((3, 3), np.uint8)
    inner = cv2.erode(sky.astype(np.uint8), kernel, iterations=3) > 0
    strong = max(STRONG, 6.0 * float(np.median(grad[inner]))) if inner.any() else STRONG
    edge = outline(sky)
    peak = cv2.dilate(grad, np.ones((5, 5), np.uint8))
    gradient_share = float((peak[edge] > strong).mean()) if edge.any() else 1.0
    grown = cv2.dilate(sky.astype(np.uint8), kernel, iterations=6) > 0
    band = grown & ~(cv2.dilate(sky.astype(np.uint8), kernel, iterations=2) > 0)
    lab = cv2.cvtColor(picture.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    near = _mean_within(lab, sky, max(2.0, 0.02 * max(sky.shape)))
    smooth = grad < strong
    alike = (np.linalg.norm(lab - near, axis=2) < 6.0) & smooth
    left = float(alike[band].mean()) if band.any() else 0.0
    patches = (np.linalg.norm(lab - sky_model(lab, sky), axis=2) < 10.0) & smooth
    patches &= sky_coloured(picture) & ~grown
    patches[int(np.nonzero(sky.any(axis=1))[0].max()) + 1 :] = False
    patches = cv2.morphologyEx(patches.astype(np.uint8), cv2.MORPH_OPEN, kernel) > 0
    # and clouds left out: smooth pieces of a sky's colour bordered mostly by the sky
    patches |= clouds_in(sky, sky_coloured(picture) & (texture(picture) < SMOOTH))
    return gradient_share, left, float(patches.sum()) / max(1.0, float(sky.sum()))


def check_found_region(what: str | None, picture: np.ndarray, region: np.ndarray) -> Verdict:
    """Whether a region a finder found for `what` ('sky', 'background', 'subject', ...)
    is right, from the picture (RGBA or RGB, any depth) and the region (bool, its size)."""
    share = float(region.mean()) if region.size else 0.0
    if share < 0.001:
        return Verdict(0.0, "the region found is empty", {"the region is empty": 2.0})
    if share > 0.98:
        return Verdict(
            0.0, "the region found is the whole picture", {"the region is the whole picture": 2.0}
        )
    small, inside = _work(picture, region)
    if not inside.any() or inside.all():
        return Verdict(0.0, "the region found is too small to judge", {"the region is empty": 2.0})
    defects = {
        "its edge does not follow the picture": max(0.0, ON_EDGES - on_edges(small, inside)) / 0.15
    }
    if what == "sky":
        on_gradient, left, elsewhere = sky_measures(small, inside)
        defects["the sky's edge runs through smooth sky"] = (
            max(0.0, SKY_ON_GRADIENT - on_gradient) / 0.15
        )
        defects["sky left out along its edge"] = max(0.0, left - SKY_LEFT) / 0.1
        defects["sky left out elsewhere"] = max(0.0, elsewhere - SKY_ELSEWHERE) / 0.05
    return verdict(defects)
