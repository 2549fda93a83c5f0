"""Text edits on detected text boxes: erase, write, add, redact, highlight."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw

from layerpath.errors import BadInput, TargetNotFound, ToolFailed
from layerpath.kit.fonts import fit_font
from layerpath.kit.imaging import boxes_mask, dilate, drop_rules, rgb
from layerpath.kit.names import block_selected, select_text_boxes, text_blocks
from layerpath.kit.regions import crop, grow_box, paste, union_box
from layerpath.kit.types import (
    ArtifactKind,
    Box,
    SubtaskKind,
    TextBox,
    ToolContext,
    ToolResult,
)
from layerpath.tools.base import Tool
from layerpath.tools.inpaint import inpaint_region

log = logging.getLogger(__name__)


def _chosen(ctx: ToolContext, inputs: Mapping[ArtifactKind, Any]) -> list[TextBox]:
    replacing = ctx.subtask == SubtaskKind.TEXT_REPLACEMENT
    chosen = select_text_boxes(
        inputs[ArtifactKind.TEXT_BOXES], ctx.subtask_params, replacing, ctx.selection
    )
    if not chosen:
        wanted = ctx.subtask_params.get("match") or ctx.subtask_params.get("pattern") or "text"
        raise ToolFailed(f"No text matching '{wanted}' was found in the image.")
    blocks = text_blocks(chosen)
    count = len(blocks)
    if replacing and count > 1:  # (one word over both would cover what lies between them)
        selection = ctx.selection
        if selection is not None and all(block_selected(b, selection) for b in blocks):
            raise TargetNotFound(
                f"The selection holds {count} separate pieces of text: select the one to "
                "replace (a rough box around it is enough) and run it again."
            )
        if ctx.subtask_params.get("match") or ctx.subtask_params.get("pattern"):
            raise TargetNotFound(
                f"The text to replace was found in {count} separate places: select the one "
                "to replace (a rough box around it is enough) and run it again."
            )
        raise TargetNotFound(
            f"{count} separate pieces of text were found, none far the largest: say which "
            "to replace by its words ('replace OPEN with CLOSED'), or select it (a rough "
            "box around it is enough)."
        )
    return chosen


def _chosen_window(
    ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], grow: int
) -> tuple[list[TextBox], Box, np.ndarray]:
    """The boxes a text edit is about, the window it may change (the boxes grown by
    `grow`), and a copy of the picture's colours there to paint on."""
    image = inputs[ArtifactKind.IMAGE]
    chosen = _chosen(ctx, inputs)
    window = text_window(chosen, grow, image.shape)
    return chosen, window, rgb(crop(image, window)).copy()


def text_window(boxes: Sequence[TextBox], grow: int, shape: tuple[int, ...]) -> Box:
    """The boxes' bounds grown by `grow` pixels: all a text edit of them may change."""
    window = union_box(
        _grown(area, grow, shape) for tb in boxes for area in (tb.box, _glyph_area(tb, shape))
    )
    assert window is not None
    return window


#: the least the glyphs are grown by, as a share of the tallest letters' height: a camera
#: file's letters carry a rim of anti-aliasing and sharpening halo as many pixels wide as
#: they are large, which a few pixels leave as a ghost outline of the old word
RIM = 0.04


def rim(boxes: Sequence[TextBox], grow: int) -> int:
    """How far (pixels) the glyphs of the boxes are grown: `grow`, or RIM of their
    tallest letters' height where that is more."""
    tallest = max(((tb.ink or tb.box).height for tb in boxes), default=0)
    return max(grow, round(RIM * tallest))


def ink_mask(image: np.ndarray, boxes: Sequence[TextBox], grow: int) -> tuple[np.ndarray, Box]:
    """The glyph pixels inside the boxes, grown by `grow` pixels, as a mask of the
    window it returns with it (text_window)."""
    window = text_window(boxes, grow, image.shape)
    mask = np.zeros((window.height, window.width), dtype=bool)
    areas = [_glyph_area(tb, image.shape) for tb in boxes]
    for tb, b in zip(boxes, areas, strict=True):
        pixels = rgb(crop(image, b)).astype(np.int16)
        from_background = np.abs(pixels - np.array(tb.background, dtype=np.int16)).sum(axis=2)
        from_ink = np.abs(pixels - np.array(tb.color, dtype=np.int16)).sum(axis=2)
        # Glyphs are nearer the ink colour than the background; a loose OCR box that
        # spills past a sign's edge must not turn the wall behind it into "ink".
        inside = (
            slice(b.y0 - window.y0, b.y1 - window.y0),
            slice(b.x0 - window.x0, b.x1 - window.x0),
        )
        mask[inside] |= drop_rules((from_background > 60) & (from_ink < from_background))
    grown = [_grown(b, grow, image.shape) for b in areas]
    local = [
        Box(g.x0 - window.x0, g.y0 - window.y0, g.x1 - window.x0, g.y1 - window.y0) for g in grown
    ]
    return dilate(mask, grow) & boxes_mask(mask.shape, local), window


