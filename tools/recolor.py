"""Texture-keeping recolouring inside a mask (Lab and HSV variants), on the mask's window."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from layerpath.errors import BadInput, ToolFailed
from layerpath.tools.base import AnyDepth
from layerpath.tools.imaging import (
    color_lab,
    from_lab,
    lab_exact,
    mask_box,
    rgb,
    rgb_exact,
    to_lab,
)
from layerpath.tools.regions import crop, paste
from layerpath.tools.types import ArtifactKind, Box, ToolContext, ToolResult


def _target_color(ctx: ToolContext) -> tuple[int, int, int]:
    if not ctx.to:
        raise BadInput("Recolouring needs a colour: say e.g. 'recolor the wall to yellow'.")
    return ctx.colour(ctx.to)


def _mask_window(image: np.ndarray, mask: np.ndarray) -> Box:
    """The mask's bounds with the few pixels of context the feathered edge reads."""
    window = mask_box(mask, pad=3)
    if window is None:
        raise ToolFailed("The mask to recolour is empty; select the object first.")
    return window


def _blend_inside(
    image: np.ndarray, mask: np.ndarray, new_rgb: np.ndarray, window: Box
) -> np.ndarray:
    """Paste new colours (of the window) inside the mask only; the edge is feathered
    inwards. Only the window is worked on; the photo is copied once. 8- or 16-bit."""
    top = 65535 if image.dtype == np.uint16 else 255
    inside = crop(mask, window)
    soft = cv2.GaussianBlur(inside.astype(np.float32), (5, 5), 0) * inside
    weight = soft[..., None]
    old = crop(image, window)[..., :3].astype(np.float32)
    mixed = old * (1 - weight) + new_rgb.astype(np.float32) * weight
    return paste(image, window, np.clip(np.rint(mixed), 0, top).astype(image.dtype))


def _recoloured_lab(
    lab: np.ndarray, mask: np.ndarray, color: tuple[int, int, int], lightness: float
) -> np.ndarray:
    """Chroma moved to the target's and lightness shifted part-way, the local variation
    (texture, shading) kept around the new mean colour (Lab: L 0..100, a/b centred)."""
    target = color_lab(color)
    mean = lab[mask].mean(axis=0)
    new = lab.copy()
    new[..., 1:] = target[1:] + (lab[..., 1:] - mean[1:]) * 0.35
    new[..., 0] = lab[..., 0] + lightness * (target[0] - mean[0])
    return new


def recolor_lab(
    pixels: np.ndarray, mask: np.ndarray, color: tuple[int, int, int], lightness: float
) -> np.ndarray:
    """Move chroma to the target's and shift lightness part-way, keeping the texture:
    RGB of 8-bit pixels, or of 16-bit ones computed in float at their depth."""
    if pixels.dtype == np.uint16:
        lab = lab_exact(pixels[..., :3].astype(np.float64) / 65535.0)
        new = rgb_exact(_recoloured_lab(lab, mask, color, lightness))
        return np.clip(np.rint(new * 65535.0), 0, 65535).astype(np.uint16)
    return from_lab(_recoloured_lab(to_lab(rgb(pixels)), mask, color, lightness))


def recolor_hsv(pixels: np.ndarray, color: tuple[int, int, int], saturation: float) -> np.ndarray:
    """Set hue to the target's, pull saturation towards it; value (shading) is kept.
    16-bit pixels are worked in float HSV at their depth."""
    if pixels.dtype == np.uint16:
        hsv = cv2.cvtColor(rgb(pixels).astype(np.float32) / 65535.0, cv2.COLOR_RGB2HSV)
        goal = cv2.cvtColor(np.array([[color]], np.float32) / 255.0, cv2.COLOR_RGB2HSV)[0, 0]
        hsv[..., 0] = goal[0]  # (degrees)
        hsv[..., 1] = hsv[..., 1] * (1 - saturation) + goal[1] * saturation
        back = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
        return np.clip(np.rint(back * 65535.0), 0, 65535).astype(np.uint16)
    hsv = cv2.cvtColor(np.ascontiguousarray(rgb(pixels)), cv2.COLOR_RGB2HSV).astype(np.float32)
    target = cv2.cvtColor(np.array([[color]], dtype=np.uint8), cv2.COLOR_RGB2HSV)[0, 0]
    hsv[..., 0] = float(target[0])
    hsv[..., 1] = hsv[..., 1] * (1 - saturation) + float(target[1]) * saturation
    return cv2.cvtColor(np.clip(hsv, 0, 255).astype(np.uint8), cv2.COLOR_HSV2RGB)


class _Recolour(AnyDepth):
    """A recolour computes in float: on a 16-bit photo its accepted step is worked out
    again at 16 bits (the same inputs with the 16-bit picture)."""


class LabRecolor(_Recolour):
    """Recolour in Lab: best for any target colour, including greys and pastels."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image, mask = inputs[ArtifactKind.IMAGE], inputs[ArtifactKind.MASK]
        window = _mask_window(image, mask)
        new = recolor_lab(
            crop(image, window), crop(mask, window), _target_color(ctx), float(params["lightness"])
        )
        return ToolResult(
            {ArtifactKind.IMAGE: _blend_inside(image, mask, new, window)}, window=window
        )


class HsvRecolor(_Recolour):
    """Recolour in HSV: fast, good for saturated targets, poor for greys and big
    lightness changes."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image, mask = inputs[ArtifactKind.IMAGE], inputs[ArtifactKind.MASK]
        window = _mask_window(image, mask)
        new = recolor_hsv(crop(image, window), _target_color(ctx), float(params["saturation"]))
        return ToolResult(
            {ArtifactKind.IMAGE: _blend_inside(image, mask, new, window)}, window=window
        )
