"""Engine values: subtasks, requests, step layers, run results.

The shared vocabulary (SubtaskKind, ArtifactKind, Box, ...) comes from kit/types.py
and is re-exported here so engine users need one import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from layerpath.choices import Mode as Mode  # (re-exported: the engine's own)
from layerpath.engine.judge.checks.verdict import Expert, Opinion
from layerpath.errors import BadInput, shown
from layerpath.kit.types import (
    Artifact,
    ArtifactKind,
    Box,
    Prior,
    SubtaskKind,
    TextBox,
    ToolContext,
    ToolResult,
    ToolSpec,
)

if TYPE_CHECKING:
    from layerpath.engine.learn.actions import Action

__all__ = [
    "Artifact",
    "ArtifactKind",
    "Box",
    "EditRequest",
    "Failure",
    "Expert",
    "LayerKind",
    "Mode",
    "Opinion",
    "Prior",
    "RunResult",
    "Snapshot",
    "StepLayer",
    "Subtask",
    "SubtaskKind",
    "SubtaskOutcome",
    "TextBox",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "ToolSpec",
]


class CostBasis(str, Enum):
    """What the search charges a tool call: its measured seconds (the default; the
    benchmark table learns them), or the table's expected cost for that tool, which
    makes runs repeatable (benchmarks) and learns nothing."""

    MEASURED = "measured"
    TABLE = "table"


class LayerKind(str, Enum):
    PIXELS = "pixels"
    MASK = "mask"
    BOXES = "boxes"
    TEXT = "text"


def adjustment_words(params: Mapping[str, Any]) -> str:
    """'Exposure +0.5', 'Black & white', 'Blur 0.5': an adjustment as a photographer
    reads it (kit/adjustments.py's names)."""
    from layerpath.kit.adjustments import ADJUSTMENTS

    spec = ADJUSTMENTS.get(str(params.get("op")))
    if spec is None:
        return "Adjustment"
    name = spec.name.split(" (")[0]
    if params.get("op") == "look":
        from layerpath.kit.looks import looks

        look = looks().get(str(params.get("look")))
        name = f"Look: {look.label if look else params.get('look')}"
    amount = params.get("amount")
    if amount is None or (spec.low >= 0 and float(amount) == spec.default == spec.high):
        return name
    signed = spec.low < 0
    return f"{name} {float(amount):+g}" if signed else f"{name} {float(amount):g}"


@dataclass(frozen=True)
class Subtask:
    """One step of the plan: 'recolor (kind) the wall (target) to yellow (to)'."""

    kind: SubtaskKind
    target: str | None = None
    to: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""

    def describe(self) -> str:
        words = [self.kind.label]
        from layerpath.engine.kinds import kind_spec  # (the kind table reads these types)

        if kind_spec(self.kind).adjustment:
            words = [adjustment_words(self.params)]
            if self.target and self.params.get("outside"):
                words.append("except")
        if self.target:
            words.append(f"'{shown(self.target)}'")
        if self.to:
            words.append(f"-> '{shown(self.to)}'")
        if self.params.get("graduated"):
            words.append(f"graduated from the {self.params['graduated']}")
        if self.params.get("ref"):
            words.append(f"(from {self.params['ref']})")
        return " ".join(words)

    def title(self) -> str:
        """What the subtask's layers are called, in a photographer's words ('Remove
        ball', 'Recolour wall to navy', 'Temperature +0.35 on sky'): no tool ids, no
        scores (those are the layer's details)."""
        from layerpath.engine.kinds import kind_spec

        spec = kind_spec(self.kind)
        if not spec.adjustment:
            return spec.title_of(self.target, self.to) or self.kind.label
        words = adjustment_words(self.params)
        if self.target:
            words += f" {'except' if self.params.get('outside') else 'on'} {shown(self.target, 60)}"
        if self.params.get("graduated"):
            words += f", graduated from the {self.params['graduated']}"
        return words

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "kind": self.kind.value, "target": self.target}
        if self.to is not None:
            data["to"] = self.to
        if self.params:
            data["params"] = dict(self.params)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Subtask:
        """The subtask to_json wrote (a run report's plan entry); a clear error when it
        is not one."""
        try:
            params = data.get("params") or {}
            if not isinstance(params, Mapping):
                raise TypeError("params")
            target, to = data.get("target"), data.get("to")
            return cls(
                SubtaskKind(data["kind"]),
                None if target is None else str(target),
                None if to is None else str(to),
                dict(params),
                str(data.get("id") or ""),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BadInput(f"This is not a subtask layerpath wrote ({exc}).") from exc


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The document as the engine sees it: RGBA 8-bit canvas, named masks, selection."""

    image: np.ndarray
    masks: Mapping[str, np.ndarray] = field(default_factory=dict)
    selection: np.ndarray | None = None
    # the colour profile the picture's values are in (None: sRGB)
    icc_profile: bytes | None = None
    # a 16-bit photo's picture at its depth (RGBA uint16; `image` is its 8-bit copy)
    deep: np.ndarray | None = None

    @property
    def size(self) -> tuple[int, int]:
        return int(self.image.shape[1]), int(self.image.shape[0])


@dataclass(frozen=True, eq=False)
class EditRequest:
    """One instruction to run on one snapshot. alpha: 0 = best quality, 2 = cheapest."""

    prompt: str
    snapshot: Snapshot
    alpha: float = 1.0
    mode: Mode = Mode.FAST_SLOW
    planner: str = "offline"
    quality_threshold: float = 0.5
    max_retries: int = 2  # tries of a tool after its first when the checks turn it down
    # a retry's parameters answer what the experts found (engine/judge/reflection.py); off:
    # the tool's fixed retry schedule, in order
    reflect: bool = True
    max_tool_calls: int = 200
    # a saved action to replay (engine/learn/actions.py): its subtasks instead of a plan, each
    # solved by exactly its saved tools and parameters, no search
    action: Action | None = None
    # the plan the user saw and confirmed (engine/execute/preview.py): run exactly it, unplanned
    plan: tuple[Subtask, ...] | None = None
    # pictures, notes and voice memos given beside the photo, by name
    # (engine/plan/references.py: Reference)
    references: Mapping[str, Any] = field(default_factory=dict)

    def context(
        self, subtask: Subtask, cancelled: Callable[[], bool] = lambda: False
    ) -> ToolContext:
        """What a tool may know of this request for one of its subtasks: the subtask's
        words, the user's masks and selection, colours by name in the picture's colour
        space, the reference pictures by name."""
        from layerpath.kit.colours import colours_in

        snapshot = self.snapshot
        return ToolContext(
            subtask.kind,
            subtask.target,
            subtask.to,
            subtask.params,
            snapshot.masks,
            snapshot.selection,
            cancelled,
            colours=colours_in(snapshot.icc_profile),
            references={
                name: ref.pixels for name, ref in self.references.items() if ref.pixels is not None
            },
        )


@dataclass(frozen=True, eq=False)
class StepLayer:
    """Exactly the change one tool step made: pixels cropped to the changed bounds at
    `offset`, or a mask / boxes / text result."""

    name: str
    kind: LayerKind
    tool: str
    subtask_id: str
    cost: float
    quality: float
    params: Mapping[str, Any]
    pixels: np.ndarray | None = None
    offset: tuple[int, int] = (0, 0)
    boxes: tuple[Box, ...] = ()
    text: str | None = None
    visible: bool = True
    # "normal", or "destination-in": a cut-out, keeping what lies below only where this
    # layer is opaque (background removal; the user's layer itself is not touched)
    blend: str = "normal"
    # the canvas (width, height) this step needs, when it grows the picture (upscaling):
    # the document grows to it; every other layer keeps its pixels and place
    canvas: tuple[int, int] | None = None
    # how far the step moves what was there (it grew the canvas on the left or top)
    shift: tuple[int, int] = (0, 0)
    # on a 16-bit photo: the same pixels at 16 bits (engine/execute/deepsteps.py)
    deep: np.ndarray | None = None
    # each expert's verdict on the step (engine/judge/experts.py)
    opinions: tuple[Opinion, ...] = ()


@dataclass(frozen=True)
class ToolCall:
    """One execution of a tool (memo hits are not calls)."""

    tool: str
    subtask_id: str
    seconds: float
    quality: float
    passed: bool
    params: Mapping[str, Any]
    error: str | None = None
    attempt: int = 1  # which try of this tool on this input (1: the first)
    why: str = ""  # why a retry's parameters are what they are (engine/judge/reflection.py)
    opinions: tuple[Opinion, ...] = ()  # each expert's verdict on the result

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "tool": self.tool,
            "subtask": self.subtask_id,
            "seconds": round(self.seconds, 4),
            "quality": round(self.quality, 4),
            "passed": self.passed,
            "params": dict(self.params),
            "attempt": self.attempt,
        }
        if self.why:
            data["why"] = self.why
        if self.opinions:
            data["experts"] = [o.to_json() for o in self.opinions]
        if self.error:
            data["error"] = self.error
        return data


@dataclass(frozen=True)
class Failure:
    """Why a subtask failed, in parts each host shows as it needs: `reason` in plain
    words, the tools the search `tried` with their scores, what the checks found wrong
    with the best attempt (`turned_down`, made `by` a tool), what `helps`, and what is
    `kept` as a hidden layer to look at. `region` names the target when the user's
    own mask or selection of it would settle the failure (nothing found it, or what was
    found was doubted): each host says how to give one. `plain()` is a photographer's
    sentence (no tool ids, no scores); `str()` the whole one the report and the command
    line print."""

    reason: str
    tried: tuple[str, ...] | None = None
    turned_down: str = ""
    by: str = ""
    helps: str = ""
    kept: str = ""  # 'the best attempt', 'the region it found'
    region: str = ""

    def plain(self) -> str:
        return self._said(with_ids=False)

    def __str__(self) -> str:
        return self._said(with_ids=True)

    def _said(self, with_ids: bool) -> str:
        text = self.reason
        if with_ids and self.tried is not None:
            text += f" (tried {', '.join(self.tried) or 'nothing'})"
        if self.turned_down:
            by = f" ({self.by})" if with_ids and self.by else ""
            text += f"; the best attempt{by} was turned down: {self.turned_down}"
        if self.helps:
            text += f". {self.helps}"
        if self.kept:
            text += f"; {self.kept} is kept as a hidden layer"
        return text


@dataclass(frozen=True, eq=False)
class SubtaskOutcome:
    """How one subtask ended: `solved_by` is 'rule:<id>', 'search' or 'failed'."""

    subtask: Subtask
    solved_by: str
    tools: tuple[str, ...]
    steps: tuple[StepLayer, ...]
    cost: float
    quality: float
    fallback_reason: str | None = None
    error: str | None = None
    features: Mapping[str, Any] = field(default_factory=dict)
    start_image: np.ndarray | None = None  # the picture the subtask started from (no copy)
    # the parameters each tool of the accepted path ran with (what an action replays)
    params: tuple[Mapping[str, Any], ...] = ()
    # what each of those tools chose for itself from its input (a contrast's pivot): how
    # it is made again on a lattice of colours (engine/files/cube.py), not replayed
    settled: tuple[Mapping[str, Any], ...] = ()
    # each expert's verdict on the last step of the accepted path (on failure: of the
    # best attempt the checks turned down)
    opinions: tuple[Opinion, ...] = ()
    # where the rule that served it comes from, in words ('' for the search)
    origin: str = ""
    # why it failed, in parts (`error` is the whole sentence)
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.solved_by != "failed"


@dataclass(frozen=True, eq=False)
class RunResult:
    """Everything a run produced: the plan, per-subtask outcomes, every tool call,
    the final image."""

    request: EditRequest
    plan: tuple[Subtask, ...]
    outcomes: tuple[SubtaskOutcome, ...]
    calls: tuple[ToolCall, ...]
    image: np.ndarray
    seconds: float
    warnings: tuple[str, ...] = ()
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return not self.cancelled and all(o.ok for o in self.outcomes)
