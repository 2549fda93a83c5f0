"""Text edits: does the new text read right, is the old one wholly gone, and is the sign
around it whole?

The words are read back by OCR around the edited lines (a margin of the text's height:
on a tight crop the detector misses short words). Then the pixels: ink of the old text
left outside the new words (half-erased letters), pixels changed away from the text
(a sign's frame partly erased), and new words reaching past the plain panel the old
words sat on (new text over the frame)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np

from layerpath.engine.judge.checks.removal import untouched_outside
from layerpath.engine.judge.checks.verdict import Verdict, verdict
from layerpath.kit.fonts import fit_font
from layerpath.kit.imaging import boxes_mask, dilate, mask_box, rgb
from layerpath.kit.names import text_matches
from layerpath.kit.regions import grow_box
from layerpath.kit.types import Box, TextBox
from layerpath.tools.registry import service


def similarity(a: str, b: str) -> float:
    norm = lambda s: "".join(s.upper().split())  # noqa: E731
    return difflib.SequenceMatcher(None, norm(a), norm(b)).ratio()


#: lines are read back at about this height (pixels): OCR reads it best, and a camera
#: file's sign is not read at three times the size it needs
READ_HEIGHT = 48


def read_around(image: np.ndarray, boxes: Sequence[TextBox]) -> list[TextBox]:
    """The lines OCR reads around the boxes (in the image's coordinates), the region
    scaled so the text is about READ_HEIGHT pixels tall."""
    pad = max(24, max(b.box.height for b in boxes)) if boxes else 24
    region = mask_box(boxes_mask(image.shape[:2], [b.box for b in boxes]), pad=pad)
    if region is None:
        return []
    crop = image[region.y0 : region.y1, region.x0 : region.x1]
    scale = min(1.0, READ_HEIGHT / max([1, *(b.box.height for b in boxes)]))
    if scale < 1.0:
        size = (max(8, round(crop.shape[1] * scale)), max(8, round(crop.shape[0] * scale)))
        crop = cv2.resize(np.ascontiguousarray(crop), size, interpolation=cv2.INTER_AREA)
    found: tuple[TextBox, ...] = service("read_text")(crop, 0.3)

    def move(b: Box) -> Box:
        return Box(
            region.x0 + int(b.x0 / scale),
            region.y0 + int(b.y0 / scale),
            region.x0 + int(np.ceil(b.x1 / scale)),
            region.y0 + int(np.ceil(b.y1 / scale)),
        )

    return [replace(tb, box=move(tb.box), ink=move(tb.ink) if tb.ink else None) for tb in found]


def _ink(image: np.ndarray, tb: TextBox) -> np.ndarray:
    """Inside the line's ink box (OCR's box may take in a sign's frame): pixels nearer
    its ink colour than its background."""
    b = tb.ink or tb.box
    pixels = rgb(image[b.y0 : b.y1, b.x0 : b.x1]).astype(np.int16)
    to_ink = np.abs(pixels - np.array(tb.color, np.int16)).sum(axis=2)
    to_ground = np.abs(pixels - np.array(tb.background, np.int16)).sum(axis=2)
    return (to_ground > 60) & (to_ink < to_ground)


def glyphs(shape: tuple[int, ...], written: Sequence[tuple[TextBox, str]]) -> np.ndarray:
    """Where the new words' letters are: each word drawn (a bold sans as tall as the ink
    OCR found, as wide as that makes it) centred on its line, grown by a quarter of its
    height, since the font the writer used may differ."""
    from PIL import Image, ImageDraw

    mask = np.zeros(shape[:2], bool)
    for tb, word in written:
        area = tb.ink or tb.box
        if area.width < 2 or area.height < 2:
            continue
        font = fit_font(word, area.height, 20 * area.width)  # its own width at that height
        x0, y0, x1, y1 = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), word, font=font)
        canvas = Image.new("L", (shape[1], shape[0]), 0)
        centre = ((area.x0 + area.x1) / 2, (area.y0 + area.y1) / 2)
        place = (centre[0] - (x0 + x1) / 2, centre[1] - (y0 + y1) / 2)
        ImageDraw.Draw(canvas).text(place, word, fill=255, font=font)
        mask |= dilate(np.asarray(canvas) > 0, max(2, area.height // 4))
    return mask


def leftover_ink(
    before: np.ndarray, after: np.ndarray, boxes: Sequence[TextBox], keep: np.ndarray
) -> float:
    """The share of the old text's ink still there after the edit, untouched, outside
    `keep` (where the new letters are)."""
    total = left = 0
    for tb in boxes:
        b = tb.ink or tb.box
        was, now = _ink(before, tb), _ink(after, tb)
        old, new = rgb(before[b.y0 : b.y1, b.x0 : b.x1]), rgb(after[b.y0 : b.y1, b.x0 : b.x1])
        same = np.abs(old.astype(np.int16) - new.astype(np.int16)).max(axis=2) <= 6
        total += int(was.sum())
        left += int((now & was & same & ~keep[b.y0 : b.y1, b.x0 : b.x1]).sum())
    return left / max(1, total)


def changed_away(before: np.ndarray, after: np.ndarray, zones: Sequence[Box], height: int) -> float:
    """Pixels changed outside the text's zones (its ink and the new words' boxes, grown by
    a sixth of the text's height), relative to the zones' area: a sign's frame or the
    wall around it."""
    h, w = after.shape[:2]
    zone = boxes_mask((h, w), [grow_box(b, max(3, height // 6), after.shape) for b in zones])
    changed = np.abs(rgb(before).astype(np.int16) - rgb(after).astype(np.int16)).max(axis=2) > 25
    return float((changed & ~zone).sum()) / max(1.0, float(zone.sum()))


def beyond_panel(before: np.ndarray, boxes: Sequence[TextBox], new: Sequence[Box]) -> float:
    """How much of the new words lies off the plain panel the old words sat on (the
    panel: the old lines' background colour, connected around them). Zero where there
    is no such panel (text straight on a photo)."""
    if not boxes or not new:
        return 0.0
    height = max(b.box.height for b in boxes)
    area = grow_box(
        Box(
            min(b.box.x0 for b in boxes),
            min(b.box.y0 for b in boxes),
            max(b.box.x1 for b in boxes),
            max(b.box.y1 for b in boxes),
        ),
        2 * height,
        before.shape,
    )
    pixels = rgb(before[area.y0 : area.y1, area.x0 : area.x1]).astype(np.int16)
    ground = np.array(boxes[0].background, np.int16)
    plain = (np.abs(pixels - ground).sum(axis=2) < 45).astype(np.uint8)
    # the panel: plain pixels joined to the old lines' boxes (letters closed over)
    closed = cv2.morphologyEx(plain, cv2.MORPH_CLOSE, np.ones((max(3, height // 3),) * 2, np.uint8))
    count, labels = cv2.connectedComponents(closed)
    inside = boxes_mask(before.shape[:2], [b.box for b in boxes])[
        area.y0 : area.y1, area.x0 : area.x1
    ]
    touching = np.unique(labels[inside & (closed > 0)])
    panel = np.isin(labels, touching[touching > 0])
    if panel[inside].mean() < 0.7:
        return 0.0  # no plain panel behind the old words
    panel = dilate(panel, 3)
    outside = total = 0
    for b in new:
        x0, y0 = max(b.x0, area.x0) - area.x0, max(b.y0, area.y0) - area.y0
        x1, y1 = min(b.x1, area.x1) - area.x0, min(b.y1, area.y1) - area.y0
        whole = max(1, b.width * b.height)
        inner = panel[max(0, y0) : max(0, y1), max(0, x0) : max(0, x1)]
        total += whole
        outside += whole - int(inner.sum())
    return outside / max(1, total)


def check_text_replacement(
    before: np.ndarray, after: np.ndarray, boxes: Sequence[TextBox], new: str
) -> Verdict:
    """The old lines in `boxes` replaced by `new`."""
    lines = read_around(after, boxes)
    if not lines:
        return Verdict(0.0, "no text could be read where the old text was")
    best = max(lines, key=lambda tb: similarity(tb.text, new))
    height = max((b.box.height for b in boxes), default=best.box.height)
    read = [(tb, new) for tb in lines if similarity(tb.text, new) >= 0.6]
    written = [tb.box for tb, _ in read]
    old_still = [
        b
        for b in boxes
        if similarity(b.text, new) < 0.8 and any(text_matches(line.text, b.text) for line in lines)
    ]
    defects = {
        "the new text does not read right": (1.0 - similarity(best.text, new)) / 0.1,
        "the old text can still be read": 3.0 if old_still else 0.0,
        "old letters left over": leftover_ink(before, after, boxes, glyphs(after.shape, read))
        / 0.1,
        "the sign around the text changed": changed_away(
            before, after, [*(b.ink or b.box for b in boxes), *written], height
        )
        / 0.006,
        "new text runs off the sign's panel": beyond_panel(before, boxes, written) / 0.04,
    }
    return verdict(defects)


def check_text_removal(before: np.ndarray, after: np.ndarray, boxes: Sequence[TextBox]) -> Verdict:
    """The lines in `boxes` erased, with nothing else changed."""
    lines = read_around(after, boxes)
    still = [b for b in boxes if any(text_matches(line.text, b.text) for line in lines)]
    height = max((b.box.height for b in boxes), default=1)
    defects = {
        "the text can still be read": 3.0 * len(still) / max(1, len(boxes)),
        "letters left over": leftover_ink(before, after, boxes, np.zeros(after.shape[:2], bool))
        / 0.08,
        "the sign around the text changed": changed_away(
            before, after, [b.ink or b.box for b in boxes], height
        )
        / 0.006,
    }
    return verdict(defects)


def check_text_gone(before: np.ndarray, after: np.ndarray, boxes: Sequence[TextBox]) -> float:
    """Redaction: the lines can no longer be read, and nothing far from them changed."""
    lines = read_around(after, boxes)
    still = [b for b in boxes if any(text_matches(line.text, b.text) for line in lines)]
    region = dilate(boxes_mask(after.shape[:2], [b.box for b in boxes]), 8)
    return (1.0 - len(still) / max(1, len(boxes))) * untouched_outside(before, after, region)


def check_text_added(after: np.ndarray, new: str) -> float:
    lines = [tb.text for tb in service("read_text")(after, 0.3)]
    return max((similarity(line, new) for line in lines), default=0.0)
