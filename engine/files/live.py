"""Steps a host keeps live: a whole-picture step that is one tone curve per channel
(warmer, exposure, contrast, a curve) is written as the host's own curves adjustment
(a Krita filter layer), which works on whatever lies beneath it. Hide an earlier step in
Krita and the live step follows, with no layerpath running. A step that only scales
each pixel's brightness (a vignette, a shadow lift) is written as only its own change,
a layer of gains in multiply or colour dodge (blends.py; `change_of`).

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

import cv2
import numpy as np

from layerpath.engine.files.blends import CLOSE, NEAR, Change, change_layer, misses, own_change
from layerpath.engine.files.cube import after_of, colour_step, lattice, through
from layerpath.engine.files.curves import PSD_POINTS, Curves, fitted
from layerpath.engine.types import LayerKind, RunResult, SubtaskOutcome
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)

#: the longest side of the copies a change is put to the test on
PROXY = 1024


#: how many of the photo's pixels the curves are tested on (spread evenly over it)
SAMPLE = 1_000_000


def _every(picture: np.ndarray) -> int:
    """The stride, each way, that leaves about SAMPLE of the picture's pixels."""
    return max(1, int(np.sqrt(picture.shape[0] * picture.shape[1] / SAMPLE)))


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
        every = _every(start)  # (a million of the photo's pixels tell as well as all)
        start, own = start[::every, ::every], after_of(outcome, result)[::every, ::every]

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


def _proxy(picture: np.ndarray) -> np.ndarray:
    """The picture at most PROXY pixels a side (area-averaged)."""
    h, w = picture.shape[:2]
    scale = PROXY / max(h, w)
    if scale >= 1:
        return picture
    size = (max(16, round(w * scale)), max(16, round(h * scale)))
    return np.asarray(cv2.resize(picture, size, interpolation=cv2.INTER_AREA))


def change_of(outcome: SubtaskOutcome, result: RunResult, registry: Registry) -> Change | None:
    """The step as only its own change (engine/files/blends.py), when it is one that
    does not lean on what lies beneath: a layer of gains must make the step's picture
    again, and the gains the step's tool gives on the picture the run started from (as
    hiding every earlier step leaves it) must be the same gains, within CLOSE and NEAR
    (worked out on copies at most PROXY pixels a side). A vignette passes, being where
    a pixel lies; a shadow lift passes when the earlier steps do not move the shadows
    much, anywhere (LOCAL); a step that both lightens and darkens (sharpen, clarity)
    fails."""
    if colour_step(outcome, registry) is not None:
        return None
    step = next(s for s in outcome.steps if s.kind == LayerKind.PIXELS)
    start, first = outcome.start_image, result.outcomes[0].start_image
    assert start is not None and step.pixels is not None
    if step.deep is not None:  # (a 16-bit photo's step: its layer keeps 16 bits)
        return None
    if first is None or first.shape != start.shape:  # (a crop before it: no remaking)
        return None
    change = own_change(start, after_of(outcome, result))
    if change is None:
        return None
    run = through(registry, outcome, result)
    beneath, bare = _proxy(start), _proxy(first)
    try:
        layer = change_layer(change.mode, beneath, run(beneath))[0][..., :3]
        wanted = run(bare)
    except Exception:  # (a tool that cannot work on a smaller copy): a paint layer
        log.warning("could not tell whether %s is a change of gains", outcome.tools, exc_info=True)
        return None
    if not np.array_equal(wanted[..., 3], bare[..., 3]):
        return None
    diff = misses(change.mode, bare[..., :3], wanted[..., :3], layer)
    if diff.mean() > CLOSE or np.percentile(diff, 99) > NEAR or _worst_tile(diff) > LOCAL:
        return None
    return change


#: how far off the worst eighth-by-eighth tile of a change may be (99th percentile, in
#: levels): an earlier step that changed one region (a face brightened) must not leave
#: that region wrong while the picture as a whole passes
LOCAL = 6.0


def _worst_tile(diff: np.ndarray) -> float:
    """The highest 99th percentile of `diff` (H x W x 3) over an 8 x 8 grid of tiles."""
    h, w = diff.shape[:2]
    worst = 0.0
    for rows in np.array_split(np.arange(h), 8):
        for cols in np.array_split(np.arange(w), 8):
            if rows.size and cols.size:
                tile = diff[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
                worst = max(worst, float(np.percentile(tile, 99)))
    return worst


def live_of(
    outcome: SubtaskOutcome,
    result: RunResult,
    registry: Registry,
    curves: bool = True,
    whole: bool = False,
) -> Curves | Change | None:
    """A finished subtask's one step as tone curves (unless not `curves`; with `whole`,
    only curves that also pass on whole levels, as a PSD keeps them) or else as only its
    own change (not in a run that crops or grows the picture: `reframes`); None when it
    is neither, or not one tool's step, or telling raised (the step then stays the layer
    of pixels it is)."""
    if not outcome.ok or len(outcome.tools) != 1:
        return None
    try:
        live = curves_of(outcome, result, registry) if curves else None
        if live is not None and whole and live.whole is None:
            live = None
        if live is not None or reframes(result):
            return live
        return change_of(outcome, result, registry)
    except Exception:
        log.warning("could not tell whether %s stays live", outcome.tools, exc_info=True)
        return None


def reframes(result: RunResult) -> bool:
    """Whether a step of the run crops or grows the picture: then no step is kept as
    its change (made in the frame the run ends in, which moved the layers beneath it,
    the change would land elsewhere); curves, which hold no place, still are."""
    return any(s.canvas is not None for o in result.outcomes for s in o.steps)


def live_outcomes(result: RunResult, registry: Registry) -> dict[str, Curves | Change]:
    """Of a run's subtasks (by id), those whose step a host keeps live (live_of)."""
    found: dict[str, Curves | Change] = {}
    for outcome in result.outcomes:
        if (live := live_of(outcome, result, registry)) is not None:
            found[outcome.subtask.id] = live
    return found


def live_steps(
    placed: Mapping[str, tuple[SubtaskOutcome | None, str]],
    result: RunResult,
    registry: Registry,
    curves: bool = True,
    whole: bool = False,
) -> dict[str, Curves | Change]:
    """Of a run's step layers (id: the finished subtask it belongs to and the tool that
    made it), those that are curves or only their own change (live_of)."""
    found: dict[str, Curves | Change] = {}
    for layer, (outcome, tool) in placed.items():
        if outcome is None or list(outcome.tools) != [tool]:
            continue
        live = live_of(outcome, result, registry, curves, whole)
        if live is not None:
            found[layer] = live
    return found
