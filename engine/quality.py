"""Quality checks: a checker per subtask kind scores q in [0, 1] from the images.

Checks look at the pixels themselves (and OCR for text): recolour hits the target
colour while keeping luminance structure; removal fills like the surrounding ring
without a seam; text edits read back as expected. Every image check also demands
that nothing changed outside the edited region.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from layerpath.engine.checks.adjust import check_adjustment
from layerpath.engine.checks.cutout import check_cutout
from layerpath.engine.checks.geometry import check_cropped, check_rotated
from layerpath.engine.checks.recolour import check_recolour
from layerpath.engine.checks.region import check_found_region
from layerpath.engine.checks.removal import Trial, check_removal, untouched_outside
from layerpath.engine.checks.sky import check_sky_replaced
from layerpath.engine.checks.text import (
    check_text_added,
    check_text_gone,
    check_text_removal,
    check_text_replacement,
)
from layerpath.engine.checks.verdict import Expert, Verdict
from layerpath.engine.experts import Earlier, aesthetics, aggregate, checker_opinions, consistency
from layerpath.engine.types import ArtifactKind, Box, Subtask, SubtaskKind, TextBox
from layerpath.tools.finders import ALONG_EDGES, finder_for
from layerpath.tools.imaging import (
    ColourNames,
    boxes_mask,
    dilate,
    mask_box,
    parse_color,
    rgb,
)
from layerpath.tools.regions import crop, full_box, grow_box, union_box
from layerpath.tools.text import select_text_boxes

if TYPE_CHECKING:
    from layerpath.engine.critics import Critic

K = SubtaskKind
Values = Mapping[ArtifactKind, Any]


def _gray(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(np.ascontiguousarray(rgb(image)), cv2.COLOR_RGB2GRAY).astype(np.float32)


def check_changed_in(before: np.ndarray, after: np.ndarray, boxes: list[TextBox]) -> float:
    region = dilate(boxes_mask(after.shape[:2], [b.box for b in boxes]), 2)
    diff = np.abs(rgb(before).astype(np.int16) - rgb(after).astype(np.int16)).mean(axis=2)
    changed = float(diff[region].mean()) > 8 if region.any() else False
    return (0.95 if changed else 0.0) * untouched_outside(before, after, region)


def check_sharpened(before: np.ndarray, after: np.ndarray) -> Verdict:
    """Sharper by a share a viewer sees, without the fine detail's energy jumping
    beyond six times (halos along every edge)."""
    ratio = cv2.Laplacian(_gray(after), cv2.CV_32F).var() / (
        cv2.Laplacian(_gray(before), cv2.CV_32F).var() + 1e-6
    )
    if ratio < 1.15:
        return Verdict(0.2, "hardly sharper", {"hardly sharper": 2.3})
    if ratio > 6.0:
        return Verdict(0.5, "halos along the edges", {"halos along the edges": 1.0})
    return Verdict(0.9)


def check_upscaled(before: np.ndarray, after: np.ndarray, factor: object = None) -> float:
    """Larger by the asked factor (2 when none was asked) on both sides, and the same
    picture when scaled back down."""
    h, w = before.shape[:2]
    want = int(factor) if isinstance(factor, (int, float, str)) and str(factor).isdigit() else 2
    if after.shape[:2] != (h * want, w * want):
        return 0.0
    back = cv2.resize(rgb(after), (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    drift = float(np.abs(back - rgb(before).astype(np.float32)).mean())
    return 0.9 if drift < 8 else (0.5 if drift < 20 else 0.1)


def check_outpainted(before: np.ndarray, after: np.ndarray, placement: object) -> float:
    """A larger, opaque picture holding the old one unchanged where the tool says it
    is, with no hard seam at the old edge."""
    h, w = before.shape[:2]
    if not isinstance(placement, tuple) or after.shape[0] <= h and after.shape[1] <= w:
        return 0.0
    x, y = int(placement[0]), int(placement[1])
    if not np.array_equal(after[y : y + h, x : x + w], before) or (after[..., 3] < 255).any():
        return 0.0
    grey = cv2.cvtColor(np.ascontiguousarray(rgb(after)), cv2.COLOR_RGB2GRAY).astype(np.float32)
    jumps = []
    if x > 0:
        jumps.append(np.abs(grey[y : y + h, x - 1] - grey[y : y + h, x]).mean())
    if y > 0:
        jumps.append(np.abs(grey[y - 1, x : x + w] - grey[y, x : x + w]).mean())
    if x + w < after.shape[1]:
        jumps.append(np.abs(grey[y : y + h, x + w] - grey[y : y + h, x + w - 1]).mean())
    if y + h < after.shape[0]:
        jumps.append(np.abs(grey[y + h, x : x + w] - grey[y + h - 1, x : x + w]).mean())
    return 0.8 if max(jumps, default=0.0) < 20 else 0.4


def check_scenery(
    subtask: Subtask, before: np.ndarray, after: np.ndarray, mask: np.ndarray
) -> Verdict:
    """A changed scenery that a look names ('night', 'winter', 'fog') must show that
    look's light and colour, whichever tool made it (a look offline, a diffusion model on
    a GPU); a sky from a reference photo, that sky's colours in the photo's sky; a
    scenery no look names ('a beach') only a vision critic can vouch for."""
    from layerpath.tools.looks import find_look

    if isinstance(subtask.params.get("ref_sky"), Mapping):
        return check_sky_replaced(before, after, mask, subtask.params["ref_sky"])
    found = find_look(subtask.to or "")
    if found is None or (subtask.target or "scenery") != "scenery":
        return check_generated(subtask, before, after, mask)
    asked = {"op": "look", "look": found[0].name, **subtask.params}
    return check_adjustment(asked, before, after, None)


#: the defect of a result no offline check can read the meaning of (engine/data/defects.json)
UNVOUCHED = "nothing here can tell whether it shows what was asked"


def check_generated(
    subtask: Subtask, before: np.ndarray, after: np.ndarray, mask: np.ndarray
) -> Verdict:
    """A result only a vision critic can read the meaning of: an object added or
    replaced by a generative model, a scenery no look names ('a beach'). Offline this
    measures what it can (something changed where it was asked, nothing else did) and
    fails closed: `critic_decides` lets a critic's meaning opinion stand in for it."""
    region = mask if mask.any() else np.ones(mask.shape, dtype=bool)
    diff = np.abs(rgb(before).astype(np.int32) - rgb(after).astype(np.int32)).max(axis=2)
    untouched = untouched_outside(before, after, dilate(region, 8)) if mask.any() else 1.0
    changed = int((diff[region] > (8 * 257 if before.dtype == np.uint16 else 8)).sum())
    # (a mask: a fiftieth of it; the whole frame: a small thing added anywhere is enough)
    if changed < (0.02 * int(region.sum()) if mask.any() else 256):
        return Verdict(0.0, "nothing changed where it was asked", {"nothing changed": 2.0})
    return Verdict(
        0.0,
        f"{UNVOUCHED} ({subtask.describe()}): choose a critic in Settings (CLIP or a "
        "vision model) to have such results judged",
        {UNVOUCHED: 2.0},
        untouched=untouched,
        critic_decides=True,
    )


