"""YOLO object detection for the 80 COCO classes: the ONNX export through ONNX Runtime
(runs everywhere, CI included) and the ultralytics package (PyTorch + torchvision, for
GPU machines). Both give boxes for the named object only.

The ONNX path does what ultralytics does around the network: the photo letterboxed to
the model's square input (grey border, aspect kept), the raw output (1, 4 + classes,
anchors: centre, size and a score per class) decoded, non-maximum suppression with
OpenCV, boxes mapped back to photo pixels. Class names come from the export's metadata
(ultralytics writes them), else the COCO list.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.imaging import rgb
from layerpath.kit.names import COCO_CLASSES, coco_class
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.base import OnnxModelTool, Tool
from layerpath.tools.device import RESIDENT, tool_device


def letterbox(image_rgb: np.ndarray, side: int) -> tuple[np.ndarray, float, tuple[int, int]]:
    """The photo scaled to fit `side` x `side` with a grey border; the scale and the
    border's left and top widths."""
    h, w = image_rgb.shape[:2]
    scale = min(side / h, side / w)
    new_w, new_h = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(
        image_rgb, (new_w, new_h), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    )
    left, top = (side - new_w) // 2, (side - new_h) // 2
    square = np.full((side, side, 3), 114, np.uint8)
    square[top : top + new_h, left : left + new_w] = small
    return square, scale, (left, top)


def pixel_box(
    x0: float, y0: float, x1: float, y1: float, shape: tuple[int, ...], label: str, score: float
) -> Box | None:
    """A detection's corners as a box of whole photo pixels inside the photo; None when
    less than two pixels remain."""
    h, w = shape[:2]
    box = Box(
        int(np.clip(np.floor(x0), 0, w - 1)),
        int(np.clip(np.floor(y0), 0, h - 1)),
        int(np.clip(np.ceil(x1), 1, w)),
        int(np.clip(np.ceil(y1), 1, h)),
        label=label,
        score=score,
    )
    return box if box.width > 1 and box.height > 1 else None


def decode(
    output: np.ndarray,
    classes: Sequence[int],
    threshold: float,
    overlap: float,
    scale: float,
    offset: tuple[int, int],
    shape: tuple[int, ...],
    label: str,
) -> list[Box]:
    """Boxes (best first) from a raw output (1, 4 + classes, anchors) for the wanted
    class ids, in photo pixels."""
    rows = output[0].T  # anchors x (cx, cy, w, h, scores...)
    scores = rows[:, 4:][:, list(classes)].max(axis=1)
    keep = scores >= threshold
    if not keep.any():
        return []
    rows, scores = rows[keep], scores[keep]
    left, top = offset
    x0 = (rows[:, 0] - rows[:, 2] / 2 - left) / scale
    y0 = (rows[:, 1] - rows[:, 3] / 2 - top) / scale
    bw, bh = rows[:, 2] / scale, rows[:, 3] / scale
    rects = [
        [float(a), float(b), float(c), float(d)] for a, b, c, d in zip(x0, y0, bw, bh, strict=True)
    ]
    chosen = cv2.dnn.NMSBoxes(rects, scores.astype(float).tolist(), threshold, overlap)
    found = []
    for i in sorted(np.asarray(chosen).reshape(-1).tolist(), key=lambda i: -scores[i]):
        x, y, bw_i, bh_i = rects[i]
        box = pixel_box(x, y, x + bw_i, y + bh_i, shape, label, float(scores[i]))
        if box is not None:
            found.append(box)
    return found


def class_names(session: Any) -> list[str]:
    """The export's class names (ultralytics writes them into the metadata), else COCO's."""
    written = session.get_modelmeta().custom_metadata_map.get("names")
    if written:
        names = ast.literal_eval(written)  # a dict literal {0: 'person', ...}; no code runs
        return [str(names[i]) for i in sorted(names)]
    return list(COCO_CLASSES)


def wanted_class(target: str | None, names: Sequence[str]) -> tuple[str, list[int]]:
    """The class the target names and its ids in `names`; a clear error when YOLO does
    not know it."""
    if not target:
        raise ToolFailed("Say what to look for, e.g. 'detect the dog'.")
    name = coco_class(target) or target.lower().strip()
    ids = [i for i, n in enumerate(names) if n == name]
    if not ids:
        raise ToolFailed(
            f"YOLO knows {len(names)} everyday object classes and '{target}' is not one of "
            "them; Grounding DINO finds any named object."
        )
    return name, ids


class YoloOnnxDetect(OnnxModelTool):
    """Boxes for a COCO class from a YOLO ONNX export (ONNX Runtime)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        session = self.session(params)
        name, ids = wanted_class(ctx.target, class_names(session))
        port = session.get_inputs()[0]
        side = port.shape[-1] if isinstance(port.shape[-1], int) else int(params["resolution"])
        image = rgb(inputs[ArtifactKind.IMAGE])
        square, scale, offset = letterbox(image, side)
        feed = square.transpose(2, 0, 1)[None].astype(np.float32) / 255.0
        output = np.asarray(session.run(None, {port.name: feed})[0], dtype=np.float32)
        if output.ndim != 3 or output.shape[1] != 4 + len(class_names(session)):
            raise ToolFailed(
                f"The YOLO model's output {output.shape} is not (1, 4 + classes, anchors); "
                "download the catalogued export again (layerpath models verify)."
            )
        boxes = decode(
            output,
            ids,
            float(params["threshold"]),
            float(params["overlap"]),
            scale,
            offset,
            image.shape,
            name,
        )
        if not boxes:
            raise ToolFailed(f"No {ctx.target} was found in the photo.")
        return ToolResult({ArtifactKind.BOXES: tuple(boxes[: int(params["max_boxes"])])})


class UltralyticsDetect(Tool):
    """Boxes for a COCO class from ultralytics YOLO (PyTorch; needs torchvision)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        path, device = str(self.model_file()), tool_device(params)

        def load() -> Any:
            from ultralytics import YOLO

            return YOLO(str(self.checked_model_file()), task="detect")  # a pickle: re-hashed

        model = RESIDENT.get((self.name, path, device), load)
        names = [str(model.names[i]) for i in sorted(model.names)]
        name, ids = wanted_class(ctx.target, names)
        image = rgb(inputs[ArtifactKind.IMAGE])
        (result,) = model.predict(
            np.ascontiguousarray(image[..., ::-1]),  # ultralytics takes BGR arrays
            imgsz=int(params["resolution"]),
            conf=float(params["threshold"]),
            iou=float(params["overlap"]),
            classes=ids,
            device=device,
            half=device == "cuda",
            verbose=False,
        )
        found = []
        xyxy = result.boxes.xyxy.float().cpu().numpy()
        for (x0, y0, x1, y1), score in zip(
            xyxy, result.boxes.conf.float().cpu().numpy(), strict=True
        ):
            box = pixel_box(x0, y0, x1, y1, image.shape, name, float(score))
            if box is not None:
                found.append(box)
        found.sort(key=lambda b: -b.score)
        if not found:
            raise ToolFailed(f"No {ctx.target} was found in the photo.")
        return ToolResult({ArtifactKind.BOXES: tuple(found[: int(params["max_boxes"])])})
