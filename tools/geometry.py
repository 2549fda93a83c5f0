"""Crop and rotate: the frame changes, the photo's own layer does not.

A crop gives the kept part of the picture as the step's layer and a canvas that size;
the user's layer keeps every pixel and moves so the kept part shows (`PLACEMENT`: where
the old picture's corner lies in the new canvas, negative for a crop). Krita keeps the
layer's pixels outside the canvas too, so a larger canvas brings them back. A rotation
gives the whole rotated picture as the step's layer (by 90 degrees the canvas turns; by
a few degrees it is cut to the largest upright rectangle of the picture's own
proportions that holds no empty corner). "Straighten" needs the angle said: no offline
way tried here finds the line that should be level reliably enough.

Crop frames: an aspect ratio ("16:9", "square", "4:5"), placed to keep as much of the
picture's subject (what stands apart from its border) as it can, whole where it fits; or a region (a
mask a finder or the user gave: "crop to the face") with a margin around it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import BadInput, ToolFailed
from layerpath.kit.imaging import mask_box
from layerpath.kit.regions import aspect_of
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.base import AnyDepth

#: the margin kept around a region a crop is made to, as a share of the region's size
MARGIN = 0.25
#: the share of the most of the subject any frame keeps that a frame nearer the middle
#: may keep instead
KEPT = 0.9


def frame_for(shape: tuple[int, ...], ratio: tuple[int, int], weight: np.ndarray) -> Box:
    """The largest frame of `ratio` (w:h) inside the picture, placed where it keeps the
    subject (`weight`: how much each pixel of a small copy is subject): of the places
    that keep nearly as much of it as any can (KEPT), the one nearest the picture's
    middle. (Placed at the subject's weighted centre, the frame followed a large bright
    bowl and cut off the fig in it; a photographer's crop is centred unless that cuts
    the subject.)"""
    h, w = shape[:2]
    fw = min(w, round(h * ratio[0] / ratio[1]))
    fh = min(h, round(fw * ratio[1] / ratio[0]))
    fw = min(fw, round(fh * ratio[0] / ratio[1]))
    x0 = _placed(weight.sum(axis=0), w, fw)
    y0 = _placed(weight.sum(axis=1), h, fh)
    return Box(x0, y0, x0 + fw, y0 + fh)


def _placed(profile: np.ndarray, length: int, span: int) -> int:
    """Where a span of `span` pixels along a side of `length` keeps the most of the
    subject's profile (its weight along that side, on the small copy)."""
    if span >= length:
        return 0
    scale = len(profile) / length
    cells = max(1, round(span * scale))
    total = np.concatenate([[0.0], np.cumsum(profile, dtype=np.float64)])
    kept = total[cells:] - total[: len(total) - cells]
    if kept.max() <= 1e-9:
        return (length - span) // 2
    good = np.nonzero(kept >= KEPT * kept.max())[0]
    middle = (len(profile) - cells) / 2
    best = int(good[np.argmin(np.abs(good - middle))])
    return int(np.clip(round(best / scale), 0, length - span))


def _subject_weight(image: np.ndarray) -> np.ndarray:
    """How much each pixel of a small copy is the picture's subject: what is unlike its
    border (the offline saliency the cut-out uses), above the middling."""
    from layerpath.kit.imaging import small_copy
    from layerpath.kit.segments import border_saliency

    small = small_copy(image, 256)
    return (np.clip(border_saliency(small) - 0.5, 0, None) ** 2).astype(np.float64)


def cropped(image: np.ndarray, frame: Box) -> ToolResult:
    if frame.width < 1 or frame.height < 1:
        raise ToolFailed("The crop would keep nothing.")
    part = image[frame.y0 : frame.y1, frame.x0 : frame.x1].copy()
    return ToolResult({ArtifactKind.IMAGE: part, ArtifactKind.PLACEMENT: (-frame.x0, -frame.y0)})