def _glyph_area(tb: TextBox, shape: tuple[int, ...]) -> Box:
    """Where a line's letters are: its ink bounds and a little around them (OCR's own box
    may take in a sign's frame, which is not to be erased)."""
    if tb.ink is None:
        return tb.box
    return _grown(tb.ink, max(2, tb.ink.height // 8), shape)


def _grown(box: Box, pixels: int, shape: tuple[int, ...]) -> Box:
    return Box(
        max(0, box.x0 - pixels),
        max(0, box.y0 - pixels),
        min(shape[1], box.x1 + pixels),
        min(shape[0], box.y1 + pixels),
    )


def draw_text(
    image: np.ndarray,
    text: str,
    area: Box,
    color: tuple[int, int, int],
    max_width: int,
    font_path: str | None = None,
    align: str = "center",
) -> tuple[np.ndarray, Box]:
    """Draw text on `area` (centred, or against its left or right edge: `align`), sized
    to its height (wider text is shrunk), in the font file `font_path` (default: a bold
    sans); the result and the window drawn in."""
    font = fit_font(text, area.height, max_width, font_path)
    x0, y0, x1, y1 = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), text, font=font)
    cx, cy = (area.x0 + area.x1) / 2, (area.y0 + area.y1) / 2
    left, top = cx - (x0 + x1) / 2, cy - (y0 + y1) / 2
    if align == "left":
        left = area.x0 - x0
    elif align == "right":
        left = area.x1 - x1
    inked = Box(int(left + x0) - 2, int(top + y0) - 2, int(left + x1) + 3, int(top + y1) + 3)
    window = grow_box(inked, 0, image.shape)  # clipped to the picture
    if window.width <= 0 or window.height <= 0:
        raise ToolFailed("The text would fall outside the picture.")
    canvas = Image.fromarray(np.ascontiguousarray(rgb(crop(image, window))))
    ImageDraw.Draw(canvas).text((left - window.x0, top - window.y0), text, fill=color, font=font)
    return paste(image, window, np.asarray(canvas)), window


class TextInpaintErase(Tool):
    """Erase text by inpainting its glyph pixels (keeps textured backgrounds)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        chosen = _chosen(ctx, inputs)
        glyphs, window = ink_mask(image, chosen, rim(chosen, int(params["grow"])))
        mask = np.zeros(image.shape[:2], dtype=bool)
        crop(mask, window)[...] = glyphs
        out, changed = inpaint_region(image, mask, "telea", float(params["radius"]), 0)
        return ToolResult({ArtifactKind.IMAGE: out}, window=changed)


class TextFillErase(Tool):
    """Erase text by painting its glyphs with the box's background colour (flat
    backgrounds); only glyph pixels change, never the box's surroundings."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        chosen = _chosen(ctx, inputs)
        grow = rim(chosen, int(params["grow"]))
        window = text_window(chosen, grow, image.shape)
        out = rgb(crop(image, window)).copy()
        for tb in chosen:
            glyphs, at = ink_mask(image, [tb], grow)
            local = (
                slice(at.y0 - window.y0, at.y1 - window.y0),
                slice(at.x0 - window.x0, at.x1 - window.x0),
            )
            out[local][glyphs] = tb.background
        return ToolResult({ArtifactKind.IMAGE: paste(image, window, out)}, window=window)


def panel_span(
    image_rgb: np.ndarray, area: Box, background: tuple[int, int, int]
) -> tuple[int, int]:
    """How far left and right of `area` the plain background behind the text (a sign's
    panel) goes on the text's rows: columns where nearly every pixel is that colour."""
    band = image_rgb[area.y0 : area.y1].astype(np.int16)
    plain = (np.abs(band - np.array(background, np.int16)).sum(axis=2) < 60).mean(axis=0) > 0.8
    left, right = area.x0, area.x1
    while left > 0 and plain[left - 1]:
        left -= 1
    while right < len(plain) and plain[right]:
        right += 1
    return left, right


