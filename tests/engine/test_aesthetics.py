"""The aesthetics expert's clipped shares (engine/judge/experts.py), counted only where a
channel is at an end, agree with the shares counted over every sampled pixel."""

from __future__ import annotations

import numpy as np

from layerpath.engine.judge.experts import clipped_shares


def _every_pixel(before: np.ndarray, after: np.ndarray, spared: np.ndarray) -> dict[str, float]:
    """The shares as the definition reads, over every pixel (the pictures are small
    enough to be read whole)."""
    b, a = before[..., :3].astype(int), after[..., :3].astype(int)
    changed = (np.abs(a - b) > 2).any(axis=-1)
    count = int(changed.sum())
    if count < 64:
        return {}
    low, high = spared
    at_top, at_bottom = a >= 254, a <= 1
    top, bottom = at_top & (b <= 235) & ~high, at_bottom & (b >= 20) & ~low
    white = top.any(axis=-1) & at_top.all(axis=-1)
    black = bottom.any(axis=-1) & at_bottom.all(axis=-1)
    colour = (top & (a == a.max(axis=-1, keepdims=True))).any(axis=-1) & ~white
    return {
        "highlight detail blown to white": (white & changed).sum() / count,
        "shadow detail crushed to black": (black & changed).sum() / count,
        "colours clipped, their detail lost": (colour & changed).sum() / count,
    }


def test_clipped_shares_count_what_the_definition_counts() -> None:
    rng = np.random.default_rng(3)
    for trial in range(60):
        h, w = (int(v) for v in rng.integers(12, 200, 2))
        before = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
        if trial % 3 == 0:  # tones already at the ends
            before[..., :3] = np.clip(before[..., :3].astype(int) * 2 - 128, 0, 255)
        moved = before.astype(int) + rng.integers(-60, 80, before.shape)
        after = np.clip(moved * (1.6 if trial % 2 else 1.0), 0, 255).astype(np.uint8)
        spared = rng.random((2, 3)) < 0.2
        got, want = clipped_shares(before, after, spared), _every_pixel(before, after, spared)
        assert got.keys() == want.keys()
        assert all(abs(got[k] - want[k]) < 1e-12 for k in want), (got, want)
    assert any(clipped_shares(before, after, np.zeros((2, 3), bool)).values())  # (some clip)
