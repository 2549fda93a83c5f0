"""The vocabulary shared by tools and engine: subtask kinds, artifact kinds, values.

It lives in tools/ because tools sit below the engine and both need it;
`layerpath.engine.types` re-exports it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np


class SubtaskKind(str, Enum):
    """The 24 subtasks of CoSTA* and layerpath's adjustments; values are the stable ids
    used in JSON and reports."""

    OBJECT_DETECTION = "object_detection"
    OBJECT_SEGMENTATION = "object_segmentation"
    OBJECT_ADDITION = "object_addition"
    OBJECT_REMOVAL = "object_removal"
    OBJECT_REPLACEMENT = "object_replacement"
    OBJECT_RECOLORATION = "object_recoloration"
    BACKGROUND_REMOVAL = "background_removal"
    LANDMARK_DETECTION = "landmark_detection"
    IMAGE_UPSCALING = "image_upscaling"
    IMAGE_CAPTIONING = "image_captioning"
    IMAGE_DEBLURRING = "image_deblurring"
    CHANGING_SCENERY = "changing_scenery"
    OUTPAINTING = "outpainting"
    DEPTH_ESTIMATION = "depth_estimation"
    TEXT_EXTRACTION = "text_extraction"
    TEXT_REPLACEMENT = "text_replacement"
    TEXT_REMOVAL = "text_removal"
    TEXT_ADDITION = "text_addition"
    TEXT_REDACTION = "text_redaction"
    TEXT_DETECTION = "text_detection"
    QUESTION_ANSWERING = "question_answering"
    KEYWORD_HIGHLIGHTING = "keyword_highlighting"
    SENTIMENT_ANALYSIS = "sentiment_analysis"
    CAPTION_CONSISTENCY = "caption_consistency"
    # beyond the paper: a photographer's everyday adjustments (tools/adjust.py)
    PHOTO_ADJUSTMENT = "photo_adjustment"  # the whole picture, or the selection
    REGION_ADJUSTMENT = "region_adjustment"  # inside a named or found region
    CROP = "crop"  # to a ratio or around a region (tools/geometry.py)
    ROTATION = "rotation"  # by degrees, straighten, flip

    @property
    def label(self) -> str:
        """The paper's name, for people: 'Object Removal'."""
        return self.value.replace("_", " ").title()


