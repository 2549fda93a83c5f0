"""kritarunner -s kra_dump IN.kra OUT.json [LAYER ...]: what a saved .kra holds, as Krita
reads it back (layer tree, bounds, pixel hashes, the projection, the layerpath
annotation), and the projection with each named layer hidden in turn ("hidden"); pixels
are Krita's own bytes at the document's depth."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path


def _nodes(node, depth=0):  # type: ignore[no-untyped-def]
    for child in node.childNodes():
        bounds = child.bounds()
        x, y, w, h = bounds.x(), bounds.y(), bounds.width(), bounds.height()
        data = (
            bytes(child.pixelData(x, y, w, h)) if child.type() == "paintlayer" and w and h else b""
        )
        entry = {
            "name": child.name(),
            "type": child.type(),
            "depth": depth,
            "visible": child.visible(),
            "bounds": [x, y, w, h],
            "sha256": hashlib.sha256(data).hexdigest() if data else None,
            "blend": child.blendingMode(),
        }
        if child.type() == "grouplayer":
            entry["pass_through"] = child.passThroughMode()
        if child.type() == "selectionmask":
            selection = child.selection()
            sx, sy, sw, sh = selection.x(), selection.y(), selection.width(), selection.height()
            bits = bytes(selection.pixelData(sx, sy, sw, sh)) if sw and sh else b""
            entry["selection"] = [sx, sy, sw, sh, sum(1 for b in bits if b > 127)]
        if child.type() == "filterlayer":
            entry["filter"] = child.filter().name()
        if child.type() == "vectorlayer":
            entry["shapes"] = [shape.name() for shape in child.shapes()]
        yield entry
        yield from _nodes(child, depth + 1)


def __main__(args: list[str]) -> None:
    from krita import Krita

    source, target, *hide = args
    document = Krita.instance().openDocument(str(Path(source).resolve()))
    document.setBatchmode(True)
    document.waitForDone()
    w, h = document.width(), document.height()
    background = document.rootNode().childNodes()[0]
    annotation = (
        bytes(document.annotation("layerpath"))
        if "layerpath" in document.annotationTypes()
        else b""
    )
    dump = {
        "size": [w, h],
        "depth": document.colorDepth(),
        "nodes": list(_nodes(document.rootNode())),
        "background": base64.b64encode(bytes(background.pixelData(0, 0, w, h))).decode(),
        "projection": base64.b64encode(bytes(document.pixelData(0, 0, w, h))).decode(),
        "annotation": annotation.decode() if annotation else None,
        "hidden": {},
    }
    for name in hide:
        node = document.nodeByName(name)
        node.setVisible(False)
        document.refreshProjection()
        document.waitForDone()
        projection = bytes(document.pixelData(0, 0, w, h))
        dump["hidden"][name] = base64.b64encode(projection).decode()
        node.setVisible(True)
        document.refreshProjection()
        document.waitForDone()
    Path(target).write_text(json.dumps(dump), encoding="utf-8")
    document.close()
