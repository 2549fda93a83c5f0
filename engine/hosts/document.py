"""The Document protocol: what a host (standalone editor, Krita, a file) offers a run.

A host hands the engine a snapshot and receives step layers; it never lets the engine
touch the user's own layers. `LayeredDocument` is the file-backed host the CLI uses;
the standalone editor and the Krita adapter implement the same protocol.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from layerpath.engine.files.blends import Change
from layerpath.engine.files.curves import Curves
from layerpath.engine.files.io import (
    MAX_PIXELS,
    Export,
    GroupLayer,
    LayeredImage,
    PixelLayer,
    composite,
    output_problem,
    read_layered,
    read_mask,
    split_masks,
    write_layered,
)
from layerpath.engine.files.kra import write_kra
from layerpath.engine.types import LayerKind, Snapshot, StepLayer
from layerpath.errors import BadInput
from layerpath.files import write_atomically


class Document(Protocol):
    """The host side of a run. Ids are opaque strings chosen by the host."""

    def snapshot(self) -> Snapshot:
        """The canvas (RGBA, 8-bit), the named masks and the current selection."""
        ...

    def add_group(self, name: str) -> str:
        """A new group above the user's layers, for one run's step layers."""
        ...

    def add_step(self, group: str, step: StepLayer) -> str:
        """A new layer in the group holding exactly the step's change."""
        ...

    def set_visible(self, layer: str, visible: bool) -> None:
        """Show or hide a step layer (hiding one undoes just that step)."""
        ...

    def is_visible(self, layer: str) -> bool:
        """Whether a step layer is shown (False once it is deleted)."""
        ...

    def replace_step(self, layer: str, step: StepLayer) -> None:
        """The step layer's pixels (and place, and name) made again as `step` holds
        them, in the same place among its group's layers, shown or hidden as it was."""
        ...

    def remove(self, layer: str) -> None:
        """Delete a step layer or a run's group; user layers cannot be removed."""
        ...

    def record_run(self, report: Mapping[str, Any], group: str | None = None) -> None:
        """Keep a finished run's report (plan, routes, tool calls) with the document;
        `group` holds its step layers (None: it made none)."""
        ...


class Reopened(Protocol):
    """A document reopened from a file that keeps its runs (an ORA or a .kra layerpath
    wrote): each run's group id, report and step layers, listed again by a panel."""

    reopened: list[tuple[str, Mapping[str, Any], list[tuple[str, dict[str, Any]]]]]

    def reopened_run(self, group_id: str) -> tuple[list[tuple[str, StepLayer]], Snapshot]:
        """A reopened run's step layers as the steps they are, bottom first, and what
        the layers below its group make."""
        ...


def step_meta(step: StepLayer) -> dict[str, Any]:
    """What a step layer is, besides its pixels (an ORA keeps it beside the layer)."""
    return {
        "subtask": step.subtask_id,
        "tool": step.tool,
        "kind": step.kind.value,
        "cost": round(step.cost, 4),
        "quality": round(step.quality, 4),
        "params": dict(step.params),
        "text": step.text,
    }


