"""Scoring a run against a task's ground truth: each subtask gets 0, 0.5 (partial) or 1,
as the CoSTA* human rubric does by eye, with the reason; a task's accuracy is the mean.

The scorer looks at what the run returned (the final picture and each subtask's step
layers), brought back to the scene's frame when the canvas grew (outpainting moves the
picture, upscaling scales it). Text is read back with the same OCR the engine has
(rapidocr): the only offline reader there is. Whatever changed outside the regions the
task's subtasks may change ("untouched pixels elsewhere") caps every subtask at partial.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from layerpath.benchmarks.suite import Task, Truth
from layerpath.engine.types import LayerKind, RunResult, StepLayer, SubtaskOutcome
from layerpath.kit.colours import color_lab, parse_color, to_lab
from layerpath.kit.imaging import dilate, erode, mask_box
from layerpath.kit.types import Box, SubtaskKind, TextBox
from layerpath.tools.ocr import read_text_again

K = SubtaskKind
PARTIAL = 0.5
COLLATERAL_SHARE = 0.02  # of the pixels outside every region, changed: more is damage
COLLATERAL_LEVEL = 40  # a channel difference that counts as a change (resampling is less)


@dataclass(frozen=True)
class SubtaskScore:
    kind: SubtaskKind
    score: float  # 0, 0.5 or 1
    reason: str


@dataclass(frozen=True)
class TaskScore:
    task_id: str
    scores: tuple[SubtaskScore, ...]
    collateral: float  # share of the pixels outside every region that changed

    @property
    def accuracy(self) -> float:
        return float(np.mean([s.score for s in self.scores])) if self.scores else 0.0


@dataclass
class Frame:
    """The run's final picture in the scene's frame, and where the scene lies in it."""

    image: np.ndarray  # RGBA at the scene's size
    final: np.ndarray  # the whole final picture
    origin: tuple[int, int]  # the scene's top-left corner in the final picture
    scale: float


def in_scene_frame(task: Task, result: RunResult) -> Frame:
    """Undo the canvas growth the steps report: outpainting moves the picture (its
    step's shift), upscaling scales it (its canvas over the one before)."""
    h, w = task.scene.image.shape[:2]
    x, y, scale = 0.0, 0.0, 1.0
    size = (w, h)
    for outcome in result.outcomes:
        for step in outcome.steps:
            if step.canvas is None:
                continue
            if outcome.subtask.kind == K.IMAGE_UPSCALING:
                factor = step.canvas[0] / size[0]
                x, y, scale = x * factor, y * factor, scale * factor
            else:
                x, y = x + step.shift[0], y + step.shift[1]
            size = step.canvas
    final = result.image
    x0, y0 = int(round(x)), int(round(y))
    x1, y1 = x0 + int(round(w * scale)), y0 + int(round(h * scale))
    window = final[y0:y1, x0:x1]
    if window.shape[:2] != (h, w):
        window = cv2.resize(window, (w, h), interpolation=cv2.INTER_AREA)
    return Frame(window, final, (x0, y0), scale)


# --- helpers --------------------------------------------------------------------------


def mean_lab(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.asarray(to_lab(image[..., :3][mask][None].astype(np.uint8))[0].mean(axis=0))


def delta_e(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a, float) - np.asarray(b, float)))


def words(text: str | None) -> str:
    """Upper case letters and digits, single spaces: how texts are compared."""
    return " ".join(re.sub(r"[^A-Z0-9]+", " ", (text or "").upper()).split())


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, words(a), words(b)).ratio()


def box_iou(a: Box, b: Box) -> float:
    ix = max(0, min(a.x1, b.x1) - max(a.x0, b.x0))
    iy = max(0, min(a.y1, b.y1) - max(a.y0, b.y0))
    inter = ix * iy
    union = (a.x1 - a.x0) * (a.y1 - a.y0) + (b.x1 - b.x0) * (b.y1 - b.y0) - inter
    return inter / union if union else 0.0


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    union = (a | b).sum()
    return float((a & b).sum() / union) if union else 0.0


