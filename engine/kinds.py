"""One record per subtask kind: everything the engine knows of a kind of edit.

Each SubtaskKind has a KindSpec here, and nowhere else says what a kind is: how its
result is checked, whether it changes the whole picture, whether a later step must
keep it, where it goes in the order of frame changes, how it meets text, what a
critic should see once it is done, which of its artefacts are shown, and whether it
has an amount to change. A new kind is its enum member (kit/types.py), one record
here, a planner rule, its checker (engine/judge/checks/) and a catalogue entry for a tool
that does it. A kind whose tools make a picture and whose record names no checker
fails closed: the result is not vouched for (engine/judge/quality.py).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from layerpath.engine.judge.checks.adjust import check_adjustment
from layerpath.engine.judge.checks.cutout import check_cutout
from layerpath.engine.judge.checks.geometry import check_cropped, check_rotated
from layerpath.engine.judge.checks.picture import (
    check_changed_in,
    check_generated,
    check_outpainted,
    check_scenery,
    check_sharpened,
    check_upscaled,
)
from layerpath.engine.judge.checks.recolour import check_recolour
from layerpath.engine.judge.checks.removal import Trial, check_removal
from layerpath.engine.judge.checks.text import (
    check_text_added,
    check_text_gone,
    check_text_removal,
    check_text_replacement,
)
from layerpath.engine.judge.checks.verdict import Verdict
from layerpath.errors import shown
from layerpath.kit.colours import ColourNames
from layerpath.kit.regions import crop
from layerpath.kit.types import ArtifactKind, Box, SubtaskKind, TextBox

if TYPE_CHECKING:  # (engine/types.py reads this table at run time, lazily)
    from layerpath.engine.types import Subtask

K = SubtaskKind


@dataclass(frozen=True)
class Judged:
    """What a kind's checker reads of one step: the pictures before and after it and
    the subtask's mask and text boxes, all cropped to the region the check looks at
    (`region`, in the photo's pixels), and what else the step made."""

    subtask: Subtask
    start: np.ndarray
    after: np.ndarray
    mask: np.ndarray  # all False: the subtask has none
    boxes: Sequence[TextBox]
    produced: Mapping[ArtifactKind, Any]
    region: Box
    window: Box | None  # where the step may have changed the picture (None: unknown)
    full_mask: np.ndarray | None  # the subtask's mask on the whole photo
    selection: np.ndarray | None  # the user's selection on the whole photo
    colours: ColourNames
    trial: Callable[[], Trial] | None  # a removal's fills made on ground nearby

    @property
    def to(self) -> str:
        return self.subtask.to or ""

    @property
    def params(self) -> Mapping[str, Any]:
        return self.subtask.params

    def scope(self) -> np.ndarray | None:
        """Where a whole-picture adjustment was asked, within the analysed region: the
        selection when there is one, else the step's window; None: the whole picture."""
        if self.window is None:
            return None
        if self.selection is not None and self.selection.any():
            return crop(self.selection, self.region).copy()
        w, r = self.window, self.region
        if w.x0 <= r.x0 and w.y0 <= r.y0 and w.x1 >= r.x1 and w.y1 >= r.y1:
            return None  # (the window holds all of it)
        inside = np.zeros(self.after.shape[:2], dtype=bool)
        inside[w.y0 - r.y0 : w.y1 - r.y0, w.x0 - r.x0 : w.x1 - r.x0] = True
        return inside


Checker = Callable[[Judged], "Verdict | float"]


@dataclass(frozen=True)
class KindSpec:
    """What the engine knows of one kind of subtask."""

    #: judges a step that made a picture (None: its tools make none; one that does
    #: anyway is not vouched for)
    check: Checker | None = None
    #: its tools change the whole picture or its size: judged on all of it
    whole: bool = False
    #: it changes the picture's tones: the aesthetics expert looks for clipping
    tonal: bool = False
    #: a local edit a later step could undo: its check runs again where one overlaps it
    kept: bool = False
    #: it changes what it touches on purpose, an earlier result too ('recolour the car,
    #: then make it black and white'): no step before it is held against it
    overrides: bool = False
    #: its place among the frame changes, done after every other edit in this order
    frame: int | None = None
    #: it edits the picture's text / it reads text (a reader follows an edit) / it works
    #: on the text boxes found in the picture
    edits_text: bool = False
    reads_text: bool = False
    on_text_boxes: bool = False
    #: its new value is words, not a colour or a thing ('replace the text with OPEN')
    to_is_words: bool = False
    #: what the picture should show once it is done, for a critic ({target}, {to},
    #: {thing}: the new thing or else the target)
    goal: str | None = None
    #: the text boxes it reads are shown as a visible layer (else hidden)
    shows_text_boxes: bool = False
    #: the mask it makes is shown as a visible layer (else hidden)
    shows_mask: bool = False
    #: an adjustment: its op and amount are the user's to change, its name says both
    adjustment: bool = False
    #: what its layers are called, in a photographer's words ({target}, {to}, {thing}:
    #: the new thing or else the target); an adjustment's are its amount's words
    title: str = ""

    def title_of(self, target: str | None, to: str | None) -> str:
        """The title with the subtask's words in it; where a word it needs is missing, the
        part of the title before it ('Recolour {target} to {to}' with no colour:
        'Recolour wall')."""
        values = {"target": target, "to": to, "thing": to or target}
        words = []
        for text, field, _, _ in string.Formatter().parse(self.title):
            words.append(text)
            if field is not None:
                value = values.get(field)
                if value is None:
                    break
                words.append(shown(value, 60))
        said = " ".join("".join(words).split()).rstrip(" :")
        return said[:1].upper() + said[1:]

    def goal_phrase(self, target: str | None, to: str | None) -> str | None:
        if self.goal is None:
            return None
        target, to = target or "object", to or ""
        return self.goal.format(target=target, to=to, thing=to or target)


def _adjustment_check(j: Judged) -> Verdict | float:
    outside = j.params.get("outside")
    return check_adjustment(j.params, j.start, j.after, ~j.mask if outside else j.mask)


def _generated(j: Judged) -> Verdict:
    return check_generated(j.subtask, j.start, j.after, j.mask)


#: the record of every kind (a test checks that none is missing)
KINDS: Mapping[SubtaskKind, KindSpec] = {
    K.OBJECT_DETECTION: KindSpec(title="Find {target}"),
    K.OBJECT_SEGMENTATION: KindSpec(title="Select {target}", shows_mask=True),
    K.OBJECT_ADDITION: KindSpec(
        title="Add {thing}", check=_generated, tonal=True, goal="a photo with a {thing}"
    ),
    K.OBJECT_REMOVAL: KindSpec(
        title="Remove {target}",
        check=lambda j: check_removal(j.start, j.after, j.mask, j.trial),
        kept=True,
        goal="a photo without a {target}",
    ),
    K.OBJECT_REPLACEMENT: KindSpec(
        title="Replace {target} with {to}", check=_generated, tonal=True, kept=True, goal="a {to}"
    ),
    K.OBJECT_RECOLORATION: KindSpec(
        title="Recolour {target} to {to}",
        check=lambda j: check_recolour(j.start, j.after, j.mask, j.to, j.colours),
        tonal=True,
        kept=True,
        goal="a {to} {target}",
    ),
    K.BACKGROUND_REMOVAL: KindSpec(
        title="Remove the background",
        check=lambda j: check_cutout(j.start, j.after),
        whole=True,
        overrides=True,
        goal="a {target} on a plain background",
    ),
    K.LANDMARK_DETECTION: KindSpec(title="Name the landmark"),
    K.IMAGE_UPSCALING: KindSpec(
        title="Enlarge",
        check=lambda j: check_upscaled(j.start, j.after, j.params.get("factor")),
        whole=True,
        overrides=True,
        frame=3,
        goal="a sharp, detailed photo",
    ),
    K.IMAGE_CAPTIONING: KindSpec(title="Describe the picture"),
    K.IMAGE_DEBLURRING: KindSpec(
        title="Sharpen",
        # (not tonal: deblurring restores edges a blur took from the clip; its check
        # judges halos)
        check=lambda j: check_sharpened(j.start, j.after),
        whole=True,
        overrides=True,
        goal="a sharp photo",
    ),
    K.CHANGING_SCENERY: KindSpec(
        title="{target}: {to}",
        check=lambda j: check_scenery(j.subtask, j.start, j.after, j.mask),
        tonal=True,
        overrides=True,
        goal="a photo of {to}",
    ),
    K.OUTPAINTING: KindSpec(
        title="Extend the canvas",
        check=lambda j: check_outpainted(j.start, j.after, j.produced.get(ArtifactKind.PLACEMENT)),
        whole=True,
        overrides=True,
        frame=2,
        goal="a wider photo",
    ),
    K.DEPTH_ESTIMATION: KindSpec(title="Depth"),
    K.TEXT_EXTRACTION: KindSpec(
        title="Read the text", reads_text=True, on_text_boxes=True, shows_text_boxes=True
    ),
    K.TEXT_REPLACEMENT: KindSpec(
        title="Text: {to}",
        check=lambda j: check_text_replacement(j.start, j.after, list(j.boxes), j.to),
        kept=True,
        edits_text=True,
        on_text_boxes=True,
        to_is_words=True,
    ),
    K.TEXT_REMOVAL: KindSpec(
        title="Remove the text",
        check=lambda j: check_text_removal(j.start, j.after, list(j.boxes)),
        kept=True,
        edits_text=True,
        on_text_boxes=True,
    ),
    K.TEXT_ADDITION: KindSpec(
        title="Add text: {to}",
        check=lambda j: check_text_added(j.after, j.to),
        kept=True,
        edits_text=True,
        to_is_words=True,
    ),
    K.TEXT_REDACTION: KindSpec(
        title="Redact the text",
        check=lambda j: check_text_gone(j.start, j.after, list(j.boxes)),
        overrides=True,
        edits_text=True,
        on_text_boxes=True,
    ),
    K.TEXT_DETECTION: KindSpec(
        title="Find the text", reads_text=True, on_text_boxes=True, shows_text_boxes=True
    ),
    K.QUESTION_ANSWERING: KindSpec(title="Answer", reads_text=True),
    K.KEYWORD_HIGHLIGHTING: KindSpec(
        title="Highlight {to}",
        check=lambda j: check_changed_in(j.start, j.after, list(j.boxes)),
        overrides=True,
        reads_text=True,
        on_text_boxes=True,
    ),
    K.SENTIMENT_ANALYSIS: KindSpec(title="Tone of the text", reads_text=True),
    K.CAPTION_CONSISTENCY: KindSpec(title="Check the caption", to_is_words=True),
    K.PHOTO_ADJUSTMENT: KindSpec(
        check=lambda j: check_adjustment(j.params, j.start, j.after, j.scope()),
        tonal=True,
        overrides=True,
        adjustment=True,
    ),
    K.REGION_ADJUSTMENT: KindSpec(check=_adjustment_check, tonal=True, kept=True, adjustment=True),
    K.CROP: KindSpec(
        title="Crop",
        check=lambda j: check_cropped(
            j.start, j.after, j.produced.get(ArtifactKind.PLACEMENT), j.params, j.full_mask
        ),
        whole=True,
        overrides=True,
        frame=1,
    ),
    K.ROTATION: KindSpec(
        title="Rotate",
        check=lambda j: check_rotated(j.start, j.after, j.params),
        whole=True,
        overrides=True,
        frame=0,
    ),
}


def kind_spec(kind: SubtaskKind) -> KindSpec:
    """The record of `kind`; a kind without one has no checker and is treated as
    nothing special (so its results fail closed)."""
    return KINDS.get(kind, _UNKNOWN)


_UNKNOWN = KindSpec()
