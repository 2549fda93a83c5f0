"""Tone curves as Krita draws them: a natural cubic spline through a few points per
channel, fitted to a step's values at each level (engine/files/live.py finds the steps;
engine/files/kra.py writes them as Krita curves filter layers, engine/files/io.py as a
PSD's Curves adjustment layers)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Points = tuple[tuple[float, float], ...]
#: how far (in levels) a curve may leave the values the step gives on the ramp (which
#: are whole levels: half a level of that is rounding)
FIT = 0.75
#: the most points Photoshop keeps in one curve (19), less two for room
PSD_POINTS = 17


def _natural(xs: np.ndarray, ys: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The natural cubic spline through (xs, ys) (xs ascending) at `x`."""
    n = len(xs)
    if n == 2:
        return np.asarray(np.interp(x, xs, ys))
    h = np.diff(xs)
    # the second derivatives at the inner points (zero at both ends): a tridiagonal system
    system = np.zeros((n - 2, n - 2))
    rhs = 6.0 * (np.diff(ys[1:]) / h[1:] - np.diff(ys[:-1]) / h[:-1])
    for i in range(n - 2):
        system[i, i] = 2.0 * (h[i] + h[i + 1])
        if i > 0:
            system[i, i - 1] = h[i]
        if i < n - 3:
            system[i, i + 1] = h[i + 1]
    second = np.concatenate([[0.0], np.linalg.solve(system, rhs), [0.0]])
    at = np.clip(np.searchsorted(xs, x, side="right") - 1, 0, n - 2)
    t0, t1, step = x - xs[at], xs[at + 1] - x, h[at]
    return np.asarray(
        second[at] * t1**3 / (6 * step)
        + second[at + 1] * t0**3 / (6 * step)
        + (ys[at] / step - second[at] * step / 6) * t1
        + (ys[at + 1] / step - second[at + 1] * step / 6) * t0
    )


def spline(points: Points, x: np.ndarray) -> np.ndarray:
    """The curve through `points` (x ascending, 0..1) at `x`, clipped to 0..1: how Krita
    draws a curve through its points (a natural cubic spline)."""
    xs = np.array([p[0] for p in points], np.float64)
    ys = np.array([p[1] for p in points], np.float64)
    return np.asarray(np.clip(_natural(xs, ys, x), 0.0, 1.0))


def fitted(samples: np.ndarray, most: int = 33, whole: bool = False) -> Points:
    """Few points whose curve stays within FIT levels of `samples` (the step at each
    level 0..255, 0..1): from five evenly spaced, a point is added in the middle of the
    stretch that fits worst until the curve fits (at most `most`). A spline is linear in
    its points' heights, so each time the heights are the least-squares fit to every
    sample: the rounding in the samples is averaged out, not chased. With `whole` the
    points lie on whole levels (as a PSD keeps them)."""
    x = np.linspace(0.0, 1.0, len(samples))
    knots = list(np.linspace(0.0, 1.0, 5))
    while True:
        at = np.unique(np.rint(np.array(knots) * 255) / 255) if whole else np.array(knots)
        basis = np.stack([_natural(at, unit, x) for unit in np.eye(len(at))], axis=1)
        heights = np.clip(np.linalg.lstsq(basis, samples, rcond=None)[0], 0.0, 1.0)
        if whole:
            heights = np.rint(heights * 255) / 255
        points = tuple(
            (round(float(a), 6), round(float(b), 6)) for a, b in zip(at, heights, strict=True)
        )
        error = np.abs(spline(points, x) - samples) * 255.0
        worst = float(x[int(np.argmax(error))])
        stretch = min(max(int(np.searchsorted(at, worst, side="right")) - 1, 0), len(at) - 2)
        middle = float(at[stretch] + at[stretch + 1]) / 2
        if error.max() <= FIT or len(knots) >= most or at[stretch + 1] - at[stretch] < 2 / 255:
            return points
        knots = sorted([*knots, middle])


@dataclass(frozen=True)
class Curves:
    """One curve per channel (red, green, blue), each its points (x, y in 0..1);
    `whole`: the same curves on whole levels, at most PSD_POINTS each, where they pass
    too (a PSD's Curves adjustment keeps them so)."""

    red: Points
    green: Points
    blue: Points
    whole: Curves | None = None

    def table(self, levels: int = 256) -> np.ndarray:
        """The curves at each of `levels` values: levels x 3, 0..1."""
        x = np.linspace(0.0, 1.0, levels)
        return np.stack([spline(c, x) for c in (self.red, self.green, self.blue)], axis=1)

    def applied(self, picture: np.ndarray) -> np.ndarray:
        """An 8-bit picture's colours through the curves (RGB, uint8)."""
        table = np.rint(self.table() * 255.0).astype(np.uint8)
        return np.stack([table[picture[..., c], c] for c in range(3)], axis=-1)


def curve_text(points: Sequence[tuple[float, float]]) -> str:
    """A curve as Krita writes one: 'x,y;' for each point."""
    return "".join(f"{x:g},{y:g};" for x, y in points)
