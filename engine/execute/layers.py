"""Turning executed tool steps into StepLayers: exactly the change each step made."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import cv2
import numpy as np

from layerpath.engine.execute.search import Node
from layerpath.engine.execute.steps import Rejected
from layerpath.engine.kinds import kind_spec
from layerpath.engine.types import (
    Artifact,
    ArtifactKind,
    Box,
    LayerKind,
    StepLayer,
    Subtask,
    SubtaskKind,
    TextBox,
)
from layerpath.kit.imaging import differs, mask_box, opaque
from layerpath.kit.regions import crop, full_box
from layerpath.tools.base import Tool

K = SubtaskKind
_MASK_COLOR = (255, 64, 64)
BOX_COLOR = (0, 200, 255)
#: how a step that is not its subtask's last is named: "Recolour wall to navy · Find it";
#: and how layerpath named steps before ("2. lab_recolor — Object Recoloration ..."):
#: a host reading masks by name passes over these (the user's own are named "cat")
STEP_NAME = re.compile(r" · |^\d+\. \S+ — ")


def step_name(subtask: Subtask, tool: Tool, finishing: bool) -> str:
    """A step layer's name in a photographer's words: the subtask's title for the step
    that finishes it ('Recolour wall to navy'), with what the step does for one that
    helps ('Recolour wall to navy · Your mask or selection'). The tool, its score and
    the rule are the layer's details, not its name."""
    title = subtask.title()
    return title if finishing else f"{title} · {tool.spec.label or tool.name}"


def box_thickness(shape: tuple[int, ...]) -> int:
    """Box outlines are thick enough to see on a large photo."""
    return max(2, int(max(shape[:2]) / 400))


def changed_pixels(
    before: np.ndarray, after: np.ndarray, window: Box | None = None
) -> tuple[np.ndarray, tuple[int, int]] | None:
    """The changed pixels of `after`, cropped to their bounds; unchanged pixels inside the
    crop are transparent, so the layer over `before` composites to exactly `after`.
    `window`: where they may differ (only it is compared). None when nothing changed."""
    area = window if window is not None else full_box(after.shape)
    changed = differs(crop(before, area), crop(after, area))
    box = mask_box(changed)
    if box is None:
        return None
    part = crop(after, area)[box.y0 : box.y1, box.x0 : box.x1]
    kept = changed[box.y0 : box.y1, box.x0 : box.x1]
    offset = (area.x0 + box.x0, area.y0 + box.y0)
    if part.shape == after.shape and kept.all():
        # every pixel of the picture changed: the step's own picture, shared (read only;
        # a part of it is copied, so the whole picture is not kept for it)
        shared = part.view()
        shared.flags.writeable = False
        return shared, offset
    pixels = part.copy()
    alpha = pixels[..., 3]
    np.multiply(alpha, kept, out=alpha, casting="unsafe")  # unchanged: transparent
    return pixels, offset


def cutout(before: np.ndarray, after: np.ndarray, window: Box | None = None) -> np.ndarray | None:
    """When a step made pixels more transparent (background removal), the full-size
    destination-in layer that does it over `before`: its alpha is the share of each
    pixel's alpha that stays, its colour the step's (what the layer shows on its own).
    None when no pixel lost alpha (looked for in `window`, where the step changed
    anything)."""
    area = window if window is not None else full_box(after.shape)
    if not np.any(crop(after, area)[..., 3] < crop(before, area)[..., 3]):
        return None
    was, now = before[..., 3].astype(np.float32), after[..., 3].astype(np.float32)
    keep = np.where(was > 0, np.minimum(now / np.maximum(was, 1.0), 1.0), 1.0)
    return np.dstack([after[..., :3], np.rint(keep * 255.0).astype(np.uint8)])


def mask_overlay(mask: np.ndarray) -> tuple[np.ndarray, tuple[int, int]]:
    box = mask_box(mask)
    if box is None:
        return np.zeros((1, 1, 4), dtype=np.uint8), (0, 0)
    crop = mask[box.y0 : box.y1, box.x0 : box.x1].astype(bool, copy=False)
    # the colour where the mask is, clear elsewhere: each pixel's four bytes as one word
    # (a boolean pick of a 20 MP background's pixels took 0.3 s, this 0.03 s)
    word = np.array([*_MASK_COLOR, 140], np.uint8).view(np.uint32)[0]
    words = np.empty(crop.shape, np.uint32)
    np.multiply(crop.view(np.uint8), word, out=words)
    return words.view(np.uint8).reshape(*crop.shape, 4), (box.x0, box.y0)


