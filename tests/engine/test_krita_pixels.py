"""Krita's pixel byte layouts round-trip to RGBA 8-bit for every supported depth (pure
numpy; the real Krita tests in tests/plugin check the same code inside Krita)."""

from __future__ import annotations

import numpy as np
import pytest

from layerpath.errors import BadInput
from layerpath.plugin.krita.pixels import from_rgba8, to_rgba8


@pytest.mark.parametrize("depth", ["U8", "U16", "F16", "F32"])
def test_roundtrip(depth: str) -> None:
    rng = np.random.default_rng(1)
    rgba = rng.integers(0, 256, (5, 7, 4), dtype=np.uint8)
    back = to_rgba8(from_rgba8(rgba, depth), depth, 7, 5)
    assert np.abs(back.astype(int) - rgba.astype(int)).max() <= (0 if depth.startswith("U") else 1)


def test_u8_is_bgra_on_the_wire() -> None:
    red = np.zeros((1, 1, 4), np.uint8)
    red[0, 0] = (255, 0, 0, 255)
    assert from_rgba8(red, "U8") == bytes([0, 0, 255, 255])


def test_other_depths_are_refused() -> None:
    with pytest.raises(BadInput, match="not supported"):
        to_rgba8(b"", "U32", 0, 0)
