"""Did a crop or a rotation do what was asked? A crop keeps an exact, untouched part of
the picture, at the asked proportions, holding the asked region; a quarter turn or a
flip is exact; a rotation by a few degrees, turned back, matches the picture it came
from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.engine.judge.checks.verdict import Verdict
from layerpath.kit.imaging import mask_box, rgb
from layerpath.kit.regions import aspect_of


def check_cropped(
    before: np.ndarray,
    after: np.ndarray,
    placement: object,
    params: Mapping[str, Any],
    region: np.ndarray | None,
) -> Verdict:
    if not isinstance(placement, tuple) or len(placement) != 2:
        return Verdict(0.0, "the crop did not say where it lies")
    x0, y0 = -int(placement[0]), -int(placement[1])
    h, w = after.shape[:2]
    if x0 < 0 or y0 < 0 or x0 + w > before.shape[1] or y0 + h > before.shape[0]:
        return Verdict(0.0, "the crop reaches outside the picture")
    if (w, h) == before.shape[1::-1]:
        return Verdict(0.0, "nothing was cropped away")
    if not np.array_equal(after, before[y0 : y0 + h, x0 : x0 + w]):
        return Verdict(0.0, "the kept part is not the picture's own pixels")
    ratio = aspect_of(params.get("aspect"))
    if ratio is not None and abs(w / h - ratio[0] / ratio[1]) > 2.0 / min(w, h):
        return Verdict(0.3, f"the crop is {w}x{h}, not {params.get('aspect')}")
    if region is not None and region.any():
        box = mask_box(region)
        assert box is not None
        if box.x0 < x0 or box.y0 < y0 or box.x1 > x0 + w or box.y1 > y0 + h:
            return Verdict(0.3, "the crop cuts into the region it was made to keep")
    return Verdict(0.95)


def check_rotated(before: np.ndarray, after: np.ndarray, params: Mapping[str, Any]) -> Verdict:
    if params.get("flip"):
        flipped = before[:, ::-1] if params["flip"] == "horizontal" else before[::-1]
        return Verdict(0.95) if np.array_equal(after, flipped) else Verdict(0.0, "not flipped")
    degrees = params.get("degrees")
    if degrees is not None and float(degrees) % 90 == 0:
        turned = np.rot90(before, int(float(degrees) // 90) % 4)
        return Verdict(0.95) if np.array_equal(after, turned) else Verdict(0.0, "not turned")
    if (after[..., 3] < 255).any() and (before[..., 3] == 255).all():
        return Verdict(0.0, "empty corners")
    if degrees is None:
        return Verdict(0.0, "no angle to check the turn against")
    # turned back by the same angle, the middle of the result is the middle of the photo
    h, w = after.shape[:2]
    bh, bw = before.shape[:2]
    canvas = np.zeros_like(before)
    y0, x0 = (bh - h) // 2, (bw - w) // 2
    canvas[y0 : y0 + h, x0 : x0 + w] = after
    matrix = cv2.getRotationMatrix2D(((bw - 1) / 2, (bh - 1) / 2), -float(degrees), 1.0)
    back = cv2.warpAffine(canvas, matrix, (bw, bh), flags=cv2.INTER_LINEAR)
    ch, cw = h // 4, w // 4
    middle = (slice(bh // 2 - ch, bh // 2 + ch), slice(bw // 2 - cw, bw // 2 + cw))
    a = cv2.cvtColor(np.ascontiguousarray(rgb(back)[middle]), cv2.COLOR_RGB2GRAY).astype(float)
    b = cv2.cvtColor(np.ascontiguousarray(rgb(before)[middle]), cv2.COLOR_RGB2GRAY).astype(float)
    if a.std() < 1 or b.std() < 1:
        return Verdict(0.9)
    alike = float(np.corrcoef(a.ravel(), b.ravel())[0, 1])
    return (
        Verdict(0.95) if alike > 0.9 else Verdict(0.2, "not the picture turned by the asked angle")
    )