class LayeredDocument:
    """A Document over an image file: the user's layers stay as read, runs add groups."""

    def __init__(self, image: LayeredImage, masks: Mapping[str, np.ndarray] | None = None) -> None:
        self._image = image
        self.masks: dict[str, np.ndarray] = dict(masks or {})  # named masks besides mask layers
        self.selection: np.ndarray | None = None
        self._ids = (str(n) for n in itertools.count(1))
        self._groups: dict[str, GroupLayer] = {}
        self._steps: dict[str, tuple[GroupLayer, PixelLayer]] = {}
        self.runs: list[Mapping[str, Any]] = []  # reports of the runs made on this document
        # what each step layer is (its subtask, tool, parameters, scores) and each run
        # group's report: what an ORA keeps, so the steps are listed again when reopened
        self._meta: dict[str, dict[str, Any]] = {}
        self._reports: dict[str, Mapping[str, Any]] = {}
        self.reopened: list[tuple[str, Mapping[str, Any], list[tuple[str, dict[str, Any]]]]] = []
        self._take_recipes()

    @classmethod
    def open(
        cls, path: Path, mask_files: Mapping[str, Path], max_pixels: int = MAX_PIXELS
    ) -> LayeredDocument:
        """Read a PNG/JPEG/TIFF/ORA/PSD and its named mask files."""
        image = read_layered(Path(path), max_pixels)
        size = (image.width, image.height)
        return cls(image, {name: read_mask(file, size, name) for name, file in mask_files.items()})

    @property
    def image(self) -> LayeredImage:
        return self._image

    def snapshot(self) -> Snapshot:
        """The visible picture now (hidden steps are not part of it), the named masks
        (mask layers and mask files) and the selection."""
        picture, layer_masks = split_masks(self._image)
        return Snapshot(
            composite(picture),
            {**layer_masks, **self.masks},
            self.selection,
            self._image.icc_profile,
            composite(picture, deep=True) if picture.deep else None,
        )

    def layer_id(self, layer: PixelLayer | GroupLayer) -> str | None:
        """The id of a run group or step layer; None for the user's own layers."""
        for group_id, group in self._groups.items():
            if group is layer:
                return group_id
        return next((k for k, (_, pixels) in self._steps.items() if pixels is layer), None)

    def add_group(self, name: str) -> str:
        group = GroupLayer(name)
        self._image.layers.append(group)
        group_id = next(self._ids)
        self._groups[group_id] = group
        return group_id

    def add_step(self, group: str, step: StepLayer) -> str:
        if group not in self._groups:
            raise BadInput(f"No run group {group} in this document.")
        if step.canvas is not None:  # the canvas grows; the other layers keep their pixels
            dx, dy = step.shift  # grown on the left or top: what was there moves with it
            for other, _ in self._image.pixel_layers():
                other.offset = (other.offset[0] + dx, other.offset[1] + dy)
            self._image.width, self._image.height = step.canvas  # (a crop's is smaller)
        layer = PixelLayer(
            step.name, step.pixels, step.offset, step.visible, step.blend, deep=step.deep
        )
        self._groups[group].children.append(layer)
        layer_id = next(self._ids)
        self._steps[layer_id] = (self._groups[group], layer)
        self._meta[layer_id] = step_meta(step)
        return layer_id

    def set_visible(self, layer: str, visible: bool) -> None:
        if layer in self._groups:
            self._groups[layer].visible = visible
        else:
            self._step(layer)[1].visible = visible

    def is_visible(self, layer: str) -> bool:
        if layer in self._groups:
            return self._groups[layer].visible
        group, pixels = self._step(layer)
        return pixels.visible and any(child is pixels for child in group.children)

    def step_order(self, group: str) -> list[str]:
        """The group's step layers as they lie now, bottom first (moved in the Layers
        dock, the order changes)."""
        children = self._groups[group].children if group in self._groups else []
        ids = {id(pixels): k for k, (_, pixels) in self._steps.items()}
        return [ids[id(child)] for child in children if id(child) in ids]

    def replace_step(self, layer: str, step: StepLayer) -> None:
        pixels = self._step(layer)[1]
        if step.pixels is None:
            raise BadInput(f"Step {step.name} has no pixels to write.")
        pixels.name, pixels.pixels, pixels.offset = step.name, step.pixels, step.offset
        pixels.blend, pixels.deep, pixels.encoded = step.blend, step.deep, None
        pixels.curves = pixels.change = None
        self._meta[layer] = step_meta(step)

    def make_live(self, layer: str, live: Curves | Change) -> None:
        """The step layer is also these tone curves or this change in a blend mode
        (engine/files/live.py): a .kra and a PSD hold it so, live on whatever lies
        beneath."""
        pixels = self._step(layer)[1]
        if isinstance(live, Change):
            pixels.change = live
        else:
            pixels.curves = live

    def remove(self, layer: str) -> None:
        if layer in self._groups:
            removed = self._groups.pop(layer)
            self._reports.pop(layer, None)
            self._image.layers.remove(removed)
            self._steps = {k: v for k, v in self._steps.items() if v[0] is not removed}
            return
        group, pixels = self._step(layer)
        group.children.remove(pixels)
        del self._steps[layer]

    def record_run(self, report: Mapping[str, Any], group: str | None = None) -> None:
        """Keep the report, and with the run's group (for an ORA to keep)."""
        self.runs.append(report)
        if group is not None and group in self._groups:
            self._reports[group] = report

    def save(self, path: Path, export: Export | None = None) -> Path:
        """Write the user's layers and every run group (.ora, .psd, .kra or a flat
        picture, as `export` says); an ORA keeps each run's record and what each of its
        layers is (layerpath/runs.json), a .kra the same as its 'layerpath' annotation."""
        self._image.recipes = self._recipes()
        if Path(path).suffix.lower() == ".kra":
            problem = output_problem(Path(path), deep=self._image.deep)
            if problem is not None:
                raise BadInput(problem + ".")
            image = self._image
            return write_atomically(Path(path), lambda file: write_kra(image, file))
        return write_layered(self._image, path, export)

    def _recipes(self) -> list[dict[str, Any]]:
        recipes = []
        meta = {id(pixels): self._meta.get(k, {}) for k, (_, pixels) in self._steps.items()}
        for group_id, report in self._reports.items():
            group = self._groups.get(group_id)
            if group is None or not any(layer is group for layer in self._image.layers):
                continue  # (deleted)
            index = next(i for i, layer in enumerate(self._image.layers) if layer is group)
            steps = [meta.get(id(child), {}) for child in group.children]
            recipes.append({"group": index, "run": dict(report), "steps": steps})
        return recipes

    def reopened_steps(self, group_id: str) -> list[tuple[str, StepLayer]]:
        """A reopened run's step layers as the steps they are (their pixels as the file
        holds them, their visibility now)."""
        found = []
        for layer_id, (group, pixels) in self._steps.items():
            meta = self._meta.get(layer_id)
            if group is not self._groups.get(group_id) or not meta:
                continue
            params, text = meta.get("params"), meta.get("text")
            try:  # (data from a file: a layer whose record is not layerpath's is left out)
                step = StepLayer(
                    pixels.name,
                    LayerKind(meta.get("kind", "pixels")),
                    str(meta.get("tool") or ""),
                    str(meta.get("subtask") or ""),
                    float(meta.get("cost") or 0.0),
                    float(meta.get("quality") or 0.0),
                    dict(params) if isinstance(params, Mapping) else {},
                    pixels.pixels,
                    pixels.offset,
                    text=text if isinstance(text, str) else None,
                    visible=pixels.visible,
                    blend=pixels.blend,
                    deep=pixels.deep,
                )
            except (TypeError, ValueError):
                continue
            found.append((layer_id, step))
        return found

    def reopened_run(self, group_id: str) -> tuple[list[tuple[str, StepLayer]], Snapshot]:
        return self.reopened_steps(group_id), self.beneath(group_id)

    def beneath(self, group_id: str) -> Snapshot:
        """What the layers below a run's group make (the picture the run started from,
        as far as the file tells), with the document's masks."""
        group = self._groups[group_id]
        index = next(i for i, layer in enumerate(self._image.layers) if layer is group)
        image = self._image
        below = LayeredImage(image.width, image.height, image.layers[:index], image.icc_profile)
        picture = split_masks(below)[0]
        return Snapshot(
            composite(picture),
            {**split_masks(image)[1], **self.masks},
            None,
            image.icc_profile,
            composite(picture, deep=True) if picture.deep else None,
        )

    def _take_recipes(self) -> None:
        """The runs a reopened ORA keeps: their groups and step layers are this
        document's again (`reopened`: each group's id, report and step layers)."""
        for recipe in self._image.recipes:
            index, report, steps = recipe.get("group"), recipe.get("run"), recipe.get("steps")
            if not (
                isinstance(index, int)
                and 0 <= index < len(self._image.layers)
                and isinstance(report, Mapping)
                and isinstance(steps, list)
            ):
                continue
            group = self._image.layers[index]
            if not isinstance(group, GroupLayer) or len(steps) != len(group.children):
                continue  # (the file was changed by another program since)
            group_id = next(self._ids)
            self._groups[group_id] = group
            self._reports[group_id] = report
            layers = []
            for child, meta in zip(group.children, steps, strict=True):
                if not isinstance(meta, dict) or not meta.get("subtask"):
                    continue
                layer_id = next(self._ids)
                self._steps[layer_id] = (group, child)
                self._meta[layer_id] = meta
                layers.append((layer_id, meta))
            self.reopened.append((group_id, report, layers))

    def _step(self, layer: str) -> tuple[GroupLayer, PixelLayer]:
        if layer not in self._steps:
            raise BadInput(
                f"Layer {layer} is not a step layer of a run; user layers are never changed."
            )
        return self._steps[layer]
