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

import cv2
import numpy as np

from layerpath.kit.fonts import match_font
from layerpath.kit.imaging import drop_rules, mask_box, rgb
from layerpath.kit.regions import overlap
from layerpath.kit.types import ArtifactKind, Box, TextBox, ToolContext, ToolResult
from layerpath.tools.base import Tool

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


def _panel(plain: np.ndarray) -> Box | None:
    """The bounds of the plain panel the text sits on, when the box spills past it: the
    box's outer rows and columns with almost none of the background's colour (a wall
    beside the sign) are trimmed off, if what is left is mostly that colour."""
    h, w = plain.shape
    columns = np.flatnonzero(plain.mean(axis=0) >= 0.15)
    rows = np.flatnonzero(plain.mean(axis=1) >= 0.15)
    if columns.size < 0.5 * w or rows.size < 0.5 * h:
        return None
    panel = Box(int(columns[0]), int(rows[0]), int(columns[-1]) + 1, int(rows[-1]) + 1)
    if plain[panel.y0 : panel.y1, panel.x0 : panel.x1].mean() < 0.4:
        return None  # letters on a busy photo: no panel to keep them on
    return panel


def estimate_style(
    image_rgb: np.ndarray, box: Box
) -> tuple[Box | None, tuple[int, int, int], tuple[int, int, int]]:
    """Ink bounds, ink colour and background colour (RGB) of one text box.

    The background is the median of the box border; ink is what differs from it.
    """
    crop = image_rgb[box.y0 : box.y1, box.x0 : box.x1].astype(np.int16)
    border = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
    background = np.median(border, axis=0)
    distance = np.abs(crop - background).sum(axis=2)
    ink = drop_rules(distance > max(60, np.percentile(distance, 50)))  # letters, not a frame
    panel = _panel(distance < 40)
    if panel is not None:  # a box that spills past its sign: ink only on the sign
        outside = np.ones_like(ink)
        outside[panel.y0 : panel.y1, panel.x0 : panel.x1] = False
        ink &= ~outside
    inner = mask_box(ink)
    ground = (int(background[0]), int(background[1]), int(background[2]))
    if inner is None:
        return None, ground, ground
    color = np.median(crop[ink], axis=0)
    ink_box = Box(box.x0 + inner.x0, box.y0 + inner.y0, box.x0 + inner.x1, box.y0 + inner.y1)
    return ink_box, (int(color[0]), int(color[1]), int(color[2])), ground


#: a photo larger than this is also searched for text scaled down to it (big letters)
COARSE_SIDE = 1000
#: the side RapidOCR's detector scales a picture's short side up to
DETECT_SHORT = 736
#: a line found on a scaled-down photo is found again at this height, from the photo
LINE_HEIGHT = 40


def _lines(pixels: np.ndarray) -> list[tuple[np.ndarray, str, float]]:
    """RapidOCR's (quad, text, score) for every line it finds in the RGB pixels."""
    with _lock:  # one ONNX session, shared; keep calls serial
        result = _engine()(np.ascontiguousarray(pixels))
    if result.boxes is None:
        return []
    return [
        (np.asarray(quad, dtype=np.float32), str(text), float(score))
        for quad, text, score in zip(result.boxes, result.txts, result.scores, strict=True)
    ]