def grade(value: float, full: float, partial: float, higher_is_better: bool = True) -> float:
    if not higher_is_better:
        value, full, partial = -value, -full, -partial
    return 1.0 if value >= full else PARTIAL if value >= partial else 0.0


def step_mask(step: StepLayer, shape: tuple[int, ...]) -> np.ndarray:
    """Where a step layer's pixels are (alpha above zero), in the scene's frame."""
    out = np.zeros(shape[:2], bool)
    if step.pixels is None:
        return out
    x, y = step.offset
    h, w = step.pixels.shape[:2]
    out[y : y + h, x : x + w] = step.pixels[..., 3] > 0
    return out


def read(image: np.ndarray, box: Box | None = None) -> str:
    """The text OCR reads in the picture (or around a box of it, with a margin of at
    least its height: on a tight crop the detector misses short words), lines joined."""
    if box is not None:
        pad = max(24, box.height)
        image = image[max(0, box.y0 - pad) : box.y1 + pad, max(0, box.x0 - pad) : box.x1 + pad]
    flat = np.ascontiguousarray(image[..., :3])
    lines = sorted(read_text_again(flat), key=lambda t: t.box.y0 + t.box.y1)
    rows: list[list[TextBox]] = []  # boxes whose middles lie within each other's height
    for t in lines:
        last = rows[-1][-1] if rows else None
        middle = abs((t.box.y0 + t.box.y1) - (last.box.y0 + last.box.y1)) / 2 if last else 0.0
        if last is not None and middle < last.box.height / 2:
            rows[-1].append(t)
        else:
            rows.append([t])
    return " ".join(t.text for row in rows for t in sorted(row, key=lambda t: t.box.x0))


# --- per subtask ----------------------------------------------------------------------


