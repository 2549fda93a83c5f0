"""Checks of pictures no family of its own covers: a sharpened, upscaled or grown
picture, a changed scenery, a generated result only a critic can read, and the
artefacts a step makes instead of a picture (a mask, a depth map, boxes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import cv2
import numpy as np

from layerpath.engine.judge.checks.adjust import check_adjustment
from layerpath.engine.judge.checks.removal import untouched_outside
from layerpath.engine.judge.checks.sky import check_sky_replaced
from layerpath.engine.judge.checks.verdict import Verdict
from layerpath.kit.imaging import boxes_mask, dilate, rgb
from layerpath.kit.types import Box, TextBox

if TYPE_CHECKING:
    from layerpath.engine.types import Subtask


def _gray(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(np.ascontiguousarray(rgb(image)), cv2.COLOR_RGB2GRAY).astype(np.float32)


def check_changed_in(before: np.ndarray, after: np.ndarray, boxes: list[TextBox]) -> float:
    region = dilate(boxes_mask(after.shape[:2], [b.box for b in boxes]), 2)
    diff = np.abs(rgb(before).astype(np.int16) - rgb(after).astype(np.int16)).mean(axis=2)
    changed = float(diff[region].mean()) > 8 if region.any() else False
    return (0.95 if changed else 0.0) * untouched_outside(before, after, region)


def check_sharpened(before: np.ndarray, after: np.ndarray) -> Verdict:
    """Sharper by a share a viewer sees, without the fine detail's energy jumping
    beyond six times (halos along every edge)."""
    ratio = cv2.Laplacian(_gray(after), cv2.CV_32F).var() / (
        cv2.Laplacian(_gray(before), cv2.CV_32F).var() + 1e-6
    )
    if ratio < 1.15:
        return Verdict(0.2, "hardly sharper", {"hardly sharper": 2.3})
    if ratio > 6.0:
        return Verdict(0.5, "halos along the edges", {"halos along the edges": 1.0})
    return Verdict(0.9)


def check_upscaled(before: np.ndarray, after: np.ndarray, factor: object = None) -> float:
    """Larger by the asked factor (2 when none was asked) on both sides, and the same
    picture when scaled back down."""
    h, w = before.shape[:2]
    want = int(factor) if isinstance(factor, (int, float, str)) and str(factor).isdigit() else 2
    if after.shape[:2] != (h * want, w * want):
        return 0.0
    back = cv2.resize(rgb(after), (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    drift = float(np.abs(back - rgb(before).astype(np.float32)).mean())
    return 0.9 if drift < 8 else (0.5 if drift < 20 else 0.1)


def check_outpainted(before: np.ndarray, after: np.ndarray, placement: object) -> float:
    """A larger, opaque picture holding the old one unchanged where the tool says it
    is, with no hard seam at the old edge."""
    h, w = before.shape[:2]
    if not isinstance(placement, tuple) or after.shape[0] <= h and after.shape[1] <= w:
        return 0.0
    x, y = int(placement[0]), int(placement[1])
    if not np.array_equal(after[y : y + h, x : x + w], before) or (after[..., 3] < 255).any():
        return 0.0
    grey = cv2.cvtColor(np.ascontiguousarray(rgb(after)), cv2.COLOR_RGB2GRAY).astype(np.float32)
    jumps = []
    if x > 0:
        jumps.append(np.abs(grey[y : y + h, x - 1] - grey[y : y + h, x]).mean())
    if y > 0:
        jumps.append(np.abs(grey[y - 1, x : x + w] - grey[y, x : x + w]).mean())
    if x + w < after.shape[1]:
        jumps.append(np.abs(grey[y : y + h, x + w] - grey[y : y + h, x + w - 1]).mean())
    if y + h < after.shape[0]:
        jumps.append(np.abs(grey[y + h, x : x + w] - grey[y + h - 1, x : x + w]).mean())
    return 0.8 if max(jumps, default=0.0) < 20 else 0.4


def check_scenery(
    subtask: Subtask, before: np.ndarray, after: np.ndarray, mask: np.ndarray
) -> Verdict:
    """A changed scenery that a look names ('night', 'winter', 'fog') must show that
    look's light and colour, whichever tool made it (a look offline, a diffusion model on
    a GPU); a sky from a reference photo, that sky's colours in the photo's sky; a
    scenery no look names ('a beach') only a vision critic can vouch for."""
    from layerpath.kit.looks import find_look

    if isinstance(subtask.params.get("ref_sky"), Mapping):
        return check_sky_replaced(before, after, mask, subtask.params["ref_sky"])
    found = find_look(subtask.to or "")
    if found is None or (subtask.target or "scenery") != "scenery":
        return check_generated(subtask, before, after, mask)
    asked = {"op": "look", "look": found[0].name, **subtask.params}
    return check_adjustment(asked, before, after, None)


#: the defect of a result no offline check can read the meaning of (engine/data/defects.json)
UNVOUCHED = "nothing here can tell whether it shows what was asked"


def check_generated(
    subtask: Subtask, before: np.ndarray, after: np.ndarray, mask: np.ndarray
) -> Verdict:
    """A result only a vision critic can read the meaning of: an object added or
    replaced by a generative model, a scenery no look names ('a beach'). Offline this
    measures what it can (something changed where it was asked, nothing else did) and
    fails closed: `critic_decides` lets a critic's meaning opinion stand in for it."""
    region = mask if mask.any() else np.ones(mask.shape, dtype=bool)
    diff = np.abs(rgb(before).astype(np.int32) - rgb(after).astype(np.int32)).max(axis=2)
    untouched = untouched_outside(before, after, dilate(region, 8)) if mask.any() else 1.0
    changed = int((diff[region] > (8 * 257 if before.dtype == np.uint16 else 8)).sum())
    # (a mask: a fiftieth of it; the whole frame: a small thing added anywhere is enough)
    if changed < (0.02 * int(region.sum()) if mask.any() else 256):
        return Verdict(0.0, "nothing changed where it was asked", {"nothing changed": 2.0})
    return Verdict(
        0.0,
        f"{UNVOUCHED} ({subtask.describe()}): choose a critic in Settings (CLIP or a "
        "vision model) to have such results judged",
        {UNVOUCHED: 2.0},
        untouched=untouched,
        critic_decides=True,
    )


def check_mask(mask: np.ndarray) -> float:
    ratio = float(mask.mean())
    return 0.95 if 0.0 < ratio < 0.98 else 0.0


def check_depth(depth: np.ndarray) -> float:
    """A usable depth map: finite, in [0, 1], and not flat."""
    if not np.isfinite(depth).all() or depth.min() < 0 or depth.max() > 1:
        return 0.0
    return 0.9 if float(depth.std()) > 0.01 else 0.0


def check_boxes(boxes: Sequence[Box]) -> float:
    """A detector's boxes, each past the detector's own threshold: vouched for by how
    sure it is of them (0.55 for the least sure it gives, 0.95 for a sure one); none
    found, nothing to vouch for."""
    if not boxes:
        return 0.0
    return float(np.clip(0.55 + 0.4 * max(b.score for b in boxes), 0.0, 0.95))


def check_text_boxes(boxes: list[TextBox]) -> float:
    return float(np.mean([b.score for b in boxes])) if boxes else 0.0
