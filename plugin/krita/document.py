"""KritaDocument: the Document protocol over a Krita document.

Reads the projection (any RGBA depth; a 16-bit or float document's picture also at 16
bits, so the steps a tool works out in float keep the document's depth), the document's
colour profile (a named colour is converted into it), the global selection ("this"),
selection and transparency masks and `mask:NAME` paint layers as named masks. Writes each step inside
one group per run: pixels as a paint layer (only their bounds), masks as selection masks,
detections and OCR boxes as vector layers; and each run's report as a document
annotation, so a saved .kra remembers its runs. Existing user layers are never
touched. Every call happens on Krita's main thread (the panel guarantees it).
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import tempfile
from collections.abc import Iterator, Mapping
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
from krita import InfoObject, Krita, Selection
from PIL import Image, ImageCms

from layerpath.engine.execute.deep import eight_bit
from layerpath.engine.execute.layers import BOX_COLOR, STEP_NAME, box_thickness
from layerpath.engine.files.blends import Change
from layerpath.engine.files.curves import Curves
from layerpath.engine.files.io import LayeredImage, PixelLayer, picture_beneath
from layerpath.engine.files.kra import live_meta, write_kra
from layerpath.engine.hosts.document import step_meta
from layerpath.engine.types import LayerKind, Snapshot, StepLayer
from layerpath.errors import BadInput
from layerpath.gui.qt import QtCore
from layerpath.plugin.krita.pixels import from_rgba8, from_rgba16, to_rgba8, to_rgba16

MASK_TYPES = ("selectionmask", "transparencymask")
#: the kinds of step layer a reopened .kra's run is read back from (a run with boxes or
#: text among its steps is not listed again)
READ_BACK = ("pixels", "mask")


def _params_key(params: Mapping[str, Any]) -> str:
    """Parameters, comparable (as a file's record gives them back too)."""
    return json.dumps(dict(params), sort_keys=True, default=str)


def _recipe_key(step: StepLayer) -> tuple[str, str]:
    """A step's tool and parameters, comparable."""
    return step.tool, _params_key(step.params)


def _is_step(node: Any, entry: Mapping[str, Any]) -> bool:
    """Whether a node is the step layer a record names: a layer of the kinds layerpath
    makes, with the name the record gives (a record that names another layer, a user's
    own, is not followed)."""
    kinds = ("paintlayer", "filterlayer", "selectionmask")
    return node.type() in kinds and str(node.name()) == str(entry.get("name"))


def _mapping(value: Any) -> dict[str, Any]:
    """A record's mapping, or nothing where the file holds something else."""
    return dict(value) if isinstance(value, Mapping) else {}


def _uuid(node: Any) -> str:
    """A node's uuid, as a .kra names it."""
    return str(node.uniqueId().toString())


MASK_PREFIX = "mask:"
ANNOTATION = "layerpath"


def document_key(document: Any) -> str:
    """What identifies a Krita document across its Python wrappers."""
    return str(document.rootNode().uniqueId().toString())


def walk(node: Any) -> Iterator[Any]:
    """Every node below `node`, depth first."""
    for child in node.childNodes():
        yield child
        yield from walk(child)


def selection_mask(selection: Any, w: int, h: int) -> np.ndarray:
    """A krita.Selection (or None) as a boolean mask of the document's size."""
    mask = np.zeros((h, w), dtype=bool)
    if selection is None or selection.width() == 0 or selection.height() == 0:
        return mask
    x, y, sw, sh = selection.x(), selection.y(), selection.width(), selection.height()
    gray = np.frombuffer(bytes(selection.pixelData(x, y, sw, sh)), dtype=np.uint8).reshape(sh, sw)
    x0, y0, x1, y1 = max(0, x), max(0, y), min(w, x + sw), min(h, y + sh)
    if x0 < x1 and y0 < y1:
        mask[y0:y1, x0:x1] = gray[y0 - y : y1 - y, x0 - x : x1 - x] > 127
    return mask


_PROFILES: dict[tuple[str, str, str], bytes | None] = {}


def profile_of(document: Any) -> bytes | None:
    """The ICC profile of the document's colour space (None where Krita gives none).
    Krita's Python API names a profile but does not hand out its bytes, so a one-pixel
    document in the same colour space is exported to a PNG, which carries them."""
    key = (str(document.colorModel()), str(document.colorDepth()), str(document.colorProfile()))
    if key not in _PROFILES:
        _PROFILES[key] = None
        probe = Krita.instance().createDocument(1, 1, "layerpath profile", *key, 72.0)
        if probe is None:
            return None
        try:
            probe.setBatchmode(True)
            if str(probe.colorProfile()) != key[2]:  # Krita fell back to another profile
                return None
            with tempfile.TemporaryDirectory(prefix="layerpath-") as folder:
                path = Path(folder) / "profile.png"
                info = InfoObject()
                info.setProperty("forceSRGB", False)
                info.setProperty("saveSRGBProfile", True)
                if probe.exportImage(str(path), info) and path.exists():
                    with Image.open(path) as picture:
                        data = picture.info.get("icc_profile")
                    _PROFILES[key] = data if isinstance(data, bytes) and data else None
        finally:
            probe.close()
    return _PROFILES[key]


@functools.lru_cache(maxsize=8)
def is_linear(profile: bytes) -> bool:
    """Whether values in `profile` are linear light (a g10 profile: mid-grey 128 is
    about 188 in sRGB); False for sRGB, gamma 2.2 and 1.8 profiles."""
    try:
        transform = ImageCms.buildTransform(
            ImageCms.ImageCmsProfile(io.BytesIO(profile)),
            ImageCms.createProfile("sRGB"),
            "RGB",
            "RGB",
        )
    except (ImageCms.PyCMSError, OSError, ValueError, TypeError):
        return False
    grey = ImageCms.applyTransform(Image.new("RGB", (1, 1), (128, 128, 128)), transform)
    return bool(grey is not None and grey.getpixel((0, 0))[1] > 160)  # type: ignore[index]


def curves_node(curves: Curves, name: str) -> Any:
    """A Krita curves filter layer holding `curves`, not yet in any document. Krita
    5.1's Python API cannot set a curves filter's curves (its properties are not what
    it saves), so the layer is read from a small .kra layerpath writes
    (engine/files/kra.py) and cloned out of it."""
    holder = PixelLayer(name, np.zeros((64, 64, 4), np.uint8), curves=curves)
    with tempfile.TemporaryDirectory(prefix="layerpath-") as folder:
        path = Path(folder) / "curves.kra"
        write_kra(LayeredImage(64, 64, [holder]), path)
        source = Krita.instance().openDocument(str(path))
        if source is None:
            raise BadInput("Krita could not read the curves layer layerpath made.")
        try:
            found = [n for n in walk(source.rootNode()) if n.type() == "filterlayer"]
            if not found:
                raise BadInput("Krita read no curves layer from the file layerpath made.")
            return found[0].clone()
        finally:
            source.close()


class KritaDocument:
    """Adapter from a krita.Document to layerpath's Document protocol."""

    #: a run's steps that are tone curves or only their own change become Krita's own
    #: live layers (engine/hosts/session.py: RunSession._go_live)
    keeps_live = True

    def __init__(self, document: Any) -> None:
        self.document = document
        self._nodes: dict[str, Any] = {}
        self._groups: set[str] = set()
        self._ids = (str(n) for n in itertools.count(1))
        # each step layer's tool and parameters, and those of the layers that are live
        # (a curves filter layer, a change in a blend mode)
        self._made: dict[str, tuple[str, str]] = {}
        self._live: dict[str, tuple[str, str]] = {}
        # what each step layer is (step_meta, and what keeps it live), and the runs the
        # document keeps with the id of each one's group: the 'layerpath' annotation
        self._meta: dict[str, dict[str, Any]] = {}
        self._runs: list[tuple[dict[str, Any], str | None]] = []
        # the runs a reopened .kra keeps (each group's id, report and step layers, bottom
        # first), for the panel to list again and make again (reopened_run)
        self.reopened: list[tuple[str, Mapping[str, Any], list[tuple[str, dict[str, Any]]]]] = []
        self._take_record()

    # --- reading -------------------------------------------------------------------------

    def _check_model(self) -> str:
        if self.document.colorModel() != "RGBA":
            raise BadInput(
                "layerpath edits RGB images; convert this one with Image ▸ Convert Image "
                "Color Space ▸ RGB/Alpha first."
            )
        return str(self.document.colorDepth())

    def _colours(self, depth: str) -> tuple[bytes | None, bool]:
        """The profile the tools' values are in (None: sRGB) and whether a float
        document's linear values get the sRGB curve on their way to the tools. A linear
        float document's values reach the tools curved, so the profile describing them is
        its primaries with sRGB's curve: sRGB itself for Krita's own float profile
        (sRGB-elle-V2-g10); a linear wide-gamut one (Rec2020-g10) is taken as sRGB too.
        A float document whose profile cannot be read is taken as linear, as Krita's
        float documents are by default."""
        profile = profile_of(self.document)
        if depth.startswith("F") and (profile is None or is_linear(profile)):
            return None, True
        return profile, False

    def snapshot(self) -> Snapshot:
        # the picture as Krita shows it once it has finished: a file just opened (or a
        # busy machine) may not have built its projection yet, and would read as empty
        self.document.waitForDone()
        depth = self._check_model()
        profile, linear = self._colours(depth)
        w, h = self.document.width(), self.document.height()
        data = bytes(self.document.pixelData(0, 0, w, h))
        deep = None if depth == "U8" else to_rgba16(data, depth, w, h, linear)
        image = to_rgba8(data, depth, w, h) if deep is None else eight_bit(deep)
        masks = self._named_masks(depth, w, h)
        return Snapshot(image, masks, self._selection(w, h), profile, deep)

    def _named_masks(self, depth: str, w: int, h: int) -> dict[str, np.ndarray]:
        masks: dict[str, np.ndarray] = {}
        for node in walk(self.document.rootNode()):
            name = str(node.name())
            if STEP_NAME.search(name):  # a layer or mask a run made
                continue  # (renamed to an object's name, it is used)
            if node.type() in MASK_TYPES:
                masks[name.removeprefix(MASK_PREFIX)] = selection_mask(node.selection(), w, h)
            elif node.type() == "paintlayer" and name.lower().startswith(MASK_PREFIX):
                pixels = to_rgba8(bytes(node.pixelData(0, 0, w, h)), depth, w, h)
                masks[name[len(MASK_PREFIX) :]] = pixels[..., 3] > 127
        return masks

    def _selection(self, w: int, h: int) -> np.ndarray | None:
        mask = selection_mask(self.document.selection(), w, h)
        return mask if mask.any() else None

    # --- writing -------------------------------------------------------------------------

    def add_group(self, name: str) -> str:
        root = self.document.rootNode()
        group = self.document.createGroupLayer(name)
        children = root.childNodes()
        root.addChildNode(group, children[-1] if children else None)  # on top
        group_id = next(self._ids)
        self._nodes[group_id] = group
        self._groups.add(group_id)
        return group_id

    def add_step(self, group: str, step: StepLayer) -> str:
        """Pixels as a paint layer (only their bounds; a cut-out in Krita's
        destination-in mode, its group passing through), a mask as a selection mask, boxes
        (detections, OCR) as a vector layer of rectangles."""
        if group not in self._groups:
            raise BadInput(f"No run group {group} in this document.")
        if step.pixels is None:
            raise BadInput(f"Step {step.name} has no pixels to write.")
        depth = self._check_model()
        linear = self._colours(depth)[1]
        parent = self._nodes[group]
        if step.canvas is not None:  # a new frame; the other layers keep their pixels
            dx, dy = step.shift  # grown on the left or top, or cropped: the origin moves
            # (Krita keeps a layer's pixels outside the canvas: a crop loses none)
            self.document.resizeImage(-dx, -dy, step.canvas[0], step.canvas[1])
        children = parent.childNodes()
        node = self._node_for(step, parent, children[-1] if children else None, depth, linear)
        node.setVisible(step.visible)
        self.document.refreshProjection()
        layer_id = next(self._ids)
        self._nodes[layer_id] = node
        self._made[layer_id] = _recipe_key(step)
        self._meta[layer_id] = step_meta(step)
        return layer_id

    def replace_step(self, layer: str, step: StepLayer) -> None:
        """A new node made as add_step makes one, put where the old one is (just above
        it, the old one then removed), shown or hidden as the old one was. A live layer
        made again with the same tool and parameters (the steps beneath it changed)
        stays as it is: Krita works it out again from what now lies beneath it."""
        old = self._node(layer)
        if step.pixels is None:
            raise BadInput(f"Step {step.name} has no pixels to write.")
        if old.parentNode() is None:  # deleted in Krita's Layers docker: it stays deleted
            return
        if self._live.get(layer) == _recipe_key(step):
            return
        self._live.pop(layer, None)
        self._made[layer] = _recipe_key(step)
        self._meta[layer] = step_meta(step)
        depth = self._check_model()
        node = self._node_for(step, old.parentNode(), old, depth, self._colours(depth)[1])
        node.setVisible(bool(old.visible()))
        old.remove()
        self._nodes[layer] = node
        self.document.refreshProjection()
        self._write_record()

    def make_live(self, layer: str, live: Curves | Change) -> None:
        """The step layer becomes Krita's own live layer (engine/files/live.py): a curves
        filter layer, or a paint layer of just its change in multiply or colour dodge;
        its group passes through, so either works on what lies beneath. Only in an 8-bit
        document whose values are not linear light, the values the step was measured in."""
        depth = self._check_model()
        if depth != "U8" or self._colours(depth)[1]:
            return
        node = self._node(layer)
        parent = node.parentNode()
        if parent is None:  # (deleted in Krita's Layers docker)
            return
        if isinstance(live, Change):
            h, w = live.pixels.shape[:2]
            node.setPixelData(QtCore.QByteArray(from_rgba8(live.pixels, depth, False)), 0, 0, w, h)
            node.setBlendingMode(live.mode)
        else:
            made = curves_node(live, str(node.name()))
            parent.addChildNode(made, node)
            made.setVisible(bool(node.visible()))
            node.remove()
            self._nodes[layer] = made
        parent.setPassThroughMode(True)
        self._live[layer] = self._made[layer]
        holder = PixelLayer("", np.zeros((1, 1, 4), np.uint8))
        holder.curves, holder.change = (live, None) if isinstance(live, Curves) else (None, live)
        self._meta[layer] = {**self._meta.get(layer, {}), **live_meta(holder)}
        self.document.refreshProjection()
        self._write_record()

    def _node_for(self, step: StepLayer, parent: Any, above: Any, depth: str, linear: bool) -> Any:
        """The step's node, added to `parent` just above `above` (None: at the bottom)."""
        assert step.pixels is not None
        if step.kind == LayerKind.MASK:
            node = self.document.createSelectionMask(step.name)
        elif step.kind in (LayerKind.BOXES, LayerKind.TEXT) and step.boxes and self._active():
            node = self.document.createVectorLayer(step.name)
        else:
            node = self.document.createNode(step.name, "paintlayer")
        parent.addChildNode(node, above)
        h, w = step.pixels.shape[:2]
        x, y = step.offset
        if step.kind == LayerKind.MASK:
            selection = Selection()
            alpha = (step.pixels[..., 3] > 0).astype(np.uint8) * 255
            selection.setPixelData(QtCore.QByteArray(alpha.tobytes()), x, y, w, h)
            node.setSelection(selection)
        elif node.type() == "vectorlayer":
            node.addShapesFromSvg(self._boxes_svg(step))
        else:  # at the document's depth: a step worked out at 16 bits keeps them
            data = (
                from_rgba8(step.pixels, depth, linear)
                if step.deep is None
                else from_rgba16(step.deep, depth, linear)
            )
            node.setPixelData(QtCore.QByteArray(data), x, y, w, h)
        if step.blend != "normal":  # a cut-out: it must reach the layers below its group
            node.setBlendingMode(step.blend)
            parent.setPassThroughMode(True)
        return node

    def _active(self) -> bool:
        """Whether this is the document in the active view. Krita 5.1's
        VectorLayer.addShapesFromSvg works on the active document and crashes without one,
        so boxes become a vector layer only then (else a paint layer with the outlines)."""
        active = Krita.instance().activeDocument()
        return active is not None and document_key(active) == document_key(self.document)

    def _boxes_svg(self, step: StepLayer) -> str:
        """Rectangles in pixel units; Krita's vector shapes live in points (1/72 in), so
        the viewBox maps the document's pixels onto its size in points."""
        w, h = self.document.width(), self.document.height()
        points = 72.0 / (self.document.resolution() or 72)
        stroke = box_thickness((h, w))
        color = "#{:02x}{:02x}{:02x}".format(*BOX_COLOR)
        lines = (step.text or "").splitlines()
        rects = []
        for i, box in enumerate(step.boxes):
            label = lines[i] if i < len(lines) else box.label
            rects.append(
                f'<rect id="box{i + 1}" x="{box.x0}" y="{box.y0}" width="{box.width}" '
                f'height="{box.height}" fill="none" stroke="{color}" '
                f'stroke-width="{stroke}"><title>{escape(label)}</title></rect>'
            )
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w * points}pt" '
            f'height="{h * points}pt" viewBox="0 0 {w} {h}">{"".join(rects)}</svg>'
        )

    def step_order(self, group: str) -> list[str]:
        """The group's step layers as they lie now in Krita, bottom first (moved in
        Krita's Layers docker, the order changes)."""
        if group not in self._nodes:
            return []
        ids = {_uuid(node): k for k, node in self._nodes.items() if k not in self._groups}
        children = self._nodes[group].childNodes()
        return [ids[u] for node in children if (u := _uuid(node)) in ids]

    def set_visible(self, layer: str, visible: bool) -> None:
        self._node(layer).setVisible(visible)
        self.document.refreshProjection()

    def is_visible(self, layer: str) -> bool:
        node = self._node(layer)  # (one deleted in Krita's Layers docker has no parent)
        return bool(node.visible()) and node.parentNode() is not None

    def remove(self, layer: str) -> None:
        self._node(layer).remove()
        del self._nodes[layer]
        self._groups.discard(layer)
        self._meta.pop(layer, None)
        self.document.refreshProjection()
        self._write_record()

    def record_run(self, report: Mapping[str, Any], group: str | None = None) -> None:
        """Keep the report in the document's layerpath annotation (saved in the .kra),
        with its group and what each of its step layers is, by their nodes' uuids."""
        for index, (_, kept) in enumerate(self._runs):
            if group is not None and kept == group:  # (a run made again: its record now)
                self._runs[index] = (dict(report), group)
                break
        else:
            self._runs.append((dict(report), group))
        self._write_record()

    def runs(self) -> list[dict[str, Any]]:
        """The reports of the runs the document keeps."""
        return [report for report, _ in self._runs]

    def _write_record(self) -> None:
        """The annotation, as the .kra the command line writes has it (engine/files/
        kra.py): 'runs', each one's group's uuid ('groups') and the step layers ('steps')."""
        uuids = {layer: _uuid(node) for layer, node in self._nodes.items()}
        parents = {
            layer: _uuid(parent)
            for layer, node in self._nodes.items()
            if layer in self._meta and (parent := node.parentNode()) is not None
        }
        record = {
            "version": 1,
            "runs": [report for report, _ in self._runs],
            "groups": [uuids.get(group) if group else None for _, group in self._runs],
            "steps": [
                {
                    **meta,
                    "uuid": uuids[layer],
                    "group": parents[layer],
                    "name": str(self._nodes[layer].name()),
                }
                for layer, meta in self._meta.items()
                if layer in parents
            ],
        }
        data = json.dumps(record, default=str).encode()
        self.document.setAnnotation(
            ANNOTATION, "layerpath runs (plan, steps, results)", QtCore.QByteArray(data)
        )

    def _take_record(self) -> None:
        """The runs the annotation keeps (a .kra the docker or the command line saved):
        kept, and those whose group and step layers are all still there listed in
        `reopened`. A run with a step layer that is not a picture (a mask, boxes) is not
        listed: it is not made again here. The record is data: a malformed one keeps
        nothing but the document's layers, which are never touched."""
        if ANNOTATION not in list(self.document.annotationTypes()):
            return
        try:
            record = json.loads(bytes(self.document.annotation(ANNOTATION)).decode())
            groups = list(record.get("groups") or [])
            runs = [
                (dict(r), groups[i] if i < len(groups) and isinstance(groups[i], str) else None)
                for i, r in enumerate(record.get("runs") or [])
                if isinstance(r, Mapping)
            ]
            steps = [dict(e) for e in record.get("steps") or [] if isinstance(e, Mapping)]
        except (ValueError, TypeError, AttributeError):
            return
        latest = {uuid: index for index, (_, uuid) in enumerate(runs) if uuid}
        nodes = {_uuid(node): node for node in walk(self.document.rootNode())}
        for index, (report, uuid) in enumerate(runs):
            group = nodes.get(uuid) if uuid else None
            if uuid and latest[uuid] != index:
                continue  # (an older record of a run made again: the newest one stands)
            if group is None or group.type() != "grouplayer":
                self._runs.append((report, None))
                continue
            group_id = next(self._ids)
            self._nodes[group_id] = group
            self._groups.add(group_id)
            self._runs.append((report, group_id))
            children = {_uuid(child): child for child in group.childNodes()}
            order = list(children)  # bottom first
            mine: dict[str, dict[str, Any]] = {}
            for entry in steps:  # (a step layer is the run group's own child, as named)
                node = children.get(str(entry.get("uuid")))
                if entry.get("group") == uuid and node is not None and _is_step(node, entry):
                    mine.setdefault(str(entry["uuid"]), entry)
            layers = []
            for node_uuid in sorted(mine, key=order.index):
                entry = mine[node_uuid]
                layer_id = next(self._ids)
                self._nodes[layer_id] = children[node_uuid]
                meta = {k: v for k, v in entry.items() if k not in ("uuid", "group", "name")}
                self._meta[layer_id] = meta
                params = _mapping(meta.get("params"))
                self._made[layer_id] = (str(meta.get("tool") or ""), _params_key(params))
                if meta.get("live"):
                    self._live[layer_id] = self._made[layer_id]
                layers.append((layer_id, meta))
            if layers and all(meta.get("kind", "pixels") in READ_BACK for _, meta in layers):
                self.reopened.append((group_id, report, layers))

    def reopened_run(self, group_id: str) -> tuple[list[tuple[str, StepLayer]], Snapshot]:
        """A reopened run's step layers as the steps they are, bottom first (a paint
        layer's pixels as Krita holds them, a change's in its blend mode, a curves
        layer's as its curves make the picture beneath it), and what the layers below
        its group make (read from Krita once)."""
        layers = next((found for g, _, found in self.reopened if g == group_id), [])
        start = self.beneath(group_id)
        picture, deep = start.image, start.deep
        depth = self._check_model()
        made = []
        for layer_id, meta in layers:
            node = self._nodes[layer_id]
            live = _mapping(meta.get("live"))
            kind = LayerKind.MASK if meta.get("kind") == "mask" else LayerKind.PIXELS
            offset, pixels16 = (0, 0), None
            if node.type() == "filterlayer" and live.get("curves"):
                try:  # (data from a file: three curves of two points or more)
                    points = [tuple(tuple(map(float, p))[:2] for p in c) for c in live["curves"]]
                    if len(points) != 3 or any(
                        len(c) < 2 or len(p) != 2 for c in points for p in c
                    ):
                        raise ValueError("not three curves of points")
                    rgb = Curves(*points).applied(picture)
                except (TypeError, ValueError, IndexError) as exc:
                    raise BadInput(f"its curves layer's record is not layerpath's ({exc})") from exc
                pixels = np.dstack([rgb, picture[..., 3]])
            elif node.type() == "selectionmask" and kind == LayerKind.MASK:
                selection = node.selection()
                x, y = selection.x(), selection.y()
                bw, bh = selection.width(), selection.height()
                if bw <= 0 or bh <= 0:
                    continue
                grey = np.frombuffer(bytes(selection.pixelData(x, y, bw, bh)), np.uint8)
                pixels = np.zeros((bh, bw, 4), np.uint8)
                pixels[..., :3] = 255
                pixels[..., 3] = grey.reshape(bh, bw)
                offset = (x, y)
            elif node.type() == "paintlayer":
                bounds = node.bounds()
                x, y, bw, bh = bounds.x(), bounds.y(), bounds.width(), bounds.height()
                if bw <= 0 or bh <= 0:
                    continue
                data = bytes(node.pixelData(x, y, bw, bh))
                if depth == "U8":
                    pixels = to_rgba8(data, depth, bw, bh)
                else:  # (as the snapshot reads them: a linear float's values curved)
                    pixels16 = to_rgba16(data, depth, bw, bh, self._colours(depth)[1])
                    pixels = eight_bit(pixels16)
                offset = (x, y)
            else:
                continue
            try:  # (data from a file)
                cost, quality = float(meta.get("cost") or 0.0), float(meta.get("quality") or 0.0)
            except (TypeError, ValueError) as exc:
                raise BadInput(f"a step's record is not layerpath's ({exc})") from exc
            step = StepLayer(
                str(node.name()),
                kind,
                str(meta.get("tool") or ""),
                str(meta.get("subtask") or ""),
                cost,
                quality,
                _mapping(meta.get("params")),
                pixels,
                offset,
                visible=bool(node.visible()),
                blend=str(node.blendingMode()) if live.get("change") else "normal",
                deep=pixels16,
            )
            made.append((layer_id, step))
            if step.visible and kind == LayerKind.PIXELS:
                if deep is not None:
                    deep = picture_beneath(picture, [step], deep)
                picture = picture_beneath(picture, [step])
        return made, start

    def beneath(self, group_id: str) -> Snapshot:
        """What the layers below a run's group make (Krita's projection with the group
        and everything above it hidden a moment), with the document's masks."""
        above = []  # the group, and what lies above it at each level it sits in
        node, first = self._nodes[group_id], True
        while (parent := node.parentNode()) is not None:
            siblings = list(parent.childNodes())  # bottom first
            mine = _uuid(node)
            index = next((i for i, n in enumerate(siblings) if _uuid(n) == mine), len(siblings))
            above += siblings[index if first else index + 1 :]
            node, first = parent, False
        shown = [bool(node.visible()) for node in above]
        modified = bool(self.document.modified())
        try:
            for node in above:
                node.setVisible(False)
            self.document.refreshProjection()
            self.document.waitForDone()
            return self.snapshot()
        finally:
            for node, was in zip(above, shown, strict=True):
                node.setVisible(was)
            self.document.refreshProjection()
            self.document.waitForDone()
            self.document.setModified(modified)

    def _node(self, layer: str) -> Any:
        if layer not in self._nodes:
            raise BadInput(
                f"Layer {layer} is not a layer layerpath added; user layers are never changed."
            )
        return self._nodes[layer]