def _removal(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    assert truth.region is not None
    scene = task.scene.image
    inside = erode(truth.region, 2)
    others = dilate(task.scene.foreground & ~truth.region, 4)
    ring = dilate(truth.region, 16) & ~dilate(truth.region, 5) & ~others
    now = mean_lab(frame.image, inside)
    around, before = mean_lab(scene, ring), mean_lab(scene, inside)
    to_background, to_object = delta_e(now, around), delta_e(now, before)
    reason = (
        f"fill is dE {to_background:.0f} from its surroundings, {to_object:.0f} from the object"
    )
    if to_background <= 15 and to_background < to_object / 2:
        return SubtaskScore(truth.kind, 1.0, reason)
    return SubtaskScore(truth.kind, PARTIAL if to_background < to_object else 0.0, reason)


def _recolour(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    assert truth.region is not None and truth.colour is not None
    inside = erode(truth.region, 2)
    now = mean_lab(frame.image, inside)
    goal = color_lab(parse_color(truth.colour))
    before = mean_lab(task.scene.image, inside)

    def hue(lab: np.ndarray) -> float:
        return float(np.degrees(np.arctan2(lab[2], lab[1])))

    off = abs((hue(now) - hue(goal) + 180) % 360 - 180)
    chroma = float(np.hypot(now[1], now[2]))
    reason = f"hue {off:.0f} degrees from {truth.colour}, chroma {chroma:.0f}"
    if off <= 30 and chroma >= 15:
        return SubtaskScore(truth.kind, 1.0, reason)
    was = abs((hue(before) - hue(goal) + 180) % 360 - 180)
    return SubtaskScore(truth.kind, PARTIAL if off <= 60 and off < was else 0.0, reason)


def _boxes(outcome: SubtaskOutcome) -> list[Box]:
    return [b for s in outcome.steps for b in s.boxes]


def _detection(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    goal = mask_box(task.scene.things[str(truth.target)].mask)
    assert goal is not None
    best = max((box_iou(b, goal) for b in _boxes(outcome)), default=0.0)
    return SubtaskScore(truth.kind, grade(best, 0.7, 0.3), f"best box IoU {best:.2f}")


def _segmentation(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    goal = task.scene.things[str(truth.target)].mask
    masks = [step_mask(s, goal.shape) for s in outcome.steps if s.kind == LayerKind.MASK]
    best = max((mask_iou(m, goal) for m in masks), default=0.0)
    return SubtaskScore(truth.kind, grade(best, 0.9, 0.5), f"mask IoU {best:.2f}")


def _background(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    kept = frame.image[..., 3] > 127
    iou = mask_iou(kept, task.scene.foreground)
    return SubtaskScore(truth.kind, grade(iou, 0.8, 0.5), f"opaque part IoU {iou:.2f}")


def _text_detection(
    task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome
) -> SubtaskScore:
    goal = task.scene.text_box
    found = np.zeros(task.scene.image.shape[:2], bool)
    for b in _boxes(outcome):
        found[b.y0 : b.y1, b.x0 : b.x1] = True
    ink = np.zeros_like(found)
    ink[goal.y0 : goal.y1, goal.x0 : goal.x1] = True
    covered = float((found & ink).sum() / ink.sum())
    return SubtaskScore(
        truth.kind, grade(covered, 0.7, 0.3), f"{covered:.0%} of the sign's text boxed"
    )


def _text_of(outcome: SubtaskOutcome) -> str:
    return " ".join(s.text for s in outcome.steps if s.text)


def _extraction(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    got, goal = words(_text_of(outcome)), words(truth.text)
    if sorted(got.split()) == sorted(goal.split()):
        return SubtaskScore(truth.kind, 1.0, f"read {got!r}")
    return SubtaskScore(
        truth.kind, grade(similarity(got, goal), 0.6, 0.6), f"read {got!r}, not {goal!r}"
    )


def _replacement(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    got = words(read(frame.image, task.scene.sign_box))
    goal = words(truth.text)
    ratio = similarity(got, goal)
    return SubtaskScore(truth.kind, grade(ratio, 1.0, 0.6), f"the sign reads {got!r}")


def _text_removal(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    scene = task.scene
    got = words(read(frame.image, scene.sign_box))
    b = scene.text_box
    ink = frame.image[b.y0 : b.y1, b.x0 : b.x1, :3].reshape(-1, 3).astype(float)
    spread = float(np.abs(ink - np.array(scene.sign_colour, float)).max(axis=1).mean())
    reason = f"the sign reads {got!r}; the text area is {spread:.0f} levels off the panel"
    if not got and spread < 20:
        return SubtaskScore(truth.kind, 1.0, reason)
    return SubtaskScore(truth.kind, PARTIAL if not got or spread < 20 else 0.0, reason)


def _redaction(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    scene = task.scene
    got = words(read(frame.image, scene.sign_box))
    ratio = similarity(got, scene.sign_text) if got else 0.0
    b = scene.text_box
    before = scene.image[b.y0 : b.y1, b.x0 : b.x1, :3].astype(float)
    after = frame.image[b.y0 : b.y1, b.x0 : b.x1, :3].astype(float)
    changed = float((np.abs(after - before).max(axis=2) > 40).mean())
    reason = f"OCR reads {got!r}; {changed:.0%} of the text area changed"
    if ratio < 0.3 and changed > 0.3:
        return SubtaskScore(truth.kind, 1.0, reason)
    return SubtaskScore(truth.kind, PARTIAL if ratio < 0.7 else 0.0, reason)


def _addition(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    got = words(read(frame.image))
    goal = words(truth.text)
    ratio = max((similarity(w, goal) for w in got.split()), default=0.0)
    return SubtaskScore(truth.kind, grade(ratio, 1.0, 0.6), f"the picture reads {got!r}")


def _highlight(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    """The highlight must lie on the sign and span the word's share of its line."""
    scene = task.scene
    marks = [
        step_mask(s, scene.image.shape)
        for s in outcome.steps
        if s.kind == LayerKind.PIXELS and s.pixels is not None
    ]
    if not marks:
        return SubtaskScore(truth.kind, 0.0, "nothing highlighted")
    mark = np.logical_or.reduce(marks)
    line = words(next((t.text for t in task.truths if t.kind == K.TEXT_REPLACEMENT), None))
    line = line or words(scene.sign_text)
    word = words(truth.text)
    start = line.find(word)
    b = scene.text_box
    if start < 0:
        return SubtaskScore(truth.kind, 0.0, f"{word!r} is not on the sign")
    # where the word should be: its characters' share of the line (the replacement's
    # line is drawn anew, so this is approximate: IoU thresholds leave room for it)
    width = b.x1 - b.x0
    x0 = b.x0 + int(width * start / len(line))
    x1 = b.x0 + int(width * (start + len(word)) / len(line))
    goal = np.zeros_like(mark)
    goal[b.y0 : b.y1, x0:x1] = True
    on_sign = float((mark & dilate(scene.masks["sign"], 4)).sum() / max(1, mark.sum()))
    iou = mask_iou(mark, goal)
    reason = f"highlight IoU {iou:.2f} with the word, {on_sign:.0%} on the sign"
    if on_sign < 0.9:
        return SubtaskScore(truth.kind, 0.0, reason)
    return SubtaskScore(truth.kind, grade(iou, 0.4, 0.15), reason)


def _deblur(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    keep = ~changeable(task, result_steps=(), include_picture=False)
    sharp = task.scene.image[..., :3][keep].astype(float)
    given = task.photo()[..., :3][keep].astype(float)
    now = frame.image[..., :3][keep].astype(float)
    before, after = np.abs(given - sharp).mean(), np.abs(now - sharp).mean()
    gain = 1 - after / before if before else 0.0
    reason = f"error to the sharp scene {before:.2f} -> {after:.2f}"
    return SubtaskScore(truth.kind, grade(gain, 0.15, 0.02), reason)


def _upscale(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    factor = float(truth.factor or 1)
    ok = abs(frame.scale - factor) < 0.01
    reason = f"scaled {frame.scale:.2f}x, asked {factor:g}x"
    if not ok:
        return SubtaskScore(truth.kind, 0.0, reason)
    keep = ~changeable(task, result_steps=(), include_picture=False)
    error = float(
        np.abs(frame.image[..., :3][keep].astype(float) - task.photo()[..., :3][keep]).mean()
    )
    reason += f"; scaled back, {error:.1f} levels from the photo"
    return SubtaskScore(truth.kind, grade(error, 6.0, 20.0, higher_is_better=False), reason)


def _outpaint(task: Task, truth: Truth, frame: Frame, outcome: SubtaskOutcome) -> SubtaskScore:
    h, w = task.scene.image.shape[:2]
    fh, fw = frame.final.shape[:2]
    x0, y0 = frame.origin
    s = frame.scale
    grown = {
        "left": x0 / s / w,
        "top": y0 / s / h,
        "right": (fw - x0) / s / w - 1,
        "bottom": (fh - y0) / s / h - 1,
    }
    side = str(truth.side)
    if grown[side] < 0.1:
        return SubtaskScore(truth.kind, 0.0, f"the canvas did not grow to the {side}")
    if any(v > 0.02 for k, v in grown.items() if k != side):
        return SubtaskScore(truth.kind, PARTIAL, "the canvas grew on other sides too")
    band = max(2, int(8 * s))
    sx0, sy0 = x0, y0
    sx1, sy1 = x0 + int(w * s), y0 + int(h * s)
    picture, margin = {
        "left": (frame.final[sy0:sy1, sx0 : sx0 + band], frame.final[sy0:sy1, sx0 - band : sx0]),
        "right": (frame.final[sy0:sy1, sx1 - band : sx1], frame.final[sy0:sy1, sx1 : sx1 + band]),
        "top": (frame.final[sy0 : sy0 + band, sx0:sx1], frame.final[sy0 - band : sy0, sx0:sx1]),
        "bottom": (frame.final[sy1 - band : sy1, sx0:sx1], frame.final[sy1 : sy1 + band, sx0:sx1]),
    }[side]
    every = np.ones(picture.shape[:2], bool)
    gap = delta_e(mean_lab(picture, every), mean_lab(margin, np.ones(margin.shape[:2], bool)))
    reason = f"grew {grown[side]:.0%} to the {side}; margin dE {gap:.0f} from the edge"
    return SubtaskScore(truth.kind, grade(gap, 12.0, 30.0, higher_is_better=False), reason)


SCORERS: dict[SubtaskKind, Callable[[Task, Truth, Frame, SubtaskOutcome], SubtaskScore]] = {
    K.OBJECT_REMOVAL: _removal,
    K.OBJECT_RECOLORATION: _recolour,
    K.OBJECT_DETECTION: _detection,
    K.OBJECT_SEGMENTATION: _segmentation,
    K.BACKGROUND_REMOVAL: _background,
    K.TEXT_DETECTION: _text_detection,
    K.TEXT_EXTRACTION: _extraction,
    K.TEXT_REPLACEMENT: _replacement,
    K.TEXT_REMOVAL: _text_removal,
    K.TEXT_REDACTION: _redaction,
    K.TEXT_ADDITION: _addition,
    K.KEYWORD_HIGHLIGHTING: _highlight,
    K.IMAGE_DEBLURRING: _deblur,
    K.IMAGE_UPSCALING: _upscale,
    K.OUTPAINTING: _outpaint,
}


# --- the task -------------------------------------------------------------------------


def changeable(
    task: Task, result_steps: tuple[StepLayer, ...], include_picture: bool = True
) -> np.ndarray:
    """Where the task's subtasks may change pixels (scene frame): grown object masks for
    removal and recolouring, the sign for text edits, what a text addition wrote; the
    whole picture when one sharpens it (`include_picture`)."""
    scene = task.scene
    out = np.zeros(scene.image.shape[:2], bool)
    for truth in task.truths:
        if truth.kind == K.IMAGE_DEBLURRING and include_picture:
            out[:] = True
        elif truth.region is not None:  # an inpainted fill feathers further out
            out |= dilate(truth.region, 24 if truth.kind == K.OBJECT_REMOVAL else 6)
    for step in result_steps:
        out |= dilate(step_mask(step, out.shape), 4)
    return out


def score_task(task: Task, result: RunResult) -> TaskScore:
    """Every subtask of the task scored against its truth. Subtasks the run did not plan
    (the planner misread the instruction) score 0."""
    frame = in_scene_frame(task, result)
    added = tuple(s for o in result.outcomes if o.subtask.kind == K.TEXT_ADDITION for s in o.steps)
    allowed = changeable(task, added)
    photo = task.photo()
    visible = frame.image[..., 3] > 0
    outside = ~allowed & visible
    diff = np.abs(frame.image[..., :3].astype(int) - photo[..., :3]).max(axis=2)
    collateral = float((diff[outside] > COLLATERAL_LEVEL).mean()) if outside.any() else 0.0
    unused = list(result.outcomes)
    scores = []
    for truth in task.truths:
        same_kind = [o for o in unused if o.subtask.kind == truth.kind]
        outcome = next(
            (o for o in same_kind if words(o.subtask.target) == words(truth.target)),
            same_kind[0] if same_kind else None,
        )
        if outcome is None:
            scores.append(SubtaskScore(truth.kind, 0.0, "not in the plan"))
            continue
        unused.remove(outcome)
        if not outcome.ok:
            scores.append(SubtaskScore(truth.kind, 0.0, f"failed: {outcome.error}"))
            continue
        scored = SCORERS[truth.kind](task, truth, frame, outcome)
        if collateral > COLLATERAL_SHARE and scored.score > PARTIAL:
            scored = SubtaskScore(
                truth.kind, PARTIAL, f"{scored.reason}; {collateral:.0%} changed elsewhere"
            )
        scores.append(scored)
    return TaskScore(task.id, tuple(scores), collateral)
