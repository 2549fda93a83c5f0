"""Files: read images, masks and layered ORA/PSD; write layered ORA/PSD and PNG.

The layered model is deliberately small: pixel layers (RGBA, offset, visibility) and
groups of them, bottom to top. Input files are only ever read.
"""

from __future__ import annotations

import importlib
import io
import itertools
import json
import logging
import os
import re
import shutil
import struct
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from layerpath import prefetch
from layerpath.engine.execute.deep import (
    eight_bit,
    encode_png16,
    over,
    read_deep,
    rgba16,
    sixteen_bit,
    tiff_ascii,
    write_tiff16,
)
from layerpath.engine.files.blends import BAND, MODES, Change, blended
from layerpath.engine.files.blends import over as blend_over
from layerpath.engine.files.curves import Curves
from layerpath.engine.types import Snapshot, StepLayer
from layerpath.errors import BadInput, shown
from layerpath.files import output_refusal, regular_file, write_atomically
from layerpath.kit.imaging import opaque
from layerpath.prefetch import decode_jpeg

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp"}
#: camera RAW and HEIF photos: read with the `photo` extra (rawpy, pillow-heif)
RAW_SUFFIXES = {".dng", ".cr2", ".cr3", ".nef", ".nrw", ".arw", ".raf", ".orf", ".rw2", ".pef"}
HEIF_SUFFIXES = {".heic", ".heif"}
LAYERED_SUFFIXES = {".ora", ".psd"}  # (read; .kra is only written)
MASK_PREFIX = "mask:"
MASK_GROUP = "masks"


#: layer blend modes (Krita's ids) and their OpenRaster composite-op names: a cut-out,
#: and the modes a step that is only its own change is held in (engine/files/blends.py)
BLENDS = {
    "normal": "svg:src-over",
    "destination-in": "svg:dst-in",
    "multiply": "svg:multiply",
    "dodge": "svg:color-dodge",
}
_BLEND_OF_OP = {op: blend for blend, op in BLENDS.items()}


@dataclass(eq=False)
class PixelLayer:
    name: str
    pixels: np.ndarray  # H x W x 4 uint8, straight alpha
    offset: tuple[int, int] = (0, 0)
    visible: bool = True
    blend: str = "normal"  # a key of BLENDS
    # the PNG file this layer was read from, written back into an ORA as it is: the same
    # pixels (which are then read-only), its depth, colour profile and metadata, and no
    # time spent encoding a camera file again
    encoded: bytes | None = None
    # a 16-bit file's pixels as it holds them (RGBA uint16; `pixels` is their 8-bit copy
    # the tools work on): written back at 16 bits (engine/execute/deep.py)
    deep: np.ndarray | None = None
    # the step as a tone curve per channel (engine/files/live.py), where it is one: a
    # .kra holds it as Krita's curves filter layer, a PSD (its `whole` curves) as a
    # Curves adjustment layer, both working on what lies beneath
    curves: Curves | None = None
    # the step as only its own change (engine/files/blends.py), where it is one: a .kra
    # and a PSD hold this layer in its blend mode instead of the picture
    change: Change | None = None


@dataclass(eq=False)
class GroupLayer:
    name: str
    children: list[PixelLayer] = field(default_factory=list)
    visible: bool = True
    # worked out on its own, then laid over what is beneath (a user's group that a file
    # says is isolated: a multiply layer in it multiplies only the group's layers); a
    # run's group is not: its steps reach the layers below it
    isolated: bool = False


@dataclass(eq=False)
class LayeredImage:
    width: int
    height: int
    layers: list[PixelLayer | GroupLayer] = field(default_factory=list)  # bottom to top
    # the photo's colour profile and camera metadata, as its file held them: written into
    # every output that can hold them
    icc_profile: bytes | None = None
    exif: bytes | None = None
    # its XMP packet (a rating, keywords, a caption, a raw developer's settings)
    xmp: bytes | None = None
    # the runs whose groups this image holds, as an ORA keeps them (layerpath/runs.json):
    # each {"group": its index in `layers`, "run": the run's report, "steps": for each
    # of the group's children, bottom first, what step it is ({} for none)}; only data,
    # read back to list the steps again and make them again, never to plan from
    recipes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def deep(self) -> bool:
        """Whether a layer holds 16-bit pixels (flattened outputs are then 16-bit)."""
        return any(layer.deep is not None for layer, _ in self.pixel_layers())

    def pixel_layers(self) -> Iterable[tuple[PixelLayer, bool]]:
        """Every pixel layer with its effective visibility, bottom to top."""
        for layer in self.layers:
            if isinstance(layer, GroupLayer):
                for child in layer.children:
                    yield child, layer.visible and child.visible
            else:
                yield layer, layer.visible


_DEEP_MODES = ("I;16", "I;16B", "I", "F")


def rgba8(image: Image.Image) -> np.ndarray:
    """A decoded picture of any mode as RGBA uint8 (a 16-bit grey scaled down, not
    clipped to white)."""
    if image.mode in _DEEP_MODES:  # 16-bit/float greys: scale to 8 bits
        array = np.asarray(image, dtype=np.float32)
        sixteen = image.mode.startswith("I;16") or (image.mode == "I" and array.max() > 255)
        top = 65535.0 if sixteen else 255.0
        image = Image.fromarray(np.clip(array / top * 255.0, 0, 255).astype(np.uint8))
    if image.mode == "RGB" and "transparency" not in image.info:
        # (a photo: one copy out of Pillow, its alpha added by OpenCV; a PNG's
        # transparent colour is Pillow's to turn into alpha)
        return cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2RGBA)
    return np.array(image.convert("RGBA"), dtype=np.uint8)


def composite(doc: LayeredImage, deep: bool = False) -> np.ndarray:
    """Composite of the visible layers (groups pass through), as RGBA uint8 (uint16 with
    `deep`: 16-bit layers at their depth, the others scaled up): src-over, and
    destination-in for cut-out layers (what lies below stays only where the layer is
    opaque; outside the layer's bounds nothing stays). Each layer is blended only over
    its own bounds; an opaque layer is copied, not blended. A user's isolated group
    that holds a layer in a blend mode is worked out on its own first."""
    covering = None if deep else _covering(doc)
    if covering is not None:  # a photo just opened, or a step that remade every pixel:
        shared = covering.view()  # that layer, shared (read only), not copied
        shared.flags.writeable = False
        return shared
    out = np.zeros((doc.height, doc.width, 4), dtype=np.uint16 if deep else np.uint8)
    for entry in doc.layers:
        if isinstance(entry, GroupLayer) and entry.isolated and entry.visible:
            if any(child.blend != "normal" for child in entry.children):
                alone = LayeredImage(doc.width, doc.height, list(entry.children))
                made = composite(alone, deep)
                layer = PixelLayer("group", made, deep=made if deep else None)
                _composite_onto(out, alone, layer, deep)
                continue
        _composite_onto(out, doc, entry, deep)
    return out


def _covering(doc: LayeredImage) -> np.ndarray | None:
    """The pixels of the topmost visible layer when it alone makes the 8-bit composite:
    it covers the canvas, is opaque and is laid on normally (what lies beneath cannot
    show); else None."""
    shown = [layer for layer, visible in doc.pixel_layers() if visible]
    if not shown:
        return None
    top = shown[-1]
    pixels = top.pixels
    if (
        top.blend == "normal"
        and top.offset == (0, 0)
        and pixels.shape == (doc.height, doc.width, 4)
        and pixels.dtype == np.uint8
        and opaque(pixels)
    ):
        return pixels
    return None