def check_mask(mask: np.ndarray) -> float:
    ratio = float(mask.mean())
    return 0.95 if 0.0 < ratio < 0.98 else 0.0


def check_depth(depth: np.ndarray) -> float:
    """A usable depth map: finite, in [0, 1], and not flat."""
    if not np.isfinite(depth).all() or depth.min() < 0 or depth.max() > 1:
        return 0.0
    return 0.9 if float(depth.std()) > 0.01 else 0.0


def check_boxes(boxes: Sequence[Box]) -> float:
    """A detector's boxes, each past the detector's own threshold: vouched for by how
    sure it is of them (0.55 for the least sure it gives, 0.95 for a sure one); none
    found, nothing to vouch for."""
    if not boxes:
        return 0.0
    return float(np.clip(0.55 + 0.4 * max(b.score for b in boxes), 0.0, 0.95))


def check_text_boxes(boxes: list[TextBox]) -> float:
    return float(np.mean([b.score for b in boxes])) if boxes else 0.0


#: kinds whose tools change the whole picture (or its size): judged on all of it
WHOLE_PICTURE = {
    K.IMAGE_DEBLURRING,
    K.BACKGROUND_REMOVAL,
    K.IMAGE_UPSCALING,
    K.OUTPAINTING,
    K.CROP,
    K.ROTATION,
}
#: context kept around what a step changed: the checks' rings and tolerances reach this far
MARGIN = 64