def _refined(pixels: np.ndarray, quad: np.ndarray) -> list[tuple[np.ndarray, str, float]]:
    """A line found on the scaled-down photo, found and read again at LINE_HEIGHT from
    the photo's own pixels around it: on a camera file the first pass sees text at a
    third of its size (its box comes out loose, the detector misses huge letters), here
    it sees it at the size it reads best, with enough of its surroundings around it."""
    h, w = pixels.shape[:2]
    xs, ys = quad[:, 0], quad[:, 1]
    height = max(2.0, float(ys.max() - ys.min()))
    scale = min(1.0, LINE_HEIGHT / height)
    side = DETECT_SHORT / scale  # photo pixels that become the detector's short side
    cx, cy = float(xs.mean()), float(ys.mean())
    half_w = max(side, float(xs.max() - xs.min()) + 2 * height) / 2
    x0, x1 = max(0, int(cx - half_w)), min(w, int(np.ceil(cx + half_w)))
    y0, y1 = max(0, int(cy - side / 2)), min(h, int(np.ceil(cy + side / 2)))
    window = pixels[y0:y1, x0:x1]
    size = (max(1, round(window.shape[1] * scale)), max(1, round(window.shape[0] * scale)))
    small = cv2.resize(window, size, interpolation=cv2.INTER_AREA) if scale < 1 else window
    found = []
    for inner, text, score in _lines(small):
        placed = inner / scale + np.array([x0, y0], np.float32)
        px, py = placed[:, 0].mean(), placed[:, 1].mean()
        if xs.min() <= px <= xs.max() and ys.min() <= py <= ys.max():  # the same line
            found.append((placed, text, score))
    return found


def _bounds(quad: np.ndarray) -> Box:
    xs, ys = quad[:, 0], quad[:, 1]
    return Box(int(xs.min()), int(ys.min()), int(np.ceil(xs.max())), int(np.ceil(ys.max())))


def _candidates(pixels: np.ndarray) -> list[tuple[np.ndarray, str, float]]:
    """Lines found on the photo as RapidOCR sees it (at most DETECT_SIDE) and, on a
    larger photo, also at COARSE_SIDE (its detector misses letters much taller than
    about a tenth of what it looks at), each confirmed and read again at LINE_HEIGHT
    from the photo's own pixels. A line the second look does not find stays only when
    the first was sure of it."""
    h, w = pixels.shape[:2]
    lines = _lines(pixels)
    if max(h, w) <= COARSE_SIDE:
        return lines
    scale = COARSE_SIDE / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(pixels, size, interpolation=cv2.INTER_AREA)
    lines += [(quad / scale, text, score) for quad, text, score in _lines(small)]
    distinct: list[tuple[np.ndarray, str, float]] = []
    for line in sorted(lines, key=lambda line: -line[2]):  # a line seen at both: read once
        if all(overlap(_bounds(line[0]), _bounds(kept[0])) <= 0.5 for kept in distinct):
            distinct.append(line)
    confirmed = []
    for quad, text, score in distinct:
        again = _refined(pixels, quad)
        confirmed += again or ([(quad, text, score)] if score >= 0.8 else [])
    return confirmed


def read_text(image: np.ndarray, min_score: float = 0.5) -> tuple[TextBox, ...]:
    """Every line of text RapidOCR reads in the image, with its box and style. On a
    photo larger than RapidOCR's own working size, lines are looked for at two scales
    and each is read again from the photo's pixels at its best size (tight boxes, the
    right words, huge letters found)."""
    pixels = np.ascontiguousarray(rgb(image))
    h, w = pixels.shape[:2]
    found: list[TextBox] = []
    for quad, text, score in sorted(_candidates(pixels), key=lambda line: -line[2]):
        letters = sum(c.isalnum() for c in text)
        if score < min_score or not letters or (letters == 1 and score < 0.8):
            continue  # no letter at all, or one unsure glyph: a ball read as 'O'
        xs, ys = quad[:, 0], quad[:, 1]
        box = Box(
            max(0, int(xs.min())),
            max(0, int(ys.min())),
            min(w, int(np.ceil(xs.max()))),
            min(h, int(np.ceil(ys.max()))),
            label="text",
        )
        if letters == 1 and box.height > 0.1 * min(h, w):
            continue  # one 'glyph' a tenth of the photo tall: a saucer read as '3
        if box.width < 2 or box.height < 2 or any(overlap(box, tb.box) > 0.5 for tb in found):
            continue  # the same line seen at both scales: the surer reading stays
        ink, color, background = estimate_style(pixels, box)
        found.append(TextBox(box, text, score, ink, color, background))
    return tuple(sorted(found, key=lambda tb: (tb.box.y0, tb.box.x0)))


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