class CropFrame(AnyDepth):
    """Crop to an aspect ratio, the frame over the subject."""

    def declines(self, ctx: ToolContext) -> str | None:
        if ctx.target:
            return f"a crop to '{ctx.target}' is made around its region, not to a ratio"
        if aspect_of(ctx.subtask_params.get("aspect")) is None:
            return "say the proportions: 'crop to 16:9', 'crop it square', 'crop to 4:5'"
        return None

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        ratio = aspect_of(ctx.subtask_params.get("aspect"))
        if ratio is None:
            raise BadInput("Say the proportions: 'crop to 16:9', 'crop it square', 'crop to 4:5'.")
        # (a 16-bit picture rounded as the run's 8-bit copy is: the same frame for both)
        eight = (
            image
            if image.dtype == np.uint8
            else ((image.astype(np.uint32) + 128) // 257).astype(np.uint8)
        )
        return cropped(image, frame_for(image.shape, ratio, _subject_weight(eight)))


class CropToRegion(AnyDepth):
    """Crop to a region (the face, the subject, a named mask) with a margin around it,
    at the asked ratio when one is named."""

    def declines(self, ctx: ToolContext) -> str | None:
        return None if ctx.target else "a crop without a region is made to a ratio"

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image, region = inputs[ArtifactKind.IMAGE], inputs[ArtifactKind.MASK]
        box = mask_box(region)
        if box is None:
            raise ToolFailed("The region to crop to is empty.")
        h, w = image.shape[:2]
        pad = round(float(params.get("margin", MARGIN)) * max(box.width, box.height))
        frame = Box(
            max(0, box.x0 - pad), max(0, box.y0 - pad), min(w, box.x1 + pad), min(h, box.y1 + pad)
        )
        ratio = aspect_of(ctx.subtask_params.get("aspect"))
        if ratio is not None:  # the smallest frame of that ratio holding the region
            fw = max(frame.width, round(frame.height * ratio[0] / ratio[1]))
            fh = max(frame.height, round(fw * ratio[1] / ratio[0]))
            fw = round(fh * ratio[0] / ratio[1])
            if fw > w or fh > h:
                scale = min(w / fw, h / fh)
                fw, fh = int(fw * scale), int(fh * scale)
            centre = ((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
            x0 = int(np.clip(round(centre[0] - fw / 2), 0, w - fw))
            y0 = int(np.clip(round(centre[1] - fh / 2), 0, h - fh))
            frame = Box(x0, y0, x0 + fw, y0 + fh)
        if frame.width >= w and frame.height >= h:
            raise ToolFailed("The region fills the picture: there is nothing to crop away.")
        return cropped(image, frame)


def inscribed(w: int, h: int, degrees: float) -> tuple[int, int]:
    """The largest upright rectangle of the picture's proportions inside it rotated by
    `degrees` (no empty corners)."""
    a = math.radians(abs(degrees))
    if a < 1e-9:
        return w, h
    scale = min(w / (w * math.cos(a) + h * math.sin(a)), h / (w * math.sin(a) + h * math.cos(a)))
    return max(1, int(w * scale)), max(1, int(h * scale))


def rotated(image: np.ndarray, degrees: float) -> tuple[np.ndarray, tuple[int, int]]:
    """The picture turned by `degrees` counter-clockwise (any depth): by a multiple of
    90 exactly; otherwise about its centre and cut to the inscribed rectangle. Also
    where the old picture's corner lies in the new canvas (for its layer's move)."""
    turns = degrees / 90.0
    if abs(turns - round(turns)) < 1e-9:
        k = int(round(turns)) % 4
        return np.ascontiguousarray(np.rot90(image, k)), (0, 0)
    h, w = image.shape[:2]
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), degrees, 1.0)
    turned = cv2.warpAffine(
        image, matrix, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REFLECT_101
    )
    cw, ch = inscribed(w, h, degrees)
    x0, y0 = (w - cw) // 2, (h - ch) // 2
    return turned[y0 : y0 + ch, x0 : x0 + cw].copy(), (-x0, -y0)


class RotateFrame(AnyDepth):
    """Rotate by the asked degrees, or flip."""

    def declines(self, ctx: ToolContext) -> str | None:
        asked = ctx.subtask_params
        if asked.get("flip") or asked.get("degrees") is not None:
            return None
        # (a horizon finder from edges and Hough lines or projection profiles was tried
        # on real photos: it levels a guard rail's perspective, not the sea's line, so it
        # would tilt a level photo and call it done)
        return (
            "layerpath cannot yet tell which line in a photo should be level; say the "
            "angle: 'rotate by 2 degrees clockwise'"
        )

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        asked = ctx.subtask_params
        if asked.get("flip"):
            flipped = image[:, ::-1] if asked["flip"] == "horizontal" else image[::-1]
            out = np.ascontiguousarray(flipped)
            return ToolResult({ArtifactKind.IMAGE: out, ArtifactKind.PLACEMENT: (0, 0)})
        reason = self.declines(ctx)
        if reason is not None:
            raise ToolFailed(reason[0].upper() + reason[1:] + ".")
        degrees = float(asked["degrees"])
        if not -360 <= degrees <= 360 or degrees == 0:
            raise BadInput(f"Rotate by an angle between -360 and 360 degrees, not {degrees:g}.")
        out, placement = rotated(image, degrees)
        return ToolResult({ArtifactKind.IMAGE: out, ArtifactKind.PLACEMENT: placement})
