"""Krita's own file (.kra), written without Krita: the user's layers and each run's
group, its step layers as paint layers, the steps that are tone curves (live.py) as
Krita's curves filter layers, which Krita works out again from whatever lies beneath
them, and the steps that are only a change of each pixel's brightness (blends.py) as
paint layers of gains in multiply or colour dodge.

What Krita needs to open the file, as Krita 5.1 writes its own: 'mimetype' first and
uncompressed; maindoc.xml (the layer tree, top first); for each paint layer its tiles
(64 x 64 pixels, blue-green-red-alpha, each tile stored raw), its default pixel and its
colour profile; for each filter layer its filter's settings and its selection (the whole
picture); the merged picture and a preview. Krita reads each paint layer's colours in
the profile beside it, so every layer carries the photo's profile (sRGB where it has
none). Each run's record (the report, and what each step layer is, by the layer's
uuid) is the document's 'layerpath' annotation, as the Krita docker keeps it.
"""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from pathlib import Path
from typing import Any, BinaryIO
from xml.etree import ElementTree as ET

import numpy as np
from PIL import Image, ImageCms

from layerpath.engine.files.curves import Curves, curve_text
from layerpath.engine.files.io import (
    THUMBNAIL_SIDE,
    GroupLayer,
    LayeredImage,
    PixelLayer,
    composite,
    encode_png,
)

MIME = "application/x-krita"
NAME = "layerpath"  # the image's name in the file: its folder of layers
TILE = 64
#: Krita's curves filter keeps a curve for all colours, then red, green, blue, alpha,
#: hue, saturation and lightness
CURVE_SLOTS = 8
ANNOTATION = "layerpath"


