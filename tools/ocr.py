"""Text detection + recognition with RapidOCR (PP-OCR models shipped in the package)."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from layerpath.tools.base import Tool
from layerpath.tools.fonts import match_font
from layerpath.tools.imaging import mask_box, rgb
from layerpath.tools.types import ArtifactKind, Box, TextBox, ToolContext, ToolResult

log = logging.getLogger(__name__)
_lock = threading.Lock()
FONT_LINES = 8  # the lines whose font is recognised, largest first


@lru_cache(maxsize=1)
def _engine() -> Any:
    from rapidocr import RapidOCR

    engine = RapidOCR()
    # rapidocr prints through its own handler; route it into ours, and quietly: an
    # image without text is a normal answer here, not a warning.
    quiet = logging.getLogger("RapidOCR")
    quiet.handlers.clear()
    quiet.propagate = True
    quiet.setLevel(logging.ERROR)
    return engine


def estimate_style(
    image_rgb: np.ndarray, box: Box
) -> tuple[Box | None, tuple[int, ...], tuple[int, ...]]:
    """Ink bounds, ink colour and background colour of one text box.

    The background is the median of the box border; ink is what differs from it.
    """
    crop = image_rgb[box.y0 : box.y1, box.x0 : box.x1].astype(np.int16)
    border = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
    background = np.median(border, axis=0)
    distance = np.abs(crop - background).sum(axis=2)
    ink = distance > max(60, np.percentile(distance, 50))
    inner = mask_box(ink)
    if inner is None:
        return None, tuple(int(v) for v in background), tuple(int(v) for v in background)
    color = np.median(crop[ink], axis=0)
    ink_box = Box(box.x0 + inner.x0, box.y0 + inner.y0, box.x0 + inner.x1, box.y0 + inner.y1)
    return ink_box, tuple(int(v) for v in color), tuple(int(v) for v in background)


def read_text(image: np.ndarray, min_score: float = 0.5) -> tuple[TextBox, ...]:
    """Every line of text RapidOCR reads in the image, with its box and style."""
    pixels = np.ascontiguousarray(rgb(image))
    with _lock:  # one ONNX session, shared; keep calls serial
        result = _engine()(pixels)
    if result.boxes is None:
        return ()
    h, w = pixels.shape[:2]
    found = []
    for quad, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
        letters = sum(c.isalnum() for c in str(text))
        if float(score) < min_score or not letters or (letters == 1 and float(score) < 0.8):
            continue  # no letter at all, or one unsure glyph: a ball read as 'O'

        xs, ys = np.asarray(quad)[:, 0], np.asarray(quad)[:, 1]
        box = Box(
            max(0, int(xs.min())),
            max(0, int(ys.min())),
            min(w, int(np.ceil(xs.max()))),
            min(h, int(np.ceil(ys.max()))),
            label="text",
        )
        if box.width < 2 or box.height < 2:
            continue
        ink, color, background = estimate_style(pixels, box)
        found.append(TextBox(box, str(text), float(score), ink, color[:3], background[:3]))
    return tuple(found)


_READ: OrderedDict[tuple[str, tuple[int, ...], float], tuple[TextBox, ...]] = OrderedDict()


def read_text_again(image: np.ndarray, min_score: float = 0.5) -> tuple[TextBox, ...]:
    """read_text, remembered for the last 64 pictures by their content: for the quality
    checks and scorers that read the same picture more than once. (The rapidocr tool
    itself always reads, so its measured time is the reading's.)"""
    pixels = np.ascontiguousarray(image)
    key = (hashlib.sha1(pixels.view(np.uint8).data).hexdigest(), pixels.shape, min_score)
    with _lock:
        if key in _READ:
            _READ.move_to_end(key)
            return _READ[key]
    found = read_text(pixels, min_score)
    with _lock:
        _READ[key] = found
        while len(_READ) > 64:
            _READ.popitem(last=False)
    return found


def with_fonts(
    image: np.ndarray, boxes: tuple[TextBox, ...], min_likeness: float
) -> tuple[TextBox, ...]:
    """The boxes with the font each looks set in (font style recognition), where one of
    the installed fonts is alike enough."""
    pixels = np.ascontiguousarray(rgb(image))
    largest = sorted(boxes, key=lambda tb: -tb.box.width * tb.box.height)[:FONT_LINES]
    out = []
    for tb in boxes:
        if tb not in largest:  # a page of small print: only its largest lines
            out.append(tb)
            continue
        path, likeness = match_font(pixels, tb.text, tb.ink, tb.background, tb.color)
        out.append(replace(tb, font=path) if path and likeness >= min_likeness else tb)
    return tuple(out)


class RapidOcrText(Tool):
    """Finds and reads text lines (PP-OCR det + rec via ONNX Runtime, CPU), and tells the
    font each line looks set in, for a replacement to match."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        boxes = read_text(inputs[ArtifactKind.IMAGE], float(params["min_score"]))
        if float(params.get("font_likeness", 0)) > 0:
            boxes = with_fonts(inputs[ArtifactKind.IMAGE], boxes, float(params["font_likeness"]))
        text = "\n".join(b.text for b in boxes)
        return ToolResult({ArtifactKind.TEXT_BOXES: boxes, ArtifactKind.TEXT: text})
