"""Krita pixel bytes <-> RGBA 8-bit arrays, for every RGBA depth Krita documents use.

Krita hands out BGRA order for 8- and 16-bit integer depths and RGBA for float depths
(half and float are linear light there, so they get the sRGB curve on the way).
"""

from __future__ import annotations

import numpy as np

from layerpath.errors import BadInput

_INTEGER = {"U8": np.uint8, "U16": np.uint16}
_FLOAT = {"F16": np.float16, "F32": np.float32}


def _srgb_encode(linear: np.ndarray) -> np.ndarray:
    linear = np.clip(linear, 0.0, 1.0)
    return np.where(linear <= 0.0031308, linear * 12.92, 1.055 * np.power(linear, 1 / 2.4) - 0.055)


def _srgb_decode(encoded: np.ndarray) -> np.ndarray:
    return np.where(encoded <= 0.04045, encoded / 12.92, np.power((encoded + 0.055) / 1.055, 2.4))


def to_rgba8(data: bytes, depth: str, width: int, height: int) -> np.ndarray:
    """Krita's pixelData() bytes -> H x W x 4 RGBA uint8."""
    if depth in _INTEGER:
        pixels = np.frombuffer(data, dtype=_INTEGER[depth]).reshape(height, width, 4)[
            ..., [2, 1, 0, 3]
        ]
        if depth == "U16":
            return np.rint(pixels.astype(np.float32) / 257.0).astype(np.uint8)
        return pixels.copy()
    if depth in _FLOAT:
        pixels = (
            np.frombuffer(data, dtype=_FLOAT[depth]).reshape(height, width, 4).astype(np.float32)
        )
        rgb = _srgb_encode(pixels[..., :3])
        alpha = np.clip(pixels[..., 3:], 0.0, 1.0)
        return np.rint(np.concatenate([rgb, alpha], axis=2) * 255.0).astype(np.uint8)
    raise BadInput(
        f"Colour depth {depth} is not supported; use 8/16-bit integer or 16/32-bit float."
    )


def from_rgba8(pixels: np.ndarray, depth: str) -> bytes:
    """H x W x 4 RGBA uint8 -> bytes for Krita's setPixelData() in the document's depth."""
    if depth == "U8":
        return np.ascontiguousarray(pixels[..., [2, 1, 0, 3]]).tobytes()
    if depth == "U16":
        return np.ascontiguousarray(pixels[..., [2, 1, 0, 3]].astype(np.uint16) * 257).tobytes()
    if depth in _FLOAT:
        scaled = pixels.astype(np.float32) / 255.0
        out = np.concatenate([_srgb_decode(scaled[..., :3]), scaled[..., 3:]], axis=2)
        return np.ascontiguousarray(out.astype(_FLOAT[depth])).tobytes()
    raise BadInput(
        f"Colour depth {depth} is not supported; use 8/16-bit integer or 16/32-bit float."
    )