def _tiles(pixels: np.ndarray, offset: tuple[int, int]) -> bytes:
    """A layer's pixels (RGBA, 8 or 16 bits, placed at `offset`) as Krita's tiles: a
    header, then each tile that is not fully transparent as 'x,y,LZF,size' and its
    bytes (a first byte 0: stored raw, blue-green-red-alpha, little-endian). Worked
    out a row of tiles at a time, so a camera-size layer is never copied whole."""
    h, w = pixels.shape[:2]
    x, y = offset
    left, top = (x // TILE) * TILE, (y // TILE) * TILE
    cols, rows = -(-(x + w - left) // TILE), -(-(y + h - top) // TILE)
    size = 4 * pixels.dtype.itemsize
    band = np.zeros((TILE, cols * TILE, 4), dtype=np.dtype(pixels.dtype).newbyteorder("<"))
    parts = []
    for row in range(rows):
        band[...] = 0
        y0 = top + row * TILE  # the band's first row, in the picture
        a, b = max(y0, y), min(y0 + TILE, y + h)  # the layer's rows in it
        if a < b:
            band[a - y0 : b - y0, x - left : x - left + w] = pixels[a - y : b - y, :, [2, 1, 0, 3]]
        tiles = band.reshape(TILE, cols, TILE, 4).swapaxes(0, 1)
        shown = tiles[..., 3].any(axis=(1, 2))
        for col in np.flatnonzero(shown):  # (a transparent tile is the default pixel)
            data = b"\x00" + np.ascontiguousarray(tiles[col]).tobytes()
            parts.append(f"{left + col * TILE},{y0},LZF,{len(data)}\n".encode())
            parts.append(data)
    header = (
        f"VERSION 2\nTILEWIDTH {TILE}\nTILEHEIGHT {TILE}\nPIXELSIZE {size}\n"
        f"DATA {len(parts) // 2}\n"
    )
    return header.encode() + b"".join(parts)


def _printable(name: str) -> str:
    """A layer's name as the file holds it (control characters as spaces)."""
    return "".join(c if c.isprintable() else " " for c in name)


def _selection_all() -> bytes:
    """A selection of the whole picture: no tiles, every pixel the default (selected)."""
    return f"VERSION 2\nTILEWIDTH {TILE}\nTILEHEIGHT {TILE}\nPIXELSIZE 1\nDATA 0\n".encode()


def _curves_config(curves: Curves) -> bytes:
    identity = curve_text(((0.0, 0.0), (1.0, 1.0)))
    slots = [identity, *(curve_text(c) for c in (curves.red, curves.green, curves.blue))]
    slots += [identity] * (CURVE_SLOTS - len(slots))
    params = ET.Element("params", version="1")
    count = ET.SubElement(params, "param", name="nTransfers")
    count.text = str(CURVE_SLOTS)
    for number, text in enumerate(slots):
        ET.SubElement(params, "param", name=f"curve{number}").text = text
    return b"<!DOCTYPE params>\n" + ET.tostring(params, encoding="utf-8")


class _Writer:
    """The layer tree, written as it is walked: each layer's files go into the archive
    at once (a camera-size layer's tiles are not all held until the end)."""

    def __init__(self, archive: zipfile.ZipFile, profile: bytes) -> None:
        self.archive = archive
        self.profile = profile
        self.numbers = iter(range(2, 1 << 30))
        self.uuids: dict[int, str] = {}  # id(layer): its node's uuid

    def _common(self, node: ET.Element, layer: PixelLayer | GroupLayer) -> str:
        filename = f"layer{next(self.numbers)}"
        node_uuid = "{" + str(uuid.uuid4()) + "}"
        self.uuids[id(layer)] = node_uuid
        node.attrib.update(
            {
                "name": _printable(layer.name),
                "filename": filename,
                "visible": "1" if layer.visible else "0",
                "uuid": node_uuid,
                "x": "0",
                "y": "0",
                "opacity": "255",
                "colorlabel": "0",
                "collapsed": "0",
                "locked": "0",
                "intimeline": "0",
                "channelflags": "",
            }
        )
        return filename

    def layer(self, parent: ET.Element, layer: PixelLayer) -> None:
        node = ET.SubElement(parent, "layer")
        filename = self._common(node, layer)
        where = f"{NAME}/layers/{filename}"
        curves = layer.curves
        if curves is not None:
            node.attrib.update(
                nodetype="adjustmentlayer",
                filtername="perchannel",
                filterversion="1",
                compositeop="copy",
            )
            self.archive.writestr(f"{where}.filterconfig", _curves_config(curves))
            self.archive.writestr(f"{where}.pixelselection", _selection_all())
            self.archive.writestr(f"{where}.pixelselection.defaultpixel", b"\xff")
            return
        pixels = layer.deep if layer.deep is not None else layer.pixels
        blend, offset = layer.blend, layer.offset
        if layer.change is not None:  # only its own change, in its blend mode
            pixels, blend, offset = layer.change.pixels, layer.change.mode, (0, 0)
        deep = pixels.dtype == np.uint16
        node.attrib.update(
            nodetype="paintlayer",
            colorspacename="RGBA16" if deep else "RGBA",
            compositeop=blend,  # (Krita's ids: normal, destination-in, multiply, dodge)
            onionskin="0",
            channellockflags="",
        )
        self.archive.writestr(where, _tiles(pixels, offset))
        self.archive.writestr(f"{where}.defaultpixel", bytes(8 if deep else 4))
        self.archive.writestr(f"{where}.icc", self.profile)

    def group(self, parent: ET.Element, group: GroupLayer) -> None:
        node = ET.SubElement(parent, "layer")
        self._common(node, group)
        # a step that works on what lies beneath (a curves layer, a cut-out, a change in
        # a blend mode) must reach the layers below the group: the group passes through
        reaches = not group.isolated and any(
            child.blend != "normal" or child.curves or child.change for child in group.children
        )
        node.attrib.update(
            nodetype="grouplayer", compositeop="normal", passthrough="1" if reaches else "0"
        )
        children = ET.SubElement(node, "layers")
        for child in reversed(group.children):
            self.layer(children, child)


def _profile(doc: LayeredImage) -> bytes:
    if doc.icc_profile:
        return doc.icc_profile
    return bytes(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())


def live_meta(layer: PixelLayer) -> dict[str, Any]:
    """What keeps a step layer live, for the record: its curves' points, or its change's
    blend mode (nothing for a layer of pixels)."""
    if layer.curves is not None:
        curves = layer.curves
        return {
            "live": {
                "curves": [list(map(list, c)) for c in (curves.red, curves.green, curves.blue)]
            }
        }
    if layer.change is not None:
        return {"live": {"change": layer.change.mode}}
    return {}


def _record(doc: LayeredImage, uuids: dict[int, str]) -> bytes:
    """The runs' record, as the Krita docker keeps it: the reports ('runs'), the uuid of
    each run's group ('groups', null for a run that made none) and what each step layer
    is, by its node's uuid ('steps')."""
    runs, groups, steps = [], [], []
    for recipe in doc.recipes:
        runs.append(recipe.get("run", {}))
        index = recipe.get("group")
        group = (
            doc.layers[index] if isinstance(index, int) and 0 <= index < len(doc.layers) else None
        )
        groups.append(uuids[id(group)] if isinstance(group, GroupLayer) else None)
        if isinstance(group, GroupLayer):
            for child, meta in zip(group.children, recipe.get("steps", []), strict=False):
                if meta:
                    entry = {
                        "uuid": uuids[id(child)],
                        "group": uuids[id(group)],
                        "name": _printable(child.name),
                        **meta,
                    }
                    steps.append({**entry, **live_meta(child)})
    record = {"version": 1, "runs": runs, "groups": groups, "steps": steps}
    return json.dumps(record, default=str).encode()


def _maindoc(doc: LayeredImage, layers: ET.Element, annotated: bool) -> bytes:
    root = ET.Element(
        "DOC",
        {
            "xmlns": "http://www.calligra.org/DTD/krita",
            "kritaVersion": "5.1.5",
            "syntaxVersion": "2.0",
            "editor": "layerpath",
        },
    )
    image = ET.SubElement(
        root,
        "IMAGE",
        {
            "name": NAME,
            "mime": "application/x-kra",
            "width": str(doc.width),
            "height": str(doc.height),
            "colorspacename": "RGBA16" if doc.deep else "RGBA",
            "profile": "sRGB-elle-V2-srgbtrc.icc",  # (the profile written beside it wins)
            "x-res": "72",
            "y-res": "72",
            "description": "",
        },
    )
    image.append(layers)
    if annotated:
        notes = ET.SubElement(image, "Annotations")
        ET.SubElement(
            notes, "Annotation", type=ANNOTATION, description="layerpath runs (plan, steps)"
        )
    head = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b"<!DOCTYPE DOC PUBLIC '-//KDE//DTD krita 2.0//EN' "
        b"'http://www.calligra.org/DTD/krita-2.0.dtd'>\n"
    )
    return head + ET.tostring(root, encoding="utf-8")


def write_kra(doc: LayeredImage, path: Path | BinaryIO) -> None:
    """The .kra file (see the module's words)."""
    profile = _profile(doc)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("mimetype", MIME, compress_type=zipfile.ZIP_STORED)
        writer = _Writer(archive, profile)
        layers = ET.Element("layers")
        for layer in reversed(doc.layers):  # the top layer first
            if isinstance(layer, GroupLayer):
                writer.group(layers, layer)
            else:
                writer.layer(layers, layer)
        annotated = bool(doc.recipes)
        archive.writestr("maindoc.xml", _maindoc(doc, layers, annotated))
        merged = composite(doc)
        preview = Image.fromarray(merged, "RGBA")
        preview.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE), Image.Resampling.BOX)
        buffer = io.BytesIO()
        preview.save(buffer, format="PNG")
        archive.writestr("preview.png", buffer.getvalue())
        merged_png = encode_png(merged, icc_profile=doc.icc_profile, exif=doc.exif, xmp=doc.xmp)
        archive.writestr("mergedimage.png", merged_png, compress_type=zipfile.ZIP_STORED)
        archive.writestr(f"{NAME}/annotations/icc", profile)
        if annotated:
            archive.writestr(f"{NAME}/annotations/{ANNOTATION}", _record(doc, writer.uuids))
