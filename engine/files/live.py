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
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from layerpath.engine.files.cube import CLOSE, NEAR, colour_step, lattice, through
from layerpath.engine.files.curves import PSD_POINTS, Curves, fitted
from layerpath.engine.hosts.session import picture_beneath
from layerpath.engine.types import LayerKind, RunResult, SubtaskOutcome
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)


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
        start = outcome.start_image
        assert start is not None
        own = picture_beneath(
            start, [s for s in outcome.steps if s.kind == LayerKind.PIXELS and s.visible]
        )

        def passes(curves: Curves) -> bool:
            # (on every colour: a step that mixes the channels or changes the
            # transparency fails; on the photo: one that depends on the picture)
            return not _off(curves.applied(colours), on_lattice, colours[..., 3]) and not _off(
                curves.applied(start), own, start[..., 3]
            )

        curves = Curves(*(fitted(samples[:, c]) for c in range(3)))
        if not passes(curves):
            return None
        whole = Curves(*(fitted(samples[:, c], PSD_POINTS, whole=True) for c in range(3)))
        if passes(whole):
            curves = replace(curves, whole=whole)
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