def _shifted(tb: TextBox, dx: int, dy: int) -> TextBox:
    move = lambda b: Box(b.x0 + dx, b.y0 + dy, b.x1 + dx, b.y1 + dy, b.label, b.score)  # noqa: E731
    return replace(tb, box=move(tb.box), ink=move(tb.ink) if tb.ink is not None else None)


def analysis_region(
    shape: tuple[int, ...], window: Box | None, mask: np.ndarray | None, boxes: list[TextBox]
) -> Box:
    """What a step's check looks at: the window it changed, its subtask's mask and text
    boxes, with MARGIN pixels of context; the whole picture when the window is unknown."""
    if window is None:
        return full_box(shape)
    region = union_box(
        [window, mask_box(mask) if mask is not None else None, *(b.box for b in boxes)]
    )
    # text is read back with a margin of its own height (a tight crop hides short words)
    margin = max([MARGIN, *(b.box.height for b in boxes)])
    return grow_box(region, margin, shape) if region is not None else full_box(shape)


def judge(
    subtask: Subtask,
    produced: Values,
    state: Values,
    before: np.ndarray,
    as_kind: SubtaskKind | None = None,
    window: Box | None = None,
    found: bool = False,
    critic: Critic | None = None,
    colours: ColourNames = parse_color,
    selection: np.ndarray | None = None,
    earlier: Sequence[Earlier] = (),
    trial: Callable[[], Trial] | None = None,
) -> Verdict:
    """Quality of one tool step, and what is wrong with it in plain words: the lowest of
    the experts' opinions (engine/experts.py), which the verdict carries. `produced` is
    what the step made, `state` everything the path holds now (masks, text boxes),
    `before` the image the step started from.
    `as_kind` judges a helper step by its own job (an erase inside a text replacement
    is checked as a text removal). `window`: where the image may have changed; the
    checks look there and around it only, never at the rest of a large photo. A region
    a finder `found` (not the user's mask) is judged for being the right one. A
    finishing step is also judged for the tones it clipped, for undoing an `earlier`
    subtask of the run, and by the `critic` (CLIP, a VLM) when there is one. A removal's
    `trial` makes the same fill on ground nearby, where varied ground leaves the checks
    unable to say what belongs in the hole (engine/checks/removal.py)."""
    kind = as_kind or subtask.kind
    what = finder_for(subtask.target)
    if found and what in ALONG_EDGES and isinstance(produced.get(ArtifactKind.MASK), np.ndarray):
        # a region a finder found, not one the user gave: the picture must vouch for it
        region = produced[ArtifactKind.MASK]
        return check_found_region(what, before, region.astype(bool))
    if ArtifactKind.IMAGE not in produced:
        return Verdict(_score_artifact(subtask, produced))
    full_after = produced[ArtifactKind.IMAGE]
    full_mask = state.get(ArtifactKind.MASK)
    full_boxes = select_text_boxes(state.get(ArtifactKind.TEXT_BOXES, ()), subtask.params)
    if kind in WHOLE_PICTURE or full_after.shape != before.shape:
        region = full_box(before.shape)
        after, start = full_after, before  # (a grown picture is judged whole)
    else:
        region = analysis_region(before.shape, window, full_mask, full_boxes)
        after, start = crop(full_after, region), crop(before, region)
    if full_mask is not None and full_mask.shape == before.shape[:2]:
        mask = crop(full_mask, region)
    else:
        mask = np.zeros(after.shape[:2], dtype=bool)
    boxes = [_shifted(b, -region.x0, -region.y0) for b in full_boxes]
    checkers: dict[SubtaskKind, Callable[[], Verdict | float]] = {
        K.OBJECT_RECOLORATION: lambda: check_recolour(
            start, after, mask, subtask.to or "", colours
        ),
        K.OBJECT_REMOVAL: lambda: check_removal(start, after, mask, trial),
        K.TEXT_REPLACEMENT: lambda: check_text_replacement(start, after, boxes, subtask.to or ""),
        K.TEXT_REMOVAL: lambda: check_text_removal(start, after, boxes),
        K.TEXT_REDACTION: lambda: check_text_gone(start, after, boxes),
        K.TEXT_ADDITION: lambda: check_text_added(after, subtask.to or ""),
        K.KEYWORD_HIGHLIGHTING: lambda: check_changed_in(start, after, boxes),
        K.IMAGE_DEBLURRING: lambda: check_sharpened(start, after),
        K.BACKGROUND_REMOVAL: lambda: check_cutout(start, after),
        K.IMAGE_UPSCALING: lambda: check_upscaled(start, after, subtask.params.get("factor")),
        K.OUTPAINTING: lambda: check_outpainted(start, after, produced.get(ArtifactKind.PLACEMENT)),
        K.REGION_ADJUSTMENT: lambda: check_adjustment(
            subtask.params, start, after, ~mask if subtask.params.get("outside") else mask
        ),
        K.CHANGING_SCENERY: lambda: check_scenery(subtask, start, after, mask),
        K.CROP: lambda: check_cropped(
            start, after, produced.get(ArtifactKind.PLACEMENT), subtask.params, full_mask
        ),
        K.ROTATION: lambda: check_rotated(start, after, subtask.params),
        K.PHOTO_ADJUSTMENT: lambda: check_adjustment(
            subtask.params, start, after, _scope(after.shape, window, region, selection)
        ),
    }
    check = checkers.get(kind, lambda: check_generated(subtask, start, after, mask))
    made = check()
    verdict = made if isinstance(made, Verdict) else Verdict(made)
    verdict = replace(verdict, score=float(np.clip(verdict.score, 0.0, 1.0)))
    said = critic.opinions(subtask, before, full_after) if critic and as_kind is None else ()
    if verdict.critic_decides and any(o.expert == Expert.MEANING for o in said):
        # the critic reads the meaning the checks cannot: its opinion stands in for theirs
        verdict = Verdict(0.92 * verdict.untouched, untouched=verdict.untouched)
    opinions = list(checker_opinions(verdict, subtask))
    if as_kind is None:  # a finishing step: the other experts look too
        opinions.append(aesthetics(subtask, start, after, colours))
        opinions.append(consistency(subtask, before, full_after, window, earlier))
        opinions.extend(said)
    return aggregate(verdict, [o for o in opinions if o is not None])


