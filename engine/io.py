"""Files: read images, masks and layered ORA/PSD; write layered ORA/PSD and PNG.

The layered model is deliberately small: pixel layers (RGBA, offset, visibility) and
groups of them, bottom to top. Input files are only ever read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from layerpath.engine.types import Snapshot
from layerpath.errors import BadInput

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp"}
LAYERED_SUFFIXES = {".ora", ".psd"}
MASK_PREFIX = "mask:"
MASK_GROUP = "masks"


#: layer blend modes (Krita's ids) and their OpenRaster composite-op names
BLENDS = {"normal": "svg:src-over", "destination-in": "svg:dst-in"}


@dataclass(eq=False)
class PixelLayer:
    name: str
    pixels: np.ndarray  # H x W x 4 uint8, straight alpha
    offset: tuple[int, int] = (0, 0)
    visible: bool = True
    blend: str = "normal"  # a key of BLENDS


@dataclass(eq=False)
class GroupLayer:
    name: str
    children: list[PixelLayer] = field(default_factory=list)
    visible: bool = True


@dataclass(eq=False)
class LayeredImage:
    width: int
    height: int
    layers: list[PixelLayer | GroupLayer] = field(default_factory=list)  # bottom to top

    def pixel_layers(self) -> Iterable[tuple[PixelLayer, bool]]:
        """Every pixel layer with its effective visibility, bottom to top."""
        for layer in self.layers:
            if isinstance(layer, GroupLayer):
                for child in layer.children:
                    yield child, layer.visible and child.visible
            else:
                yield layer, layer.visible


def _to_rgba(image: Image.Image) -> np.ndarray:
    if image.mode in ("I;16", "I;16B", "I", "F"):  # 16-bit/float greys: scale to 8 bits
        array = np.asarray(image, dtype=np.float32)
        top = 65535.0 if image.mode.startswith("I") and array.max() > 255 else 255.0
        image = Image.fromarray(np.clip(array / top * 255.0, 0, 255).astype(np.uint8))
    return np.array(image.convert("RGBA"), dtype=np.uint8)


def composite(doc: LayeredImage) -> np.ndarray:
    """Composite of the visible layers (groups pass through), as RGBA uint8: src-over,
    and destination-in for cut-out layers (what lies below stays only where the layer
    is opaque; outside the layer's bounds nothing stays)."""
    out = np.zeros((doc.height, doc.width, 4), dtype=np.float32)
    for layer, visible in doc.pixel_layers():
        if not visible:
            continue
        x, y = layer.offset
        h, w = layer.pixels.shape[:2]
        x0, y0, x1, y1 = max(0, x), max(0, y), min(doc.width, x + w), min(doc.height, y + h)
        if layer.blend == "destination-in":
            keep = np.zeros((doc.height, doc.width, 1), np.float32)
            if x0 < x1 and y0 < y1:
                cut = layer.pixels[y0 - y : y1 - y, x0 - x : x1 - x, 3:4]
                keep[y0:y1, x0:x1] = cut.astype(np.float32) / 255.0
            out[..., 3:4] *= keep
            continue
        if x0 >= x1 or y0 >= y1:
            continue
        src = layer.pixels[y0 - y : y1 - y, x0 - x : x1 - x].astype(np.float32) / 255.0
        dst = out[y0:y1, x0:x1]
        sa, da = src[..., 3:4], dst[..., 3:4]
        alpha = sa + da * (1 - sa)
        color = np.where(
            alpha > 0,
            (src[..., :3] * sa + dst[..., :3] * da * (1 - sa)) / np.maximum(alpha, 1e-6),
            0,
        )
        dst[..., :3], dst[..., 3:4] = color, alpha
    return np.clip(np.rint(out * 255.0), 0, 255).astype(np.uint8)


# --- reading ---------------------------------------------------------------------------


def _open_pil(path: Path) -> Image.Image:
    if not path.exists():
        raise BadInput(f"{path} does not exist.")
    try:
        image = Image.open(path)
        image.load()
        return image
    except (UnidentifiedImageError, OSError) as exc:
        raise BadInput(
            f"{path} is not an image layerpath can read ({exc}). Use PNG, JPEG, TIFF, ORA or PSD."
        ) from exc


def read_ora(path: Path) -> LayeredImage:
    from pyora import Project

    try:
        project = Project.load(str(path))
    except Exception as exc:  # pyora raises bare zip/xml errors
        raise BadInput(f"{path} is not a readable OpenRaster file ({exc}).") from exc
    width, height = project.dimensions
    doc = LayeredImage(int(width), int(height))
    for child in project.children:
        doc.layers.append(_ora_node(child))
    doc.layers.reverse()  # pyora lists top first
    return doc


def _ora_node(node: object) -> PixelLayer | GroupLayer:
    if getattr(node, "is_group", False):
        children = [_ora_node(c) for c in node.children][::-1]  # type: ignore[attr-defined]
        flat = [c for c in children if isinstance(c, PixelLayer)]
        return GroupLayer(node.name, flat, bool(node.visible))  # type: ignore[attr-defined]
    pixels = _to_rgba(node.get_image_data(raw=True))  # type: ignore[attr-defined]
    ops = {op: blend for blend, op in BLENDS.items()}
    blend = ops.get(getattr(node, "composite_op", "svg:src-over"), "normal")
    return PixelLayer(node.name, pixels, tuple(node.offsets), bool(node.visible), blend)  # type: ignore[attr-defined]


def read_psd(path: Path) -> LayeredImage:
    from psd_tools import PSDImage

    try:
        psd = PSDImage.open(path)
    except Exception as exc:
        raise BadInput(f"{path} is not a readable Photoshop file ({exc}).") from exc
    doc = LayeredImage(psd.width, psd.height)

    def pixel(layer: Any) -> PixelLayer | None:
        picture = None if layer.is_group() else layer.topil()
        if picture is None:
            return None
        return PixelLayer(layer.name, _to_rgba(picture), (layer.left, layer.top), layer.visible)

    for layer in psd:
        if layer.is_group():
            children = [p for p in map(pixel, layer) if p is not None]  # type: ignore[call-overload]
            doc.layers.append(GroupLayer(layer.name, children, layer.visible))
        elif (single := pixel(layer)) is not None:
            doc.layers.append(single)
    return doc


def read_layered(path: Path) -> LayeredImage:
    """Any supported file as layers (a flat image becomes one layer, 'Original')."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.exists():
        raise BadInput(f"{path} does not exist.")
    if suffix == ".ora":
        return read_ora(path)
    if suffix == ".psd":
        return read_psd(path)
    pixels = _to_rgba(_open_pil(path))
    return LayeredImage(pixels.shape[1], pixels.shape[0], [PixelLayer("Original", pixels)])


def _is_mask_layer(name: str) -> bool:
    return name.lower().startswith(MASK_PREFIX)


def _layer_mask(layer: PixelLayer, width: int, height: int) -> np.ndarray:
    """A mask layer: opaque pixels are inside when it has transparency, else white ones."""
    alpha = layer.pixels[..., 3]
    inside = alpha > 127 if (alpha < 255).any() else layer.pixels[..., :3].mean(axis=2) > 127
    full = np.zeros((height, width), dtype=bool)
    x, y = layer.offset
    h, w = inside.shape
    x0, y0, x1, y1 = max(0, x), max(0, y), min(width, x + w), min(height, y + h)
    if x0 < x1 and y0 < y1:
        full[y0:y1, x0:x1] = inside[y0 - y : y1 - y, x0 - x : x1 - x]
    return full


def split_masks(doc: LayeredImage) -> tuple[LayeredImage, dict[str, np.ndarray]]:
    """Take named masks out of a layered file: layers called 'mask:NAME' or the layers of a
    group called 'masks'. The rest is the picture."""
    masks: dict[str, np.ndarray] = {}
    kept: list[PixelLayer | GroupLayer] = []
    for layer in doc.layers:
        if isinstance(layer, GroupLayer) and layer.name.lower() == MASK_GROUP:
            for child in layer.children:
                masks[child.name.removeprefix(MASK_PREFIX)] = _layer_mask(
                    child, doc.width, doc.height
                )
        elif isinstance(layer, PixelLayer) and _is_mask_layer(layer.name):
            masks[layer.name[len(MASK_PREFIX) :]] = _layer_mask(layer, doc.width, doc.height)
        else:
            kept.append(layer)
    return LayeredImage(doc.width, doc.height, kept), masks


def read_mask(path: Path, size: tuple[int, int], name: str) -> np.ndarray:
    """A mask PNG: white (or opaque, where the PNG has transparency) is inside."""
    image = _open_pil(Path(path))
    if image.size != size:
        raise BadInput(
            f"The mask '{name}' ({path}) is {image.size[0]}x{image.size[1]} but the image is "
            f"{size[0]}x{size[1]}. Export the mask at the image's size."
        )
    rgba = _to_rgba(image)
    if "A" in image.getbands() and (rgba[..., 3] < 255).any():
        mask = rgba[..., 3] > 127
    else:
        mask = rgba[..., :3].mean(axis=2) > 127
    if not mask.any():
        raise BadInput(f"The mask '{name}' ({path}) is empty: paint the object white on black.")
    return mask


def load_snapshot(path: Path, mask_files: Mapping[str, Path]) -> tuple[Snapshot, LayeredImage]:
    """The snapshot the engine edits, and the user's document with all its layers (mask
    layers included) to write back unchanged under the new group."""
    doc = read_layered(Path(path))
    picture, masks = split_masks(doc)
    image = composite(picture)
    for name, mask_path in mask_files.items():
        masks[name] = read_mask(mask_path, (doc.width, doc.height), name)
    return Snapshot(image, masks), doc


# --- writing ---------------------------------------------------------------------------


def _safe(name: str, taken: set[str]) -> str:
    """pyora addresses layers by path: no slashes, no duplicates."""
    base = name.replace("/", "∕").strip() or "layer"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base} ({n})", n + 1
    taken.add(candidate)
    return candidate


def write_ora(doc: LayeredImage, path: Path) -> None:
    from pyora import Project

    project = Project.new(doc.width, doc.height)
    taken: set[str] = set()
    for layer in doc.layers:  # bottom to top; pyora puts each new one above
        if isinstance(layer, GroupLayer):
            group_path = "/" + _safe(layer.name, taken)
            # a cut-out inside must reach the layers below: the group passes through
            cuts = any(child.blend != "normal" for child in layer.children)
            project.add_group(group_path, visible=layer.visible, isolated=not cuts)
            inner: set[str] = set()
            for child in layer.children:
                project.add_layer(
                    Image.fromarray(child.pixels, "RGBA"),
                    f"{group_path}/{_safe(child.name, inner)}",
                    offsets=child.offset,
                    visible=child.visible,
                    composite_op=BLENDS[child.blend],
                )
        else:
            project.add_layer(
                Image.fromarray(layer.pixels, "RGBA"),
                "/" + _safe(layer.name, taken),
                offsets=layer.offset,
                visible=layer.visible,
            )
    project.save(str(path))


def write_psd(doc: LayeredImage, path: Path) -> None:
    from psd_tools import PSDImage

    if any(layer.blend != "normal" for layer, _ in doc.pixel_layers()):
        raise BadInput(
            "A background removal step cuts out what lies below it, which a PSD layer "
            "cannot do; save as .ora (Krita, GIMP, the layerpath editor) or as .png."
        )
    psd = PSDImage.new("RGBA", (doc.width, doc.height))

    def add(parent: Any, layer: PixelLayer) -> None:
        made = parent.create_pixel_layer(
            Image.fromarray(layer.pixels, "RGBA"),
            name=layer.name,
            top=layer.offset[1],
            left=layer.offset[0],
        )
        made.visible = layer.visible

    for layer in doc.layers:
        if isinstance(layer, GroupLayer):
            group = psd.create_group(name=layer.name)
            group.visible = layer.visible
            for child in layer.children:
                add(group, child)
        else:
            add(psd, layer)
    psd.save(str(path))


def write_layered(doc: LayeredImage, path: Path) -> Path:
    """Write .ora or .psd (by suffix) or a flattened .png; never over an input file
    (the CLI checks), atomically via a temporary file."""
    path = Path(path)
    suffix = path.suffix.lower()
    tmp = path.with_name(f".{path.stem}.partial{suffix}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".ora":
        write_ora(doc, tmp)
    elif suffix == ".psd":
        write_psd(doc, tmp)
    elif suffix == ".png":
        Image.fromarray(composite(doc), "RGBA").save(tmp)
    else:
        raise BadInput(
            f"Cannot write '{path.name}': use .ora or .psd for layers, .png for a flat image."
        )
    tmp.replace(path)
    return path