class PillowTextWrite(Tool):
    """Write the new text where the old text was, matching its size, colour and (when
    OCR recognised it) its font."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        if not ctx.to:
            raise BadInput("Say what the new text is, e.g. replace the sign text with 'OPEN'.")
        image = inputs[ArtifactKind.IMAGE]
        chosen = _chosen(ctx, inputs)
        ink = [tb.ink or tb.box for tb in chosen]
        area = Box(
            min(b.x0 for b in ink),
            min(b.y0 for b in ink),
            max(b.x1 for b in ink),
            max(b.y1 for b in ink),
        )
        height = max(6, int(round(area.height * float(params["scale"]))))
        area = Box(
            area.x0, (area.y0 + area.y1 - height) // 2, area.x1, (area.y0 + area.y1 + height) // 2
        )
        max_width = int(min(image.shape[1] * 0.95, max(area.width * 1.6, area.height * 2)))
        # a longer text stays on the sign: no wider than the plain panel around the old
        # text reaches on both sides of its centre
        left, right = panel_span(rgb(image), area, chosen[0].background)
        centre = (area.x0 + area.x1) / 2
        room = int(2 * min(centre - left, right - centre)) - 2 * max(2, area.height // 6)
        max_width = max(area.width, min(max_width, room))
        font = chosen[0].font if params.get("match_font", True) else None
        out, window = draw_text(image, ctx.to, area, chosen[0].color, max_width, font)
        return ToolResult({ArtifactKind.IMAGE: out}, window=window)


class PillowTextAdd(Tool):
    """Add new text at the top, bottom or centre, or in a corner ('bottom right'), in
    a colour that contrasts."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        if not ctx.to:
            raise BadInput("Say what text to add, e.g. add the text 'SALE' at the top.")
        image = inputs[ArtifactKind.IMAGE]
        h, w = image.shape[:2]
        height = max(8, int(h * float(params["size"])))
        words = str(ctx.subtask_params.get("position", "bottom")).split()
        cy = int(h * 0.1) if "top" in words else (h // 2 if words == ["center"] else int(h * 0.88))
        if "left" in words:  # a corner: the text in that half, set against its edge
            x0, x1 = int(w * 0.04), int(w * 0.5)
        elif "right" in words:
            x0, x1 = int(w * 0.5), int(w * 0.96)
        else:
            x0, x1 = int(w * 0.05), int(w * 0.95)
        area = Box(x0, cy - height // 2, x1, cy + height // 2)
        align = "left" if "left" in words else ("right" if "right" in words else "center")
        if ctx.subtask_params.get("color"):
            color = ctx.colour(str(ctx.subtask_params["color"]))
        else:
            luminance = rgb(image)[max(0, area.y0) : area.y1, area.x0 : area.x1].mean()
            color = (0, 0, 0) if luminance > 128 else (255, 255, 255)
        out, window = draw_text(image, ctx.to, area, color, area.width, align=align)
        return ToolResult({ArtifactKind.IMAGE: out}, window=window)


class BoxRedact(Tool):
    """Redact text boxes: solid fill (default) or pixelation."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        chosen, window, out = _chosen_window(ctx, inputs, int(params["grow"]))
        for tb in chosen:
            g = _grown(tb.box, int(params["grow"]), image.shape)
            b = Box(g.x0 - window.x0, g.y0 - window.y0, g.x1 - window.x0, g.y1 - window.y0)
            if params["style"] == "pixelate":
                region = out[b.y0 : b.y1, b.x0 : b.x1]
                small = cv2.resize(
                    region,
                    (max(1, b.width // 12), max(1, b.height // 12)),
                    interpolation=cv2.INTER_AREA,
                )
                out[b.y0 : b.y1, b.x0 : b.x1] = cv2.resize(
                    small, (b.width, b.height), interpolation=cv2.INTER_NEAREST
                )
            else:
                out[b.y0 : b.y1, b.x0 : b.x1] = 0
        return ToolResult({ArtifactKind.IMAGE: paste(image, window, out)}, window=window)


def keyword_box(tb: TextBox, keyword: str) -> Box:
    """The part of a text line that holds the keyword (by character position)."""
    start = tb.text.lower().find(keyword.lower())
    if start < 0 or not tb.text:
        return tb.box
    x0 = tb.box.x0 + tb.box.width * start / len(tb.text)
    x1 = tb.box.x0 + tb.box.width * (start + len(keyword)) / len(tb.text)
    return Box(int(x0), tb.box.y0, int(np.ceil(x1)), tb.box.y1)


class KeywordHighlight(Tool):
    """Highlight a keyword like a marker pen (multiply blend keeps the ink readable)."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        keyword = str(ctx.subtask_params.get("match") or ctx.target or "")
        if not keyword:
            raise BadInput("Say which word to highlight, e.g. highlight the word 'price'.")
        image = inputs[ArtifactKind.IMAGE]
        chosen = _chosen(ctx, inputs)
        marked = [keyword_box(tb, keyword) for tb in chosen]
        window = union_box(marked)
        assert window is not None
        out = rgb(crop(image, window)).astype(np.float32)
        marker = np.array(params["color"], dtype=np.float32) / 255.0
        for g in marked:
            out[g.y0 - window.y0 : g.y1 - window.y0, g.x0 - window.x0 : g.x1 - window.x0] *= marker
        highlighted = np.clip(out, 0, 255).astype(np.uint8)
        return ToolResult({ArtifactKind.IMAGE: paste(image, window, highlighted)}, window=window)
