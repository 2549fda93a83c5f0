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

from layerpath.engine.files.io import (
    MAX_PIXELS,
    GroupLayer,
    LayeredImage,
    PixelLayer,
    composite,
    read_layered,
    read_mask,
    split_masks,
    write_layered,
)
from layerpath.engine.types import Snapshot, StepLayer
from layerpath.errors import BadInput


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

    def record_run(self, report: Mapping[str, Any]) -> None:
        """Keep a finished run's report (plan, routes, tool calls) with the document."""
        ...


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

    def replace_step(self, layer: str, step: StepLayer) -> None:
        pixels = self._step(layer)[1]
        if step.pixels is None:
            raise BadInput(f"Step {step.name} has no pixels to write.")
        pixels.name, pixels.pixels, pixels.offset = step.name, step.pixels, step.offset
        pixels.blend, pixels.deep = step.blend, step.deep

    def remove(self, layer: str) -> None:
        if layer in self._groups:
            removed = self._groups.pop(layer)
            self._image.layers.remove(removed)
            self._steps = {k: v for k, v in self._steps.items() if v[0] is not removed}
            return
        group, pixels = self._step(layer)
        group.children.remove(pixels)
        del self._steps[layer]

    def record_run(self, report: Mapping[str, Any]) -> None:
        self.runs.append(report)

    def save(self, path: Path) -> Path:
        """Write the user's layers and every run group (.ora, .psd or flat .png)."""
        return write_layered(self._image, path)

    def _step(self, layer: str) -> tuple[GroupLayer, PixelLayer]:
        if layer not in self._steps:
            raise BadInput(
                f"Layer {layer} is not a step layer of a run; user layers are never changed."
            )
        return self._steps[layer]