class ArtifactKind(str, Enum):
    """The ports of the tool dependency graph."""

    IMAGE = "image"
    BOXES = "boxes"
    MASK = "mask"
    TEXT_BOXES = "text_boxes"
    TEXT = "text"
    FONT = "font"
    LABEL = "label"
    CAPTION = "caption"
    DEPTH = "depth"
    ANSWER = "answer"
    PLACEMENT = "placement"  # (x, y) of the old picture inside a grown one (outpainting)


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in image pixels, x1/y1 exclusive."""

    x0: int
    y0: int
    x1: int
    y1: int
    label: str = ""
    score: float = 1.0

    @property
    def width(self) -> int:
        return self.x1 - self.x0

    @property
    def height(self) -> int:
        return self.y1 - self.y0


@dataclass(frozen=True)
class TextBox:
    """A line of text found in the image: its box, what it reads, how sure OCR is, and
    the style a writer needs to match it (ink bounds, ink and background colours, and
    the installed font file it looks set in, when that was recognised)."""

    box: Box
    text: str
    score: float
    ink: Box | None = None
    color: tuple[int, int, int] = (0, 0, 0)
    background: tuple[int, int, int] = (255, 255, 255)
    font: str | None = None


@dataclass(frozen=True, eq=False)
class Artifact:
    """One value flowing between tools. `id` names its provenance, so equal ids mean
    equal values: memoisation keys on ids, never on pixels."""

    kind: ArtifactKind
    value: Any
    id: str


@dataclass(frozen=True)
class Prior:
    """Benchmark-table entry: expected seconds and quality of a tool on a subtask."""

    cost: float
    quality: float


@dataclass(frozen=True)
class Availability:
    """Whether a tool can run here; when not, why and the command or step that fixes it."""

    reason: str | None = None
    fix: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None


@dataclass(frozen=True)
class Remedy:
    """What a tool's next try changes when the experts found one of `when` (a defect's
    name or pattern, or an expert's: 'meaning', 'aesthetics') in its result: parameters
    `set` to a value, `step`ped by an amount or scaled by a `factor`, each kept within
    its `limits`; `why` says it in a photographer's words ('a stronger colour')."""

    when: tuple[str, ...]
    why: str
    set: Mapping[str, Any] = field(default_factory=dict)
    step: Mapping[str, float] = field(default_factory=dict)
    factor: Mapping[str, float] = field(default_factory=dict)
    limits: Mapping[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolSpec:
    """The Model Description Table row of one tool, loaded from tools/data/catalogue.json."""

    name: str
    impl: str
    backend: str
    description: str
    subtasks: tuple[SubtaskKind, ...]
    inputs: tuple[ArtifactKind, ...]
    outputs: tuple[ArtifactKind, ...]
    priors: Mapping[SubtaskKind, Prior]
    helps: tuple[SubtaskKind, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    retry_params: tuple[Mapping[str, Any], ...] = ()
    # how its next try answers what the experts found (engine/judge/reflection.py)
    remedies: tuple[Remedy, ...] = ()
    model: str | None = None  # its weights, by name in tools/data/models.json
    requires: tuple[str, ...] = ()  # top-level Python modules it imports
    extra: str | None = None  # the pip extra that installs them
    install: str | None = None  # the command that installs them, when not an extra
    needs_gpu: bool = False  # too slow on a CPU to offer there
    # it hands on the user's own mask or selection: no finder, nothing guessed
    user_region: bool = False
    label: str = ""  # what the step does, in a photographer's words ('Fill in (texture)')

    def param_schedule(self) -> tuple[Mapping[str, Any], ...]:
        """Default params first, then each retry entry laid over them."""
        base = dict(self.params)
        return (base, *({**base, **retry} for retry in self.retry_params))


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know of the request: the subtask's words and the user's masks."""

    subtask: SubtaskKind
    target: str | None = None
    to: str | None = None
    subtask_params: Mapping[str, Any] = field(default_factory=dict)
    masks: Mapping[str, np.ndarray] = field(default_factory=dict)
    selection: np.ndarray | None = None
    cancelled: Callable[[], bool] = lambda: False
    progress: Callable[[float], None] = lambda share: None  # a long tool: 0..1 done
    # a colour's name -> RGB in the picture's own colour space (kit/colours.colours_in);
    # None: sRGB
    colours: Callable[[str], tuple[int, int, int]] | None = None
    # the reference pictures the user gave, by name (RGB; engine/plan/references.py)
    references: Mapping[str, np.ndarray] = field(default_factory=dict)

    def colour(self, name: str) -> tuple[int, int, int]:
        """The named colour in the picture's own values."""
        if self.colours is not None:
            return self.colours(name)
        from layerpath.kit.colours import parse_color

        return parse_color(name)

    def words(self) -> str:
        """The subtask's words as one string (kind, target, to, params): what besides its
        inputs and params makes two calls of a tool the same call."""
        wording = [self.subtask.value, self.target, self.to, dict(self.subtask_params)]
        return json.dumps(wording, sort_keys=True, default=str)


@dataclass(frozen=True)
class ToolResult:
    """A tool's outputs; `cost`: the seconds the work took, when the tool knows better
    than the clock around its call (a result replayed from a benchmark's cache, or a
    call that also prepared a library once: pymatting compiled on its first use);
    `window`: for an image the same size as the input, the box outside which it equals
    the input (the engine finds it when a tool does not say); `settled`: parameters the
    tool chose for itself from this input (patch_fill: a smooth fill or copied
    patches), so that the same tool tried elsewhere to vouch for this result works the
    same way; `everywhere`: the image is the whole picture worked over as one (a global
    adjustment or look, not a region's edit), so its step layer is that picture whole,
    not only the pixels whose values happened to change."""

    outputs: Mapping[ArtifactKind, Any]
    cost: float | None = None
    window: Box | None = None
    settled: Mapping[str, Any] = field(default_factory=dict)
    everywhere: bool = False
