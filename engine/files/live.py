"""Steps a host keeps live: a whole-picture step that is one tone curve per channel
(warmer, exposure, contrast, a curve) is written as the host's own curves adjustment
(a Krita filter layer), which works on whatever lies beneath it. Hide an earlier step in
Krita and the live step follows, with no layerpath running.

Which steps are curves is not assumed, as for a LUT (engine/files/cube.py): the step's
tool is run on a grey ramp, which gives each channel's curve if the step has one; the
curves are then put to the test twice, on a lattice of every colour (a step that mixes
channels, such as saturation or black and white, fails there) and on the photo itself
(a step that depends on the picture's statistics fails there). Each curve is as few
points as keep it within FIT levels of the ramp's, interpolated the way Krita
interpolates its curves (a natural cubic spline).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from layerpath.engine.files.cube import CLOSE, NEAR, colour_step, lattice, through
from layerpath.engine.hosts.session import picture_beneath
from layerpath.engine.types import LayerKind, RunResult, SubtaskOutcome
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)

Points = tuple[tuple[float, float], ...]
#: how far (in levels) a curve may leave the values the step gives on the ramp (which
#: are whole levels: half a level of that is rounding)
FIT = 0.75


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


def fitted(samples: np.ndarray) -> Points:
    """Few points whose curve stays within FIT levels of `samples` (the step at each
    level 0..255, 0..1): from five evenly spaced, a point is added in the middle of the
    stretch that fits worst until the curve fits (at most 33). A spline is linear in its
    points' heights, so each time the heights are the least-squares fit to every sample:
    the rounding in the samples is averaged out, not chased."""
    x = np.linspace(0.0, 1.0, len(samples))
    knots = list(np.linspace(0.0, 1.0, 5))
    while True:
        at = np.array(knots)
        basis = np.stack([_natural(at, unit, x) for unit in np.eye(len(at))], axis=1)
        heights = np.clip(np.linalg.lstsq(basis, samples, rcond=None)[0], 0.0, 1.0)
        points = tuple(
            (round(float(a), 6), round(float(b), 6)) for a, b in zip(at, heights, strict=True)
        )
        error = np.abs(spline(points, x) - samples) * 255.0
        worst = float(x[int(np.argmax(error))])
        stretch = min(max(int(np.searchsorted(at, worst, side="right")) - 1, 0), len(at) - 2)
        middle = float(at[stretch] + at[stretch + 1]) / 2
        if error.max() <= FIT or len(knots) >= 33 or at[stretch + 1] - at[stretch] < 2 / 255:
            return points
        knots = sorted([*knots, middle])


@dataclass(frozen=True)
class Curves:
    """One curve per channel (red, green, blue), each its points (x, y in 0..1)."""

    red: Points
    green: Points
    blue: Points

    def table(self, levels: int = 256) -> np.ndarray:
        """The curves at each of `levels` values: levels x 3, 0..1."""
        x = np.linspace(0.0, 1.0, levels)
        return np.stack([spline(c, x) for c in (self.red, self.green, self.blue)], axis=1)

    def applied(self, picture: np.ndarray) -> np.ndarray:
        """An 8-bit picture's colours through the curves (RGB, uint8)."""
        table = np.rint(self.table() * 255.0).astype(np.uint8)
        return np.stack([table[picture[..., c], c] for c in range(3)], axis=-1)


def _off(made: np.ndarray, wanted: np.ndarray, alpha: np.ndarray) -> bool:
    """Whether the curves' colours (`made`) miss what the step made (`wanted`, RGBA), or
    the step changed the transparency (`alpha`: what it was), which curves cannot do."""
    if not np.array_equal(wanted[..., 3], alpha):
        return True
    diff = np.abs(made.astype(np.int16) - wanted[..., :3].astype(np.int16))
    return bool(diff.mean() > CLOSE or np.percentile(diff, 99) > NEAR)


def curves_of(outcome: SubtaskOutcome, result: RunResult, registry: Registry) -> Curves | None:
    """The step's curves, when a curve per channel makes what it made (see the module's
    words); None otherwise."""
    if colour_step(outcome, registry) is not None:
        return None
    run = through(registry, outcome, result)
    opaque = np.full((16, 16), 255, np.uint8)
    ramp = np.dstack([np.repeat(np.arange(256, dtype=np.uint8), 3).reshape(16, 16, 3), opaque])
    colours = lattice()
    try:
        grey, on_lattice = run(ramp), run(colours)
        samples = grey[..., :3].reshape(256, 3).astype(np.float64) / 255.0
        curves = Curves(*(fitted(samples[:, c]) for c in range(3)))
        if _off(curves.applied(colours), on_lattice, colours[..., 3]):
            return None  # it mixes the channels (or changes the transparency)
        start = outcome.start_image
        assert start is not None
        own = picture_beneath(
            start, [s for s in outcome.steps if s.kind == LayerKind.PIXELS and s.visible]
        )
        if _off(curves.applied(start), own, start[..., 3]):
            return None  # it depends on the picture
    except Exception:  # (a tool that needs a photo, not a table of colours): a paint layer
        log.warning("could not tell whether %s is a tone curve", outcome.tools, exc_info=True)
        return None
    return curves


def live_steps(
    placed: Mapping[str, tuple[SubtaskOutcome | None, str]],
    result: RunResult,
    registry: Registry,
) -> dict[str, Curves]:
    """Of a run's step layers (id: the finished subtask it belongs to and the tool that
    made it), those that are curves."""
    found: dict[str, Curves] = {}
    for layer, (outcome, tool) in placed.items():
        if outcome is None or not outcome.ok or list(outcome.tools) != [tool]:
            continue
        curves = curves_of(outcome, result, registry)
        if curves is not None:
            found[layer] = curves
    return found


def curve_text(points: Sequence[tuple[float, float]]) -> str:
    """A curve as Krita writes one: 'x,y;' for each point."""
    return "".join(f"{x:g},{y:g};" for x, y in points)