def box_overlay(boxes: Sequence[Box], shape: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, int]]:
    """Box outlines on a transparent layer covering the boxes' union."""
    if not boxes:
        return np.zeros((1, 1, 4), dtype=np.uint8), (0, 0)
    x0, y0 = max(0, min(b.x0 for b in boxes) - 2), max(0, min(b.y0 for b in boxes) - 2)
    x1, y1 = (
        min(shape[1], max(b.x1 for b in boxes) + 2),
        min(shape[0], max(b.y1 for b in boxes) + 2),
    )
    pixels = np.zeros((y1 - y0, x1 - x0, 4), dtype=np.uint8)
    thickness = box_thickness(shape)
    for b in boxes:
        cv2.rectangle(
            pixels,
            (b.x0 - x0, b.y0 - y0),
            (b.x1 - x0 - 1, b.y1 - y0 - 1),
            (*BOX_COLOR, 255),
            thickness,
        )
    return pixels, (x0, y0)


def label_layer(text: str, shape: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, int]]:
    """A caption as a dark label with white words at the top left of the picture."""
    from PIL import Image, ImageDraw

    from layerpath.kit.fonts import load_font

    size = max(12, min(shape[:2]) // 30)
    font = load_font(size)
    x0, y0, x1, y1 = (round(v) for v in font.getbbox(text))
    pad = size // 2
    width = min(shape[1], x1 - x0 + 2 * pad)
    height = min(shape[0], y1 - y0 + 2 * pad)
    label = Image.new("RGBA", (width, height), (20, 20, 20, 190))
    ImageDraw.Draw(label).text((pad - x0, pad - y0), text, fill=(255, 255, 255, 255), font=font)
    return np.asarray(label).copy(), (0, 0)


def depth_layer(depth: np.ndarray) -> np.ndarray:
    """A depth map (near = 1) as an opaque grey RGBA layer, near = white."""
    grey = np.clip(np.rint(depth * 255.0), 0, 255).astype(np.uint8)
    return np.dstack([grey, grey, grey, np.full_like(grey, 255)])


def rejected_layer(subtask: Subtask, rejected: Rejected) -> StepLayer | None:
    """The best result the checks turned down, as a hidden layer: the user may look at it
    and show it, but a failed subtask never changes the picture by itself. None for a
    result that would grow the canvas (even hidden, it would change the document)."""
    before = rejected.state[ArtifactKind.IMAGE].value
    produced = rejected.result.produced
    after = produced[ArtifactKind.IMAGE].value if ArtifactKind.IMAGE in produced else before
    region = ArtifactKind.IMAGE not in produced and ArtifactKind.MASK in produced
    said = "the region found, not vouched for" if region else "failed the check: best attempt"
    name = f"{step_name(subtask, rejected.tool, not region)} ({said})"
    common = dict(
        name=name,
        tool=rejected.tool.name,
        subtask_id=subtask.id,
        cost=rejected.result.cost,
        quality=rejected.result.quality,
        params=dict(rejected.result.params),
        visible=False,
        opinions=rejected.result.opinions,
    )
    if region:  # a finder's region the checks doubted: shown as the mask it is
        pixels, offset = mask_overlay(produced[ArtifactKind.MASK].value)
        return StepLayer(kind=LayerKind.MASK, pixels=pixels, offset=offset, **common)
    if after.shape != before.shape:
        return None
    cut = cutout(before, after, rejected.result.window)
    if cut is not None:
        return StepLayer(kind=LayerKind.PIXELS, pixels=cut, blend="destination-in", **common)
    change = changed_pixels(before, after, rejected.result.window)
    pixels, offset = change or (np.zeros((1, 1, 4), dtype=np.uint8), (0, 0))
    return StepLayer(kind=LayerKind.PIXELS, pixels=pixels, offset=offset, **common)


def _whole(everywhere: bool, produced: Mapping[ArtifactKind, Artifact]) -> bool:
    """Whether a step's picture is its layer whole: worked over as one and opaque (a
    clear pixel over the picture beneath would not show what the step made)."""
    picture = produced[ArtifactKind.IMAGE].value
    return everywhere and picture.dtype == np.uint8 and opaque(picture)


def step_layers(subtask: Subtask, path: Sequence[Node]) -> list[StepLayer]:
    """One StepLayer per executed tool step of an accepted path."""
    layers = []
    for node in path:
        assert node.result is not None and node.parent is not None and node.tool is not None
        produced = node.result.produced
        finishing = node is path[-1] and ArtifactKind.MASK not in produced  # (a mask: named so)
        common = dict(
            name=step_name(subtask, node.tool, finishing),
            tool=node.tool.name,
            subtask_id=subtask.id,
            cost=node.result.cost,
            quality=node.result.quality,
            params=dict(node.result.params),
            opinions=node.result.opinions,
        )
        if ArtifactKind.IMAGE in produced and (
            produced[ArtifactKind.IMAGE].value.shape
            != node.parent.state[ArtifactKind.IMAGE].value.shape
        ):  # a larger picture (upscaling, outpainting): the whole of it, on a grown canvas
            grown = produced[ArtifactKind.IMAGE].value
            canvas = (int(grown.shape[1]), int(grown.shape[0]))
            placed = produced.get(ArtifactKind.PLACEMENT)
            shift = tuple(placed.value) if placed is not None else (0, 0)
            layers.append(
                StepLayer(kind=LayerKind.PIXELS, pixels=grown, canvas=canvas, shift=shift, **common)
            )
        elif ArtifactKind.IMAGE in produced and _whole(node.result.everywhere, produced):
            # the whole picture worked over as one (a global adjustment, a look): its
            # layer is that picture, shared, not a copy holed where a value stayed the same
            shared = produced[ArtifactKind.IMAGE].value.view()
            shared.flags.writeable = False
            layers.append(StepLayer(kind=LayerKind.PIXELS, pixels=shared, **common))
        elif ArtifactKind.IMAGE in produced:
            before = node.parent.state[ArtifactKind.IMAGE].value
            after = produced[ArtifactKind.IMAGE].value
            window = node.result.window
            cut = cutout(before, after, window)
            if cut is not None:  # pixels made more transparent: a src-over layer cannot
                after = np.dstack([after[..., :3], before[..., 3]])
                window = None
            change = changed_pixels(before, after, window)
            if cut is None or change is not None:
                pixels, offset = change or (np.zeros((1, 1, 4), dtype=np.uint8), (0, 0))
                layers.append(
                    StepLayer(kind=LayerKind.PIXELS, pixels=pixels, offset=offset, **common)
                )
            if cut is not None:
                layers.append(
                    StepLayer(kind=LayerKind.PIXELS, pixels=cut, blend="destination-in", **common)
                )
        elif ArtifactKind.TEXT_BOXES in produced:
            found: tuple[TextBox, ...] = produced[ArtifactKind.TEXT_BOXES].value
            shape = node.parent.state[ArtifactKind.IMAGE].value.shape
            pixels, offset = box_overlay([t.box for t in found], shape)
            layers.append(
                StepLayer(
                    kind=LayerKind.TEXT,
                    pixels=pixels,
                    offset=offset,
                    boxes=tuple(t.box for t in found),
                    text="\n".join(t.text for t in found),
                    visible=kind_spec(subtask.kind).shows_text_boxes,
                    **common,
                )
            )
        elif subtask.kind == K.OBJECT_DETECTION and ArtifactKind.BOXES in produced:
            boxes: tuple[Box, ...] = produced[ArtifactKind.BOXES].value
            shape = node.parent.state[ArtifactKind.IMAGE].value.shape
            pixels, offset = box_overlay(boxes, shape)
            layers.append(
                StepLayer(kind=LayerKind.BOXES, pixels=pixels, offset=offset, boxes=boxes, **common)
            )
        elif words := [
            produced[k] for k in (ArtifactKind.CAPTION, ArtifactKind.ANSWER) if k in produced
        ]:
            text = str(words[0].value)
            shape = node.parent.state[ArtifactKind.IMAGE].value.shape
            pixels, offset = label_layer(text, shape)
            layers.append(
                StepLayer(
                    kind=LayerKind.TEXT,
                    pixels=pixels,
                    offset=offset,
                    text=text,
                    visible=False,  # the words are in the step list and the report
                    **common,
                )
            )
        elif ArtifactKind.DEPTH in produced:
            layers.append(
                StepLayer(
                    kind=LayerKind.PIXELS,
                    pixels=depth_layer(produced[ArtifactKind.DEPTH].value),
                    visible=False,  # a full-size map: shown when its step is ticked
                    **common,
                )
            )
        elif ArtifactKind.MASK in produced:
            pixels, offset = mask_overlay(produced[ArtifactKind.MASK].value)
            layers.append(
                StepLayer(
                    kind=LayerKind.MASK,
                    pixels=pixels,
                    offset=offset,
                    visible=kind_spec(subtask.kind).shows_mask,
                    **common,
                )
            )
    return layers
