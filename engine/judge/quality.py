"""Quality checks: a checker per subtask kind (engine/kinds.py) scores q in [0, 1] from
the images.

Checks look at the pixels themselves (and OCR for text): recolour hits the target
colour while keeping luminance structure; removal fills like the surrounding ring
without a seam; text edits read back as expected. Every image check also demands
that nothing changed outside the edited region.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from layerpath.engine.judge.checks.picture import (
    UNVOUCHED,
    check_boxes,
    check_depth,
    check_mask,
    check_text_boxes,
)
from layerpath.engine.judge.checks.region import check_found_region
from layerpath.engine.judge.checks.removal import Trial
from layerpath.engine.judge.checks.verdict import Expert, Verdict
from layerpath.engine.judge.experts import (
    Earlier,
    aesthetics,
    aggregate,
    checker_opinions,
    consistency,
)
from layerpath.engine.kinds import Judged, kind_spec
from layerpath.engine.types import ArtifactKind, Box, Subtask, SubtaskKind, TextBox
from layerpath.kit.colours import ColourNames, parse_color
from layerpath.kit.imaging import mask_box
from layerpath.kit.names import ALONG_EDGES, finder_for, select_text_boxes
from layerpath.kit.regions import crop, full_box, grow_box, union_box

if TYPE_CHECKING:
    from layerpath.engine.judge.critics import Critic

Values = Mapping[ArtifactKind, Any]


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
    the experts' opinions (engine/judge/experts.py), which the verdict carries. `produced` is
    what the step made, `state` everything the path holds now (masks, text boxes),
    `before` the image the step started from.
    `as_kind` judges a helper step by its own job (an erase inside a text replacement
    is checked as a text removal). `window`: where the image may have changed; the
    checks look there and around it only, never at the rest of a large photo. A region
    a finder `found` (not the user's mask) is judged for being the right one. A
    finishing step is also judged for the tones it clipped, for undoing an `earlier`
    subtask of the run, and by the `critic` (CLIP, a VLM) when there is one. A removal's
    `trial` makes the same fill on ground nearby, where varied ground leaves the checks
    unable to say what belongs in the hole (engine/judge/checks/removal.py)."""
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
    full_boxes = select_text_boxes(
        state.get(ArtifactKind.TEXT_BOXES, ()),
        subtask.params,
        replacing=subtask.kind == SubtaskKind.TEXT_REPLACEMENT,
        selection=selection,
    )
    spec = kind_spec(kind)
    if spec.whole or full_after.shape != before.shape:
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
    check = spec.check
    if check is None:  # a picture made for a kind nothing here can judge: not vouched for
        unchecked = f"{UNVOUCHED}: layerpath has no check for {kind.label}"
        made: Verdict | float = Verdict(0.0, unchecked, {UNVOUCHED: 2.0})
    else:
        made = check(
            Judged(
                subtask,
                start,
                after,
                mask,
                boxes,
                produced,
                region,
                window,
                full_mask,
                selection,
                colours,
                trial,
            )
        )
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
