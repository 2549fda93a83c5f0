"""Krita pixel bytes <-> RGBA arrays (16-bit, and the tools' 8-bit), for every RGBA
depth Krita documents use.

Krita hands out BGRA order for 8- and 16-bit integer depths and RGBA for float depths.
A float document's values are usually linear light (Krita's float profiles are mostly
g10): those get the sRGB curve on the way in and lose it on the way out, so the tools
see the picture as it looks; `linear=False` (a float document in a profile with a curve
of its own) passes them as they are.
"""

from __future__ import annotations

import numpy as np

from layerpath.engine.execute.deep import eight_bit, sixteen_bit
from layerpath.errors import BadInput

_INTEGER = {"U8": np.uint8, "U16": np.uint16}
_FLOAT = {"F16": np.float16, "F32": np.float32}


def _srgb_encode(linear: np.ndarray) -> np.ndarray:
    linear = np.clip(linear, 0.0, 1.0)
    return np.where(linear <= 0.0031308, linear * 12.92, 1.055 * np.power(linear, 1 / 2.4) - 0.055)


def _srgb_decode(encoded: np.ndarray) -> np.ndarray:
    return np.where(encoded <= 0.04045, encoded / 12.92, np.power((encoded + 0.055) / 1.055, 2.4))


def _unsupported(depth: str) -> BadInput:
    return BadInput(
        f"Colour depth {depth} is not supported; use 8/16-bit integer or 16/32-bit float."
    )


def to_rgba16(data: bytes, depth: str, width: int, height: int, linear: bool = True) -> np.ndarray:
    """Krita's pixelData() bytes -> H x W x 4 RGBA uint16 (8-bit values x 257)."""
    if depth in _INTEGER:
        pixels = np.frombuffer(data, dtype=_INTEGER[depth]).reshape(height, width, 4)
        pixels = pixels[..., [2, 1, 0, 3]]
        return sixteen_bit(pixels) if depth == "U8" else np.ascontiguousarray(pixels)
    if depth in _FLOAT:
        values = np.frombuffer(data, dtype=_FLOAT[depth]).reshape(height, width, 4)
        values = np.clip(values.astype(np.float32), 0.0, 1.0)
        if linear:
            values[..., :3] = _srgb_encode(values[..., :3])
        return np.rint(values * 65535.0).astype(np.uint16)
    raise _unsupported(depth)


def to_rgba8(data: bytes, depth: str, width: int, height: int, linear: bool = True) -> np.ndarray:
    """Krita's pixelData() bytes -> H x W x 4 RGBA uint8."""
    if depth == "U8":
        return np.frombuffer(data, np.uint8).reshape(height, width, 4)[..., [2, 1, 0, 3]].copy()
    return eight_bit(to_rgba16(data, depth, width, height, linear))


def from_rgba16(deep: np.ndarray, depth: str, linear: bool = True) -> bytes:
    """H x W x 4 RGBA uint16 -> bytes for Krita's setPixelData() in the document's depth."""
    if depth == "U8":
        return np.ascontiguousarray(eight_bit(deep)[..., [2, 1, 0, 3]]).tobytes()
    if depth == "U16":
        return np.ascontiguousarray(deep[..., [2, 1, 0, 3]]).tobytes()
    if depth in _FLOAT:
        values = deep.astype(np.float32) / 65535.0
        if linear:
            values[..., :3] = _srgb_decode(values[..., :3])
        return np.ascontiguousarray(values.astype(_FLOAT[depth])).tobytes()
    raise _unsupported(depth)


def from_rgba8(pixels: np.ndarray, depth: str, linear: bool = True) -> bytes:
    """H x W x 4 RGBA uint8 -> bytes for Krita's setPixelData() in the document's depth."""
    if depth == "U8":
        return np.ascontiguousarray(pixels[..., [2, 1, 0, 3]]).tobytes()
    return from_rgba16(sixteen_bit(pixels), depth, linear)
