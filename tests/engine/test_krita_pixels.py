"""Krita's pixel byte layouts round-trip to RGBA 8-bit for every supported depth (pure
numpy; the real Krita tests in tests/plugin check the same code inside Krita)."""

from __future__ import annotations

import numpy as np
import pytest

from layerpath.errors import BadInput
from layerpath.plugin.krita.pixels import from_rgba8, from_rgba16, to_rgba8, to_rgba16


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


@pytest.mark.parametrize("depth", ["U16", "F32"])
def test_16_bit_values_survive_a_16_bit_or_float_document(depth: str) -> None:
    """A 16-bit or float document's values reach the tools at 16 bits and a step's
    16-bit pixels go back at them: no 8-bit steps on the way."""
    rng = np.random.default_rng(2)
    deep = rng.integers(0, 65536, (4, 6, 4), dtype=np.uint16)
    back = to_rgba16(from_rgba16(deep, depth), depth, 6, 4)
    assert np.abs(back.astype(int) - deep.astype(int)).max() <= (0 if depth == "U16" else 1)
    assert np.any(back % 257 != 0)


def test_a_float_document_in_a_curved_profile_gets_no_second_curve() -> None:
    """Float values in a linear profile get the sRGB curve for the tools (mid-grey
    linear 0.5 looks like 188 of 255); in a profile with a curve of its own they pass as
    they are."""
    half = np.full((1, 1, 4), 0.5, np.float32).tobytes()
    assert to_rgba8(half, "F32", 1, 1)[0, 0, 0] == 188
    assert to_rgba8(half, "F32", 1, 1, linear=False)[0, 0, 0] == 128