#: the TIFF tag an XMP packet goes under (XMLPacket)
XMP_TAG = 700


def _all_opaque(pixels: np.ndarray) -> bool:
    """Whether every pixel of RGBA at 8 or 16 bits is opaque."""
    if pixels.dtype == np.uint8:
        return opaque(pixels)
    return int(pixels[..., 3].min()) == int(np.iinfo(pixels.dtype).max)


def _composite_onto(
    out: np.ndarray, doc: LayeredImage, entry: PixelLayer | GroupLayer, deep: bool
) -> None:
    """One of the document's top-level layers (a group: its layers) composited onto
    `out` in place (see composite)."""
    top = 65535 if deep else 255
    group = LayeredImage(doc.width, doc.height, [entry])
    for layer, visible in group.pixel_layers():
        if not visible:
            continue
        x, y = layer.offset
        h, w = layer.pixels.shape[:2]
        x0, y0, x1, y1 = max(0, x), max(0, y), min(doc.width, x + w), min(doc.height, y + h)
        inside = x0 < x1 and y0 < y1
        if not deep:
            pixels = layer.pixels
        else:
            pixels = layer.deep if layer.deep is not None else sixteen_bit(layer.pixels)
        if layer.blend == "destination-in":
            alpha = out[..., 3]
            if not inside:
                alpha[...] = 0
                continue
            kept = (
                alpha[y0:y1, x0:x1].astype(np.uint32) * pixels[y0 - y : y1 - y, x0 - x : x1 - x, 3]
            )
            alpha[y0:y1, x0:x1] = ((kept + top // 2) // top).astype(out.dtype)
            alpha[:y0] = 0
            alpha[y1:] = 0
            alpha[:, :x0] = 0
            alpha[:, x1:] = 0
            continue
        if not inside:
            continue
        src = pixels[y0 - y : y1 - y, x0 - x : x1 - x]
        dst = out[y0:y1, x0:x1]
        if layer.blend in MODES:
            _blend_into(layer.blend, src, dst, top)
            continue
        _over_into(src, dst, top)


def _over_into(src: np.ndarray, dst: np.ndarray, top: int) -> None:
    """`src` over `dst` (RGBA of one depth, 8 or 16 bits, as composite gives them) in
    place, a band of rows at a time: an opaque band copied, a clear one skipped, opaque
    pixels copied whole (a step layer is opaque where it changed the picture), soft
    edges and cut-outs blended pixel by pixel."""
    whole = np.uint32 if src.dtype == np.uint8 else np.uint64  # a pixel's four channels
    # (alpha is a pixel's top byte or word as one little-endian integer)
    opaque_from = top << (8 if src.dtype == np.uint8 else 16) * 3
    clear_below = 1 << (8 if src.dtype == np.uint8 else 16) * 3
    fused = src.strides[-1] == src.itemsize and sys.byteorder == "little"
    for row in range(0, src.shape[0], BAND):
        s, d = src[row : row + BAND], dst[row : row + BAND]
        alpha = s[..., 3]
        pixels: Any = s.view(whole)[..., 0] if fused else None
        if pixels is not None:  # one pass over whole pixels, not a strided channel
            low, high = int(pixels.min()), int(pixels.max())
            all_opaque, all_clear = low >= opaque_from, high < clear_below
        else:
            all_opaque, all_clear = int(alpha.min()) == top, int(alpha.max()) == 0
        if all_opaque:
            d[...] = s
            continue
        if all_clear:
            continue
        if pixels is not None:  # (a pixel is part-clear when c <= p < o: one unsigned pass)
            solid = pixels >= whole(opaque_from)
            soft = (pixels - whole(clear_below)) < whole(opaque_from - clear_below)
        else:
            solid = alpha == top
            soft = (alpha > 0) & ~solid
        np.copyto(d.view(whole)[..., 0], s.view(whole)[..., 0], where=solid)
        if soft.any():  # soft edges and cut-outs: blended
            d[soft] = over(s[soft], d[soft])


def _blend_into(mode: str, src: np.ndarray, dst: np.ndarray, top: int) -> None:
    """`src` blended in `mode` (multiply, dodge) into `dst` in place, a band of rows at
    a time."""
    for row in range(0, src.shape[0], BAND):
        s, d = src[row : row + BAND], dst[row : row + BAND]
        both = (s[..., 3] == top) & (d[..., 3] == top)
        np.copyto(d[..., :3], blended(mode, d[..., :3], s[..., :3], top), where=both[..., None])
        rest = (s[..., 3] > 0) & ~both
        if rest.any():
            d[rest] = blend_over(mode, s[rest], d[rest], top)


def picture_beneath(
    base: np.ndarray, steps: Sequence[StepLayer], deep: np.ndarray | None = None
) -> np.ndarray:
    """The picture `steps` (shown step layers, bottom to top) make over `base` (RGBA);
    with `deep` (base's pixels at 16 bits), at 16 bits, each step at its own depth."""
    h, w = base.shape[:2]
    layers: list[Any] = [PixelLayer("base", base, deep=deep)]
    layers += [
        PixelLayer(s.name, s.pixels, s.offset, True, s.blend, deep=s.deep)
        for s in steps
        if s.pixels is not None
    ]
    return composite(LayeredImage(w, h, layers), deep=deep is not None)


# --- reading ---------------------------------------------------------------------------


#: the largest picture opened by default (the max_megapixels setting); a file claiming
#: more is refused from its header, before anything is decoded
MAX_PIXELS = 200_000_000
#: the smallest side of a picture the tools can work on
MIN_SIDE = 16


def check_size(
    path: Path, width: int, height: int, max_pixels: int = MAX_PIXELS, smallest: int = MIN_SIDE
) -> None:
    """A clear error for a canvas too large (a decompression bomb's header, or a real
    photo past the limit), too small, or not a size at all: before anything is
    decoded or allocated."""
    if width < 1 or height < 1:
        raise BadInput(f"{path} says its picture is {width}x{height} pixels, which is no picture.")
    if width * height > max_pixels:
        raise BadInput(
            f"{path} is {width}x{height} pixels ({width * height / 1e6:.0f} MP); layerpath "
            f"opens pictures up to {max_pixels / 1e6:.0f} MP (the max_megapixels setting). "
            "Scale it down first, or raise the setting if this machine has the memory."
        )
    if min(width, height) < smallest:
        raise BadInput(
            f"{path} is only {width}x{height} pixels; layerpath needs at least "
            f"{smallest}x{smallest}."
        )


def _open_pil(
    path: Path,
    data: bytes | None = None,
    max_pixels: int = MAX_PIXELS,
    smallest: int = MIN_SIDE,
    load: bool = True,
) -> tuple[Image.Image, np.ndarray | None]:
    """The picture in the file (or in `data`, the file's bytes), its size checked from
    its header before it is decoded; a clear error when it is not one layerpath reads.
    With `data`, a 16-bit PNG or TIFF is decoded at its depth instead (engine/execute/deep.py):
    (the picture, undecoded, and its RGBA uint16 pixels); else (the decoded picture, or
    with `load` False the picture as its header says, None)."""
    if data is None and not path.exists():
        raise BadInput(f"{path} does not exist.")
    pillows = Image.MAX_IMAGE_PIXELS
    with _readable(path, data):
        try:
            # the size is checked here, from the header, against layerpath's own limit
            # (Pillow's would refuse a 180 MP photo and name no setting)
            Image.MAX_IMAGE_PIXELS = None
            image = Image.open(io.BytesIO(data) if data is not None else path)
            check_size(path, image.width, image.height, max_pixels, smallest)
            deep = read_deep(data, image) if data is not None else None
            if deep is None and load:
                image.load()
            return image, deep
        finally:
            Image.MAX_IMAGE_PIXELS = pillows


def _load(picture: Image.Image, path: Path, data: bytes | None) -> None:
    """Decode a picture _open_pil left undecoded (its size checked already against
    layerpath's own limit, so Pillow's is lifted here too: its TIFF reader checks again)."""
    pillows = Image.MAX_IMAGE_PIXELS
    with _readable(path, data):
        try:
            Image.MAX_IMAGE_PIXELS = None
            picture.load()
        finally:
            Image.MAX_IMAGE_PIXELS = pillows


@contextmanager
def _readable(path: Path, data: bytes | None) -> Iterator[None]:
    """A picture Pillow cannot read, as a clear error naming the file."""
    try:
        yield
    except UnidentifiedImageError as exc:  # (its message names a BytesIO, not the file)
        empty = data is not None and not data
        raise BadInput(
            f"{path} is "
            + ("empty (0 bytes)" if empty else "not an image layerpath can read")
            + ". Use PNG, JPEG, TIFF, ORA or PSD."
        ) from exc
    except (OSError, ValueError, SyntaxError) as exc:
        # (ValueError: a text chunk that inflates past Pillow's limit; SyntaxError: a
        # broken header, as Pillow's plugins say it)
        raise BadInput(
            f"{path} is not an image layerpath can read ({shown(str(exc), 160)}). "
            "Use PNG, JPEG, TIFF, ORA or PSD."
        ) from exc


def _jpeg_rgba(data: bytes, picture: Image.Image, decoded: np.ndarray | None) -> np.ndarray | None:
    """An RGB JPEG's pixels as RGBA, decoded by libjpeg-turbo straight into its own array
    (the same decode as Pillow's, tested level for level, without Pillow's copy of it
    and the copy out of that), or as `decoded` already (layerpath/prefetch.py); None for
    any other picture, or one libjpeg-turbo refuses (Pillow then reads it, or says why
    not)."""
    if picture.format != "JPEG" or picture.mode != "RGB":
        return None
    rgba = decoded if decoded is not None else decode_jpeg(data)
    if rgba is None or rgba.shape != (picture.height, picture.width, 4):
        return None
    return rgba


#: the largest stack.xml read (a real one is a few kB; a zip bomb's is gigabytes)
STACK_XML_BYTES = 16_000_000


def _number(element: Any, name: str, default: int, path: Path) -> int:
    raw = element.get(name)
    if raw is None:
        return default
    try:
        return int(float(raw))
    except (ValueError, OverflowError):  # ('abc', 'nan', 'inf')
        raise BadInput(
            f"{path} is not a readable OpenRaster file: its stack.xml gives {name}={raw!r}, "
            "which is not a number."
        ) from None


def read_ora(path: Path, max_pixels: int = MAX_PIXELS) -> LayeredImage:
    """OpenRaster: the canvas size and every layer's size are checked from stack.xml
    and the PNG headers before any pixel is decoded. Layers of nested stacks join their
    top-level group (layerpath keeps one level of groups); a layer without a name gets
    one."""
    from xml.etree import ElementTree as ET

    def bad(reason: object) -> BadInput:
        return BadInput(f"{path} is not a readable OpenRaster file ({reason}).")

    try:
        with zipfile.ZipFile(path) as archive:
            if archive.getinfo("stack.xml").file_size > STACK_XML_BYTES:
                raise bad("its stack.xml is far too large")
            stack = ET.fromstring(archive.read("stack.xml"))
            width = _number(stack, "w", 0, path)
            height = _number(stack, "h", 0, path)
            check_size(path, width, height, max_pixels)
            root = stack.find("stack")
            if root is None:
                raise bad("its stack.xml holds no stack of layers")
            count = itertools.count(1)  # (names for nameless layers and groups)

            def layer(element: Any, visible: bool) -> PixelLayer:
                source = str(element.get("src") or "").lstrip("/")
                if not source:
                    raise bad("a layer names no picture file")
                if archive.getinfo(source).file_size > 8 * max_pixels + 1_000_000:
                    raise bad(f"its layer {source} inflates past any picture it may hold")
                data = archive.read(source)
                picture, deep = _open_pil(Path(f"{path}:{source}"), data, max_pixels, 1)
                return PixelLayer(
                    element.get("name") or f"layer {next(count)}",
                    rgba8(picture) if deep is None else eight_bit(deep),
                    (_number(element, "x", 0, path), _number(element, "y", 0, path)),
                    visible and element.get("visibility", "visible") != "hidden",
                    _BLEND_OF_OP.get(element.get("composite-op", "svg:src-over"), "normal"),
                    deep=deep,
                )

            def flattened(group: Any, visible: bool) -> list[PixelLayer]:
                """The layers of a group and of the stacks in it, bottom first (without
                recursion: a file may nest thousands of stacks)."""
                found: list[PixelLayer] = []
                todo = [(child, visible) for child in group]  # listed top first: pop bottom
                while todo:
                    child, seen = todo.pop()
                    if child.tag == "layer":
                        found.append(layer(child, seen))
                    elif child.tag == "stack":
                        inner = seen and child.get("visibility", "visible") != "hidden"
                        todo.extend((grandchild, inner) for grandchild in child)
                return found

            doc = LayeredImage(width, height, icc_profile=_merged_profile(archive))
            doc.recipes = _recipes(archive, path)
            for child in reversed(list(root)):
                if child.tag == "layer":
                    doc.layers.append(layer(child, True))
                elif child.tag == "stack":
                    doc.layers.append(
                        GroupLayer(
                            child.get("name") or f"group {next(count)}",
                            flattened(child, True),
                            child.get("visibility", "visible") != "hidden",
                            isolated=any(
                                stack.get("isolation") == "isolate" for stack in child.iter("stack")
                            ),
                        )
                    )
            return doc
    except BadInput:
        raise
    except (zipfile.BadZipFile, KeyError, ET.ParseError, OSError, EOFError) as exc:
        raise bad(exc) from exc


#: where an ORA keeps the runs of its groups, and the most of it read
RECIPES, RECIPES_BYTES = "layerpath/runs.json", 20_000_000


def _recipes(archive: zipfile.ZipFile, path: Path) -> list[dict[str, Any]]:
    """The runs an ORA layerpath wrote keeps (none from another program's, or from one
    whose record cannot be read: its layers are then the pictures they are)."""
    if RECIPES not in archive.namelist():
        return []
    try:
        if archive.getinfo(RECIPES).file_size > RECIPES_BYTES:
            raise ValueError("too large")
        data = json.loads(archive.read(RECIPES))
        runs = data["runs"] if isinstance(data, dict) else None
        if not isinstance(runs, list):
            raise ValueError("no runs in it")
        return [r for r in runs if isinstance(r, dict)]
    except (ValueError, KeyError, RecursionError, zipfile.BadZipFile, OSError) as exc:
        log.warning("%s: the record of its runs is not readable (%s); its layers stay", path, exc)
        return []


def _merged_profile(archive: zipfile.ZipFile) -> bytes | None:
    """The colour profile of an ORA's merged picture (layerpath writes the photo's
    there), read from its PNG header chunks without decoding the picture."""
    try:
        with archive.open("mergedimage.png") as png:
            picture = Image.open(png)
            profile = picture.info.get("icc_profile")
    except (KeyError, OSError, ValueError, UnidentifiedImageError, Image.DecompressionBombError):
        return None  # (no merged picture, or one that lies: no profile to keep)
    return profile if isinstance(profile, bytes) and profile else None


#: a Photoshop file's header: signature, version, 6 reserved bytes, channels, rows,
#: columns, depth and colour mode, big-endian
_PSD_HEADER = struct.Struct(">4sH6xHIIHH")


def read_psd(path: Path, max_pixels: int = MAX_PIXELS) -> LayeredImage:
    """Photoshop: the canvas size is checked from the file's header, and every layer's
    from its record, before any pixel is decoded."""
    from psd_tools import PSDImage

    with open(path, "rb") as file:
        header = file.read(_PSD_HEADER.size)
    if len(header) < _PSD_HEADER.size or header[:4] != b"8BPS":
        raise BadInput(f"{path} is not a readable Photoshop file (no PSD header).")
    _, version, _, height, width, _, _ = _PSD_HEADER.unpack(header)
    if version not in (1, 2):  # PSD, PSB
        raise BadInput(f"{path} is not a readable Photoshop file (version {version}).")
    check_size(path, width, height, max_pixels)
    try:
        psd = PSDImage.open(path)
    except Exception as exc:  # psd-tools raises whatever its parser meets
        raise BadInput(f"{path} is not a readable Photoshop file ({exc}).") from exc
    from psd_tools.constants import BlendMode, Resource

    profile = psd.image_resources.get_data(Resource.ICC_PROFILE)
    exif = psd.image_resources.get_data(Resource.EXIF_DATA_1)
    xmp = psd.image_resources.get_data(Resource.XMP_METADATA)
    doc = LayeredImage(
        psd.width,
        psd.height,
        icc_profile=profile if isinstance(profile, bytes) and profile else None,
        exif=EXIF_HEADER + exif.removeprefix(EXIF_HEADER)
        if isinstance(exif, bytes) and exif
        else None,
        xmp=xmp if isinstance(xmp, bytes) and xmp else None,
    )

    def pixel(layer: Any) -> PixelLayer | None:
        if layer.is_group():
            return None
        if layer.width * layer.height > max_pixels:
            raise BadInput(
                f"{path}: its layer '{layer.name}' claims {layer.width}x{layer.height} "
                "pixels, more than layerpath opens (the max_megapixels setting)."
            )
        try:
            picture = layer.topil()
        except Exception as exc:
            raise BadInput(f"{path}: its layer '{layer.name}' cannot be read ({exc}).") from exc
        if picture is None:
            return None
        blend = {BlendMode.MULTIPLY: "multiply", BlendMode.COLOR_DODGE: "dodge"}
        return PixelLayer(
            layer.name,
            rgba8(picture),
            (layer.left, layer.top),
            layer.visible,
            blend.get(layer.blend_mode, "normal"),
        )

    def read(layer: Any, beneath: list[PixelLayer | GroupLayer]) -> PixelLayer | None:
        if layer.kind == "curves":  # (a step layerpath kept live, or the user's own)
            return _curves_layer(layer, LayeredImage(doc.width, doc.height, beneath))
        return pixel(layer)

    for layer in psd:
        if layer.is_group():
            isolated = layer.blend_mode != BlendMode.PASS_THROUGH
            group = GroupLayer(layer.name, [], layer.visible, isolated=isolated)
            for child in layer:  # type: ignore[attr-defined]
                if (made := read(child, [*doc.layers, GroupLayer("", group.children)])) is not None:
                    group.children.append(made)
            doc.layers.append(group)
        elif (single := read(layer, list(doc.layers))) is not None:
            doc.layers.append(single)
    return doc


def _curves_layer(layer: Any, beneath: LayeredImage) -> PixelLayer | None:
    """A PSD's Curves adjustment layer as a layer of pixels: the picture beneath it
    through its curves (a natural spline through its points, as Photoshop draws them),
    kept as curves too, so it is written live again."""
    extra = getattr(layer, "extra", None)
    if extra is None:
        return None
    same = ((0.0, 0.0), (1.0, 1.0))
    points = {
        item.channel_id: tuple(sorted((x / 255, y / 255) for y, x in item.points))
        for item in extra
        if len(item.points) >= 2 and not isinstance(item.points[0], int)
    }
    curves = Curves(points.get(1, same), points.get(2, same), points.get(3, same))
    below = composite(beneath)
    rgb = curves.applied(below)
    master = points.get(0, same)
    if master != same:  # (the curve of all colours, after each channel's)
        rgb = Curves(master, master, master).applied(rgb)
    made = PixelLayer(layer.name, np.dstack([rgb, below[..., 3]]), (0, 0), layer.visible)
    if master == same:
        made.curves = replace(curves, whole=curves)
    return made


def _photo_extra(module: str, path: Path) -> Any:
    """A package of the `photo` extra, or a clear error naming it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise BadInput(
            f"{path.name} is a {path.suffix.lstrip('.').upper()} file; opening it needs "
            'layerpath\'s photo extra: pip install "layerpath[photo]".'
        ) from None


def read_raw(path: Path, max_pixels: int = MAX_PIXELS) -> LayeredImage:
    """A camera RAW file, developed by LibRaw (rawpy) at 16 bits: the camera's white
    balance, sRGB primaries; its size checked before it is developed."""
    rawpy = _photo_extra("rawpy", path)
    try:
        with rawpy.imread(str(path)) as raw:
            sizes = raw.sizes
            check_size(path, int(sizes.width), int(sizes.height), max_pixels)
            developed = raw.postprocess(output_bps=16, use_camera_wb=True)
    except (rawpy.LibRawError, OSError, ValueError) as exc:
        raise BadInput(f"{path} is not a RAW file layerpath can develop ({exc}).") from exc
    deep = rgba16(developed)
    if deep is None:
        raise BadInput(f"{path}: LibRaw developed no 16-bit picture from it.")
    layer = PixelLayer("Original", eight_bit(deep), deep=deep)
    return LayeredImage(deep.shape[1], deep.shape[0], [layer])


def read_layered(path: Path, max_pixels: int = MAX_PIXELS) -> LayeredImage:
    """Any supported file as layers (a flat image becomes one layer, 'Original'); sizes
    past `max_pixels` or under MIN_SIDE are refused before anything is decoded."""
    path = Path(path)
    suffix = path.suffix.lower()
    regular_file(path, "picture")
    if suffix == ".ora":
        return read_ora(path, max_pixels)
    if suffix == ".psd":
        return read_psd(path, max_pixels)
    if suffix in RAW_SUFFIXES:
        return read_raw(path, max_pixels)
    if suffix == ".kra":  # (layerpath writes Krita's files; reading them needs Krita)
        raise BadInput(
            f"{path.name} is a Krita document, which layerpath writes but does not read: "
            "run the instruction in Krita's layerpath docker, or save it from Krita as "
            ".ora (File ▸ Export) and give that."
        )
    if suffix in HEIF_SUFFIXES:
        _photo_extra("pillow_heif", path).register_heif_opener()
    early = prefetch.taken(path)  # (decoded while the program started)
    try:  # decoded from these bytes: a later change to the file cannot differ
        data = early[0] if early is not None else path.read_bytes()
    except OSError as exc:
        raise BadInput(f"Cannot read the picture {path}: {exc.strerror or exc}.") from exc
    picture, deep = _open_pil(path, data, max_pixels, load=False)
    decoded = early[1] if early is not None else None
    jpeg = _jpeg_rgba(data, picture, decoded) if deep is None else None
    if deep is None and jpeg is None:
        _load(picture, path, data)
    icc, exif, xmp = _metadata(picture)
    picture, icc = _in_rgb(picture, icc)
    pixels = jpeg if jpeg is not None else rgba8(picture) if deep is None else eight_bit(deep)
    turn = _orientation(exif)
    encoded = None
    if turn != 1:  # as every viewer shows it: the layers, the masks and the output agree
        pixels = upright(pixels, turn)
        deep = None if deep is None else upright(deep, turn)
        exif = _with_orientation(exif, 1)
        xmp = _xmp_upright(xmp)
    elif picture.format == "PNG" and icc is picture.info.get("icc_profile"):
        encoded = data
        pixels.flags.writeable = False  # the layer must stay what the file holds
    layer = PixelLayer("Original", pixels, encoded=encoded, deep=deep)
    return LayeredImage(pixels.shape[1], pixels.shape[0], [layer], icc, exif, xmp)


#: EXIF's Orientation tag, and how each value's picture is turned upright
ORIENTATION = 0x0112


def upright(pixels: np.ndarray, orientation: int) -> np.ndarray:
    """Pixels (rows, columns, ...) as EXIF `orientation` says they are shown (1-8, as
    Pillow's ImageOps.exif_transpose turns them)."""
    turned = {
        2: lambda a: a[:, ::-1],
        3: lambda a: a[::-1, ::-1],
        4: lambda a: a[::-1],
        5: lambda a: a.swapaxes(0, 1),
        6: lambda a: np.rot90(a, -1),
        7: lambda a: np.rot90(a, 2).swapaxes(0, 1),
        8: lambda a: np.rot90(a, 1),
    }.get(orientation)
    return pixels if turned is None else np.ascontiguousarray(turned(pixels))


def _orientation(exif: bytes | None) -> int:
    if not exif:
        return 1
    found = Image.Exif()
    try:
        found.load(exif[len(EXIF_HEADER) :] if exif.startswith(EXIF_HEADER) else exif)
        value = int(found.get(ORIENTATION, 1))
    except (ValueError, TypeError, OSError, SyntaxError, struct.error):
        return 1
    return value if 1 <= value <= 8 else 1


def _with_orientation(exif: bytes | None, orientation: int) -> bytes | None:
    """The EXIF block with its Orientation set (the rest as it was)."""
    if not exif:
        return exif
    found = Image.Exif()
    found.load(exif[len(EXIF_HEADER) :])
    found[ORIENTATION] = orientation
    return EXIF_HEADER + found.tobytes()


def _icc_space(icc: bytes | None) -> str | None:
    """The colour space an ICC profile is for ('RGB', 'CMYK', 'GRAY', ...), from its
    header."""
    if not icc or len(icc) < 20:
        return None
    return icc[16:20].decode("ascii", "replace").strip()


def _in_rgb(picture: Image.Image, icc: bytes | None) -> tuple[Image.Image, bytes | None]:
    """The picture ready to become RGB(A) pixels, and the profile those pixels carry: a
    CMYK picture converted through its own profile to sRGB (a CMYK profile on RGB
    pixels would be wrong everywhere), a profile for another colour space (a grey one)
    dropped, an RGB one kept."""
    space = _icc_space(icc)
    if picture.mode == "CMYK":
        if space == "CMYK":
            from PIL import ImageCms

            try:
                source = ImageCms.ImageCmsProfile(io.BytesIO(icc or b""))
                srgb = ImageCms.createProfile("sRGB")
                converted = ImageCms.profileToProfile(picture, source, srgb, outputMode="RGB")
                if converted is not None:
                    return converted, None
            except (ImageCms.PyCMSError, OSError):
                pass
        return picture.convert("RGB"), None
    return picture, (icc if space in (None, "RGB") else None)


#: how an EXIF block starts in a JPEG (and in LayeredImage.exif)
EXIF_HEADER = b"Exif\x00\x00"


#: the tags of a TIFF's first directory that describe the photo, not how its pixels are
#: stored (those, PhotometricInterpretation and the like, are never written as EXIF)
_DESCRIBING = (0x010E, 0x010F, 0x0110, ORIENTATION, 0x0131, 0x0132, 0x013B, 0x8298)
#: the EXIF and GPS directories a TIFF's first directory points to
_EXIF_DIRECTORIES = (0x8769, 0x8825)


def _metadata(picture: Image.Image) -> tuple[bytes | None, bytes | None, bytes | None]:
    """The file's ICC profile, EXIF block and XMP packet (None where it has none); the
    EXIF block starts with EXIF_HEADER, as in a JPEG. A TIFF's own tags are not EXIF:
    only those describing the photo, and its EXIF and GPS directories, are kept."""
    xmp = picture.info.get("xmp") or picture.info.get("XML:com.adobe.xmp") or None
    if isinstance(xmp, str):
        xmp = xmp.encode("utf-8")
    icc = picture.info.get("icc_profile") or None
    exif = picture.info.get("exif")
    if not isinstance(exif, bytes):
        found = picture.getexif()
        if picture.format == "TIFF":
            kept = Image.Exif()
            for tag in _DESCRIBING:
                if tag in found and not _made_by_tifffile(tag, found[tag]):
                    value = found[tag]  # (text as the ASCII EXIF holds: UTF-8 mended)
                    kept[tag] = tiff_ascii(value) or "" if isinstance(value, str) else value
            for tag in _EXIF_DIRECTORIES:
                directory = found.get_ifd(tag)
                if directory:
                    kept[tag] = dict(directory)
            found = kept
        exif = found.tobytes() if len(found) else None
    if exif and not exif.startswith(EXIF_HEADER):
        exif = EXIF_HEADER + exif
    xmp = xmp if isinstance(xmp, bytes) else None
    return (icc if isinstance(icc, bytes) else None), (exif or None), xmp


def _made_by_tifffile(tag: int, value: object) -> bool:
    """tifffile's own description of an array's shape (no description of the photo:
    after a crop or a scaling it would be wrong)."""
    return tag == 0x010E and str(value).startswith('{"shape"')


def _xmp_upright(xmp: bytes | None) -> bytes | None:
    """The XMP packet of a picture turned upright: its tiff:Orientation 1 too (else a
    program reading the XMP would turn it again)."""
    if not xmp:
        return xmp
    xmp = re.sub(rb'(tiff:Orientation\s*=\s*["\'])\d(["\'])', rb"\g<1>1\g<2>", xmp)
    return re.sub(rb"(<tiff:Orientation>)\s*\d\s*(</tiff:Orientation>)", rb"\g<1>1\g<2>", xmp)


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
    return LayeredImage(doc.width, doc.height, kept, doc.icc_profile, doc.exif, doc.xmp), masks


def read_mask(path: Path, size: tuple[int, int], name: str) -> np.ndarray:
    """A mask PNG: white (or opaque, where the PNG has transparency) is inside."""
    regular_file(Path(path), f"mask '{name}'")
    image, _ = _open_pil(Path(path), smallest=1)  # (its size is compared with the picture's)
    if _orientation(_metadata(image)[1]) != 1:  # (saved by a camera app: as viewers show it)
        image = ImageOps.exif_transpose(image)
    if image.size != size:
        turned = (
            " (the picture is turned upright by its EXIF orientation, as viewers show it;"
            " draw the mask on the picture as shown)"
            if image.size == (size[1], size[0])
            else ""
        )
        raise BadInput(
            f"The mask '{name}' ({path}) is {image.size[0]}x{image.size[1]} but the image is "
            f"{size[0]}x{size[1]}{turned}. Export the mask at the image's size."
        )
    alpha = np.asarray(image.getchannel("A")) if "A" in image.getbands() else None
    if alpha is not None and (alpha < 255).any():
        mask = alpha > 127
    elif image.mode in ("L", "LA", "1"):  # white on black
        mask = np.asarray(image.convert("L")) > 127
    else:  # the mean of the colour channels above the middle grey
        rgb = rgba8(image)[..., :3] if image.mode in _DEEP_MODES else image.convert("RGB")
        mask = np.asarray(rgb).sum(axis=2, dtype=np.uint16) > 3 * 127
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


#: zlib level for the PNGs inside written files: level 1 is five times faster than
#: Pillow's default 6 on a camera file and about 15 % larger
PNG_LEVEL = 1
THUMBNAIL_SIDE = 256


def encode_png(pixels: np.ndarray | bytes, **metadata: bytes | None) -> bytes:
    """RGBA pixels as PNG bytes at PNG_LEVEL (Pillow lets go of the GIL while encoding,
    so several encode at once on threads), with `metadata` (icc_profile, exif) where
    given; PNG bytes already are."""
    if isinstance(pixels, bytes):
        return pixels
    if pixels.dtype == np.uint16:
        return encode_png16(
            pixels, metadata.get("icc_profile"), metadata.get("exif"), metadata.get("xmp")
        )
    buffer = io.BytesIO()
    given: dict[str, Any] = {k: v for k, v in metadata.items() if v and k != "xmp"}
    if metadata.get("xmp"):  # (an iTXt chunk, as Adobe's programs write it)
        from PIL.PngImagePlugin import PngInfo

        chunks = PngInfo()
        chunks.add_itxt(XMP_KEY, bytes(metadata["xmp"] or b"").decode("utf-8", "replace"))
        given["pnginfo"] = chunks
    channels = pixels.shape[2] if pixels.ndim == 3 else 1
    mode = {4: "RGBA", 3: "RGB", 1: "L"}[channels]
    Image.fromarray(np.ascontiguousarray(pixels), mode).save(
        buffer, format="PNG", compress_level=PNG_LEVEL, **given
    )
    return buffer.getvalue()


#: the PNG text chunk's keyword an XMP packet goes under
XMP_KEY = "XML:com.adobe.xmp"


def write_ora(doc: LayeredImage, path: Path | BinaryIO) -> None:
    """OpenRaster: stack.xml, one PNG per layer (cropped to its pixels, placed by its
    x/y), the merged picture and a thumbnail. The PNGs are encoded in parallel and
    stored in the zip as they are (they are compressed already)."""
    from xml.etree import ElementTree as ET

    image = ET.Element("image", version="0.0.1", w=str(doc.width), h=str(doc.height))
    image.set("xres", "72")
    image.set("yres", "72")
    root = ET.SubElement(
        image, "stack", {"name": "root", "composite-op": "svg:src-over", "isolation": "isolate"}
    )
    root.set("opacity", "1")
    root.set("visibility", "visible")
    pictures: list[np.ndarray | bytes] = []
    profiled: set[int] = set()  # the user's own layers: their PNGs carry the photo's profile

    def add_layer(parent: ET.Element, layer: PixelLayer, own: bool = False) -> None:
        src = f"data/layer{len(pictures)}.png"
        if own:
            profiled.add(len(pictures))
        if layer.encoded is not None:
            pictures.append(layer.encoded)
        else:  # (a 16-bit layer at its depth)
            pictures.append(layer.deep if layer.deep is not None else layer.pixels)
        parent.append(
            ET.Element(
                "layer",
                {
                    "name": layer.name,
                    "src": src,
                    "x": str(layer.offset[0]),
                    "y": str(layer.offset[1]),
                    "visibility": "visible" if layer.visible else "hidden",
                    "opacity": "1.0",
                    "composite-op": BLENDS[layer.blend],
                },
            )
        )

    for layer in reversed(doc.layers):  # the stack lists the top layer first
        if isinstance(layer, GroupLayer):
            # a cut-out or a blend mode inside must reach the layers below: the group
            # passes through (unless it is a user's isolated group)
            cuts = not layer.isolated and any(child.blend != "normal" for child in layer.children)
            group = ET.SubElement(
                root,
                "stack",
                {
                    "name": layer.name,
                    "visibility": "visible" if layer.visible else "hidden",
                    "opacity": "1.0",
                    "composite-op": "svg:src-over",
                    "isolation": "auto" if cuts else "isolate",
                },
            )
            for child in reversed(layer.children):
                add_layer(group, child)
        else:
            add_layer(root, layer, own=True)
    merged = composite(doc)
    scale = THUMBNAIL_SIDE / max(doc.width, doc.height, 1)
    thumbnail = Image.fromarray(merged, "RGBA")
    if scale < 1:
        size = (max(1, round(doc.width * scale)), max(1, round(doc.height * scale)))
        thumbnail = thumbnail.resize(size, Image.Resampling.BOX)
    # the merged picture carries the photo's colour profile and metadata, the user's own
    # layers its profile (a PNG the user gave is written back as its very bytes)
    whole = {"icc_profile": doc.icc_profile, "exif": doc.exif, "xmp": doc.xmp}
    profile = {"icc_profile": doc.icc_profile}
    jobs = [(merged, whole), (np.asarray(thumbnail), {})] + [
        (picture, profile if number in profiled else {}) for number, picture in enumerate(pictures)
    ]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        encoded = list(pool.map(lambda job: encode_png(job[0], **job[1]), jobs))

    with zipfile.ZipFile(path, "w") as archive:
        # the spec: 'mimetype' first and uncompressed, so the type shows at a fixed offset
        archive.writestr("mimetype", "image/openraster", compress_type=zipfile.ZIP_STORED)
        archive.writestr("stack.xml", ET.tostring(image, encoding="utf-8", xml_declaration=True))
        archive.writestr("mergedimage.png", encoded[0])
        archive.writestr("Thumbnails/thumbnail.png", encoded[1])
        for number, data in enumerate(encoded[2:]):
            archive.writestr(f"data/layer{number}.png", data)
        if doc.recipes:  # (other programs pass over a file they do not know)
            runs = json.dumps({"version": 1, "runs": doc.recipes}, default=str)
            archive.writestr(RECIPES, runs, compress_type=zipfile.ZIP_DEFLATED)


def named(layer: Any, name: str) -> None:
    """A PSD layer's name: in full as Unicode (the 'luni' block Photoshop, Krita and GIMP
    read: "—", "✓", "写真"), and as close as Mac Roman comes in the old Pascal name that
    older readers show; at most 255 characters, as the format allows."""
    name = name[:255]
    layer.name = name  # (psd-tools writes the Unicode block)
    layer._record.name = name.encode("mac_roman", "replace").decode("mac_roman")


def psd_curves(curves: Curves) -> Any:
    """Tone curves (engine/files/curves.py, on whole levels) as a PSD's Curves block:
    for red, green and blue (channels 1, 2, 3) their points as (output, input) levels,
    in the old list and again in the 'Crv ' part that Photoshop and psd-tools read."""
    from psd_tools.psd.adjustments import Curves, CurvesExtraItem, CurvesExtraMarker

    channels = [
        [(round(y * 255), round(x * 255)) for x, y in points]
        for points in (curves.red, curves.green, curves.blue)
    ]
    # (psd-tools' fields convert any list; its stubs ask for an Iterable of a free type)
    items = [CurvesExtraItem(n + 1, points) for n, points in enumerate(channels)]  # type: ignore[arg-type]
    extra = CurvesExtraMarker(version=4, items=items)  # type: ignore[arg-type]
    return Curves(False, 1, 0b1110, channels, extra)  # type: ignore[arg-type]


def write_psd(doc: LayeredImage, path: Path | BinaryIO) -> None:
    from psd_tools import PSDImage
    from psd_tools.constants import BlendMode

    modes = {"multiply": BlendMode.MULTIPLY, "dodge": BlendMode.COLOR_DODGE}
    if any(layer.blend == "destination-in" for layer, _ in doc.pixel_layers()):
        raise BadInput(
            "A background removal step cuts out what lies below it, which a PSD layer "
            "cannot do; save as .ora (Krita, GIMP, the layerpath editor) or as .png."
        )
    psd = PSDImage.new("RGBA", (doc.width, doc.height))
    from psd_tools.constants import Resource, Tag
    from psd_tools.psd.image_resources import ImageResource
    from psd_tools.psd.tagged_blocks import TaggedBlock

    # the photo's colour profile and camera metadata, where Photoshop and Krita read them
    exif = doc.exif.removeprefix(EXIF_HEADER) if doc.exif else None  # (a PSD holds it bare)
    for key, data in (
        (Resource.ICC_PROFILE, doc.icc_profile),
        (Resource.EXIF_DATA_1, exif),
        (Resource.XMP_METADATA, doc.xmp),
    ):
        if data:
            psd._record.image_resources[key] = ImageResource(key=key, data=data)

    def add(parent: Any, layer: PixelLayer) -> None:
        whole = layer.curves.whole if layer.curves is not None else None
        if whole is not None:  # live: a Curves adjustment layer (engine/files/curves.py)
            made = parent.create_pixel_layer(Image.new("RGBA", (0, 0)), name="layer")
            made._record.tagged_blocks[Tag.CURVES] = TaggedBlock(
                key=Tag.CURVES, data=psd_curves(whole)
            )
        else:
            pixels, blend, (left, top) = layer.pixels, layer.blend, layer.offset
            if layer.change is not None:  # only its own change, in its blend mode
                pixels, blend, left, top = layer.change.pixels, layer.change.mode, 0, 0
            made = parent.create_pixel_layer(
                Image.fromarray(pixels, "RGBA"), name="layer", top=top, left=left
            )
            if blend != "normal":
                made.blend_mode = modes[blend]
        named(made, layer.name)
        made.visible = layer.visible

    for layer in doc.layers:
        if isinstance(layer, GroupLayer):
            group = psd.create_group(name="group")
            if layer.isolated:
                group.blend_mode = BlendMode.NORMAL
            named(group, layer.name)
            group.visible = layer.visible
            for child in layer.children:
                add(group, child)
        else:
            add(psd, layer)
    if not any(
        (layer.curves and layer.curves.whole) or layer.blend != "normal" or layer.change
        for layer, _ in doc.pixel_layers()
    ):
        psd.save(path)
        return
    # psd-tools works out the merged picture with the Curves layers it made as empty
    # pixel layers, and every layer as if its blend mode were normal: the file's merged
    # picture (what viewers show) is ours instead
    from psd_tools.api import numpy_io

    buffer = io.BytesIO()
    psd.save(buffer)
    psd = PSDImage.open(io.BytesIO(buffer.getvalue()))
    merged = composite(doc).astype(np.float32) / 255.0
    planes = numpy_io.encode_image_data(psd, merged[..., :3], merged[..., 3:])
    psd._record.image_data.set_data(planes, psd._record.header)
    if isinstance(path, (str, Path)):
        with open(path, "wb") as file:
            psd._record.write(file)
    else:
        psd._record.write(path)


#: what `write_layered` writes, by suffix: layers (.ora, .psd, .kra) or the flattened picture
LAYERED_OUTPUTS = {".ora", ".psd", ".kra"}
FLAT_OUTPUTS = {".png", ".jpg", ".jpeg", ".tif", ".tiff"}


def _format_problem(path: Path, deep: bool = False) -> str | None:
    """Why layerpath cannot write this kind of file (None when it can): a format it
    does not write, or a PSD for a 16-bit picture (a PSD is written at 8 bits here)."""
    suffix = path.suffix.lower()
    if suffix not in LAYERED_OUTPUTS | FLAT_OUTPUTS:
        return (
            f"Cannot write '{path.name}': use .ora, .psd or .kra for layers, or .png, .jpg or .tif "
            "for a flattened picture"
        )
    if deep and suffix == ".psd":
        return (
            "This picture has 16 bits per channel and a PSD is written here at 8; save as "
            ".ora (your layer kept at 16 bits) or as a 16-bit .tif or .png"
        )
    return None


def output_problem(
    path: Path,
    inputs: Iterable[Path] = (),
    size: tuple[int, int] | None = None,
    any_format: bool = False,
    deep: bool = False,
) -> str | None:
    """Why `path` cannot take a result (None when it can), found before any tool runs:
    a format layerpath does not write for this picture (_format_problem; unless
    `any_format`: a report), one of the inputs, a folder, a file in layerpath's own
    folders (layerpath/files.py), a folder that cannot be
    written (a temporary file is made there and removed, which also finds a name too
    long), or less free space than the picture's raw size (`size`: w, h)."""
    path = Path(path)
    if (refused := output_refusal(path, inputs, replace=True, example="result.ora")) is not None:
        return refused
    if not any_format and (problem := _format_problem(path, deep)) is not None:
        return problem
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        return f"Cannot write into {folder} ({exc.strerror or exc}); choose another folder or name"
    if size is not None:
        need = size[0] * size[1] * 4
        free = shutil.disk_usage(folder).free
        if free < need:
            return (
                f"The folder {folder} has {free / 1e6:.0f} MB free; the result needs about "
                f"{need / 1e6:.0f} MB. Free some space or choose another folder"
            )
    return None


def _flat(doc: LayeredImage, suffix: str, export: Export) -> Callable[[BinaryIO], None]:
    """A writer of the flattened picture: PNG and TIFF keep transparency; JPEG has none,
    so what is transparent shows white, as on paper."""

    def write(file: BinaryIO) -> None:
        # at the photo's 16 bits where it has them and the format holds them
        merged = composite(doc, deep=doc.deep and suffix not in (".jpg", ".jpeg"))
        icc = doc.icc_profile
        if export.srgb:
            merged, icc = in_srgb(merged, icc)
        if export.long_edge is not None:
            merged = scaled_to(merged, export.long_edge)
        # an opaque picture as RGB (no alpha channel nobody asked for)
        colours = merged[..., :3] if suffix != ".jpg" and _all_opaque(merged) else merged
        xmp = doc.xmp
        if xmp and suffix in (".jpg", ".jpeg") and len(xmp) > JPEG_XMP_BYTES:
            log.warning(
                "the photo's XMP (%d KB) is more than a JPEG's one XMP block holds; the JPEG "
                "is written without it (a .tif, .png or .psd keeps it)",
                len(xmp) // 1024,
            )
            xmp = None
        # metadata an encoder refuses (libtiff, Pillow's EXIF): the picture is kept, with
        # what of it can be written (without the EXIF, then without the XMP too), and said
        tries = [(doc.exif, xmp), (None, xmp), (None, None)]
        for number, (exif, packet) in enumerate(tries):
            try:
                _encode(file, colours, merged, icc, exif, packet)
                return
            except (ValueError, RuntimeError, TypeError, struct.error) as exc:
                if number == len(tries) - 1:
                    raise
                left = "its EXIF" if number == 0 else "its XMP too"
                log.warning(
                    "the photo's metadata could not be written into %s (%s); it is written "
                    "without %s", suffix, exc, left,
                )  # fmt: skip
                file.seek(0)
                file.truncate()

    def _encode(
        file: BinaryIO,
        colours: np.ndarray,
        merged: np.ndarray,
        icc: bytes | None,
        exif: bytes | None,
        xmp: bytes | None,
    ) -> None:
        metadata = {"icc_profile": icc, "exif": exif, "xmp": xmp}
        given = {k: v for k, v in metadata.items() if v}
        if suffix == ".png":
            file.write(encode_png(colours, **metadata))
        elif suffix in (".tif", ".tiff") and merged.dtype == np.uint16:
            write_tiff16(file, colours, icc, exif, xmp)
        elif suffix in (".tif", ".tiff"):
            # the EXIF tags in the TIFF's own directory, its EXIF and GPS directories as
            # directories of the TIFF, and the XMP packet beside them: Pillow's own
            # writer, uncompressed (libtiff, which compresses, cannot write those
            # directories; and an uncompressed TIFF is written several times faster)
            tags = Image.Exif()
            if exif:
                tags.load(exif.removeprefix(EXIF_HEADER))
                for pointer in _EXIF_DIRECTORIES:
                    if pointer in tags:
                        tags[pointer] = dict(tags.get_ifd(pointer))
            if xmp:
                tags[XMP_TAG] = xmp
            mode = "RGBA" if colours is merged else "RGB"
            Image.fromarray(np.ascontiguousarray(colours), mode).save(
                file, format="TIFF", icc_profile=icc, exif=tags
            )
        else:
            # (4:4:4 at 90 and above: a photographer's export; below, the web's 4:2:0)
            chroma = 0 if export.quality >= 90 else 2
            picture = _for_jpeg(merged)
            picture.save(file, format="JPEG", quality=export.quality, subsampling=chroma, **given)

    return write


#: the most XMP one JPEG APP1 block holds (65,535 bytes less its header)
JPEG_XMP_BYTES = 65_502


def _for_jpeg(rgba: np.ndarray) -> Image.Image:
    """8-bit RGBA as the RGB picture a JPEG holds: an opaque one read where it lies (as
    Pillow's RGBX, the fourth byte unread: no copy of a camera-sized picture), else on
    white paper (on_white)."""
    h, w = rgba.shape[:2]
    if rgba.flags.c_contiguous and opaque(rgba):
        return Image.frombuffer("RGBX", (w, h), rgba, "raw", "RGBX", 0, 1)
    return Image.fromarray(on_white(rgba), "RGB")


def in_srgb(rgba: np.ndarray, icc: bytes | None) -> tuple[np.ndarray, bytes]:
    """8-bit RGBA in the colour space its profile `icc` describes, converted to sRGB
    (LittleCMS, perceptual), and the sRGB profile's bytes to embed; a picture with no
    profile is sRGB already."""
    from PIL import ImageCms

    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB"))
    if icc:
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        except (OSError, ImageCms.PyCMSError) as exc:
            raise BadInput(f"The photo's colour profile cannot be read ({exc}).") from exc
        picture = Image.fromarray(np.ascontiguousarray(rgba), "RGBA")
        moved = ImageCms.profileToProfile(
            picture, source, srgb, ImageCms.Intent.PERCEPTUAL, outputMode="RGBA"
        )
        assert moved is not None
        rgba = np.asarray(moved)
    return rgba, srgb.tobytes()


def scaled_to(rgba: np.ndarray, long_edge: int) -> np.ndarray:
    """The picture scaled down so its longest side is `long_edge` (area averaging;
    straight alpha premultiplied first, so no fringe shows); as it is when it is no
    larger."""
    h, w = rgba.shape[:2]
    if max(h, w) <= long_edge:
        return rgba
    scale = long_edge / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    top = float(np.iinfo(rgba.dtype).max)
    if int(rgba[..., 3].min()) == int(top):
        return cv2.resize(rgba, size, interpolation=cv2.INTER_AREA)
    alpha = rgba[..., 3:4].astype(np.float32) / top
    carried = np.concatenate([rgba[..., :3] * alpha, rgba[..., 3:4]], axis=-1).astype(np.float32)
    small = np.asarray(cv2.resize(carried, size, interpolation=cv2.INTER_AREA), np.float32)
    colours = small[..., :3] / np.maximum(small[..., 3:4] / top, 1e-6)
    made = np.concatenate([colours, small[..., 3:4]], axis=-1)
    return np.clip(np.rint(made), 0, top).astype(rgba.dtype)


def on_white(rgba: np.ndarray) -> np.ndarray:
    """8-bit RGBA as RGB on white paper (for a format without transparency). An opaque
    picture's colour channels as they are, with no blend; else a band of rows at a time
    in integers (round(c*a/255 + 255 - a))."""
    if opaque(rgba):
        return cv2.cvtColor(np.ascontiguousarray(rgba), cv2.COLOR_RGBA2RGB)
    out = np.empty(rgba.shape[:2] + (3,), np.uint8)
    for row in range(0, rgba.shape[0], BAND):
        band = rgba[row : row + BAND]
        alpha = band[..., 3]
        if alpha.min() == 255:
            out[row : row + BAND] = band[..., :3]
            continue
        a = alpha.astype(np.uint32)[..., None]
        # c*a/255 + (255 - a), rounded: (c*a + 255*(255 - a) + 127) // 255
        mixed = (band[..., :3].astype(np.uint32) * a + 255 * (255 - a) + 127) // 255
        out[row : row + BAND] = mixed.astype(np.uint8)
    return out


@dataclass(frozen=True)
class Export:
    """How a flattened picture is written: its JPEG quality, its longest side (scaled
    down to it, never up) and whether its colours are converted to sRGB (for the web)."""

    quality: int = 95
    long_edge: int | None = None
    srgb: bool = False

    def problem(self, path: Path, deep: bool) -> str | None:
        """Why these options cannot be kept for `path` (None: they can), in words."""
        suffix = Path(path).suffix.lower()
        if not 1 <= self.quality <= 100:
            return f"--quality {self.quality} is outside 1..100 (95: the default)"
        if self.quality != 95 and suffix not in (".jpg", ".jpeg"):
            return "--quality is a JPEG's; the output is not a .jpg"
        if self.long_edge is not None and self.long_edge < 16:
            return f"--long-edge {self.long_edge} is too small (16 pixels or more)"
        if (self.long_edge is not None or self.srgb) and suffix in LAYERED_OUTPUTS:
            return (
                "--long-edge and --srgb are for a flattened picture (.jpg, .png, .tif); a "
                f"{suffix} keeps the photo's layers at their size and colours"
            )
        if self.srgb and deep and suffix not in (".jpg", ".jpeg"):
            return "--srgb makes an 8-bit picture for the web: write a .jpg, or leave --srgb out"
        return None


def write_layered(doc: LayeredImage, path: Path, export: Export | None = None) -> Path:
    """Write .ora, .psd or .kra (layers) or a flattened .png, .jpg or .tif, by suffix, the
    flattened one as `export` says; never over an input file (the CLI checks),
    atomically (write_atomically)."""
    path = Path(path)
    suffix = path.suffix.lower()
    export = export or Export()
    problem = _format_problem(path, doc.deep) or export.problem(path, doc.deep)
    if problem is not None:
        raise BadInput(problem + ".")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".ora":
        return write_atomically(path, lambda file: write_ora(doc, file))
    if suffix == ".psd":
        return write_atomically(path, lambda file: write_psd(doc, file))
    if suffix == ".kra":  # (written by engine/files/kra.py, which reads this module)
        raise BadInput("A .kra is written with engine.files.kra.write_kra.")
    return write_atomically(path, _flat(doc, suffix, export))