def _scope(
    shape: tuple[int, ...], window: Box | None, region: Box, selection: np.ndarray | None
) -> np.ndarray | None:
    """Where a whole-picture adjustment was asked, within the analysed region: the
    selection when there is one, else the step's window; None: the whole picture."""
    if window is None:
        return None
    if selection is not None and selection.any():
        return crop(selection, region).copy()
    mask = np.zeros(shape[:2], dtype=bool)
    mask[
        window.y0 - region.y0 : window.y1 - region.y0, window.x0 - region.x0 : window.x1 - region.x0
    ] = True
    return mask


def _score_artifact(subtask: Subtask, produced: Values) -> float:
    """A step that made no picture: its mask, caption, answer, depth or text boxes."""
    if ArtifactKind.MASK in produced:
        return check_mask(produced[ArtifactKind.MASK])
    if ArtifactKind.CAPTION in produced:
        return 0.85 if len(str(produced[ArtifactKind.CAPTION]).split()) >= 2 else 0.0
    if ArtifactKind.ANSWER in produced:  # a span of the text, or a label: not empty
        return 0.8 if str(produced[ArtifactKind.ANSWER]).strip() else 0.0
    if ArtifactKind.DEPTH in produced:
        return check_depth(produced[ArtifactKind.DEPTH])
    if ArtifactKind.TEXT_BOXES in produced:
        return check_text_boxes(
            select_text_boxes(produced[ArtifactKind.TEXT_BOXES], subtask.params)
        )
    if ArtifactKind.BOXES in produced:
        return check_boxes(produced[ArtifactKind.BOXES])
    return 0.0  # nothing a check knows how to read: not vouched for
