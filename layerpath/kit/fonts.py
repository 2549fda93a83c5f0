"""Fonts: loading one sized to fit a box (the text tools write with it, the text check
measures what a word would look like in it), and font style recognition: which
installed typeface a line of text in the photo is set in, so a replacement is written
in the same style (serif or sans, bold or regular, mono).

The text OCR read is rendered in each candidate font at the height of the line's ink and
compared with the ink itself: the shapes' overlap once both are scaled to the same box,
and how wide the font sets the same words at that height. No model; the candidates are
the fonts installed on the machine (the common families first, at most `LIMIT`).
"""

from __future__ import annotations

import logging
import math
import os
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont, features

from layerpath.kit.types import Box

log = logging.getLogger(__name__)

FOLDERS = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "~/.fonts",
    "~/.local/share/fonts",
    "/Library/Fonts",
    "/System/Library/Fonts",
    "~/Library/Fonts",
    "C:/Windows/Fonts",
)
# families a sign is likely set in come first when a machine has hundreds of fonts
COMMON = ("dejavu", "liberation", "noto", "arial", "helvetica", "times", "courier", "roboto")
LIMIT = 48
MATCH_SIZE = 48  # pixels: the ink is compared at this height
SLANTED = 0.85  # what an oblique or italic font's likeness counts


def foreign_harfbuzz(maps: str | None = None) -> bool:
    """Whether this process has loaded a HarfBuzz other than the one Pillow bundles (a
    host such as Krita links the system's). Pillow's RAQM layout then binds to that one
    and, some runs and not others, lays text out at wild offsets: glyph boxes of
    hundreds of megapixels, or nothing drawn."""
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:  # not Linux: the layout probe below decides
            return False
    # Pillow's own copy is renamed (libharfbuzz-<hash>.so); a host's keeps the soname
    return any("/libharfbuzz.so" in line for line in maps.splitlines())


@lru_cache(maxsize=16)
def layout_engine(path: str) -> ImageFont.Layout:
    """Pillow's RAQM layout (shaping for complex scripts) where it works in this process,
    else BASIC (unaffected by a host's libraries)."""
    if not features.check("raqm"):
        return ImageFont.Layout.BASIC
    if foreign_harfbuzz():
        log.info("this host has its own HarfBuzz loaded: text laid out without RAQM")
        return ImageFont.Layout.BASIC
    probe = "Hamburg AVAWA"
    x0, _, x1, _ = ImageFont.truetype(path, 20, layout_engine=ImageFont.Layout.RAQM).getbbox(probe)
    b0, _, b1, _ = ImageFont.truetype(path, 20, layout_engine=ImageFont.Layout.BASIC).getbbox(probe)
    sane = abs(x0 - b0) <= 2 and abs((x1 - x0) - (b1 - b0)) <= 0.1 * (b1 - b0)
    if not sane:
        log.warning("Pillow's RAQM text layout is broken in this process; using BASIC layout")
    return ImageFont.Layout.RAQM if sane else ImageFont.Layout.BASIC


@lru_cache(maxsize=1)
def installed_fonts() -> tuple[str, ...]:
    """TrueType/OpenType files on this machine, common families first, at most LIMIT."""
    found: list[Path] = []
    for folder in FOLDERS:
        root = Path(os.path.expanduser(folder))
        if root.is_dir():
            found += [
                p
                for p in root.rglob("*")
                if p.suffix.lower() in (".ttf", ".otf")
                and not any(w in p.name.lower() for w in ("math", "symbol", "emoji", "icon"))
            ]

    def rank(path: Path) -> tuple[int, str]:
        name = path.name.lower()
        common = next((i for i, family in enumerate(COMMON) if family in name), len(COMMON))
        return common, name

    return tuple(str(p) for p in sorted(set(found), key=rank)[:LIMIT])


def ink_mask(
    pixels_rgb: np.ndarray,
    ink: Box,
    background: tuple[int, int, int],
    color: tuple[int, int, int],
) -> np.ndarray:
    """The glyph pixels inside the ink box: those nearer the ink colour than the
    background (half-covered edge pixels count half way, as a renderer draws them)."""
    crop = pixels_rgb[ink.y0 : ink.y1, ink.x0 : ink.x1].astype(np.int16)
    distance = np.abs(crop - np.array(background, np.int16)).sum(axis=2)
    full = max(60, int(np.abs(np.array(color, np.int16) - np.array(background, np.int16)).sum()))
    return np.asarray(distance > full / 2)


@lru_cache(maxsize=LIMIT)
def _font(path: str) -> ImageFont.FreeTypeFont | None:
    try:
        return ImageFont.truetype(path, MATCH_SIZE, layout_engine=layout_engine(path))
    except OSError:
        return None


def rendered(text: str, path: str) -> np.ndarray | None:
    """The text's ink in this font at MATCH_SIZE pixels tall (cropped to the ink)."""
    font = _font(path)
    if font is None:
        return None
    x0, y0, x1, y1 = (int(v) for v in font.getbbox(text))
    if x1 <= x0 or y1 <= y0:
        return None
    canvas = Image.new("L", (x1 - x0 + 2, y1 - y0 + 2))
    ImageDraw.Draw(canvas).text((1 - x0, 1 - y0), text, fill=255, font=font)
    glyphs = np.asarray(canvas) > 127
    ys, xs = np.nonzero(glyphs)
    if not len(xs):
        return None
    return glyphs[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def likeness(ink: np.ndarray, candidate: np.ndarray) -> float:
    """0..1: how alike the photo's glyphs and a font's are, in shape and in width."""
    h, w = ink.shape
    if h < 4 or w < 4:
        return 0.0
    coverage = cv2.resize(candidate.astype(np.float32), (w, h), interpolation=cv2.INTER_AREA)
    scaled = coverage > 0.5
    union = (scaled | ink).sum()
    overlap = float((scaled & ink).sum() / union) if union else 0.0
    # the same words set in this font at the ink's height would be this much wider
    width_ratio = (candidate.shape[1] / candidate.shape[0]) / (w / h)
    return overlap * math.exp(-2.0 * abs(math.log(width_ratio)))


def match_font(
    pixels_rgb: np.ndarray,
    text: str,
    ink: Box | None,
    background: tuple[int, int, int],
    color: tuple[int, int, int],
    candidates: tuple[str, ...] | None = None,
) -> tuple[str | None, float]:
    """The installed font most like the text's glyphs, and how alike (0..1); None when
    there is nothing to compare (no ink, no text, no fonts)."""
    words = text.strip()
    if ink is None or not words or ink.height < 6:
        return None, 0.0
    glyphs = ink_mask(pixels_rgb, ink, background, color)
    best: tuple[str | None, float] = (None, 0.0)
    for path in candidates if candidates is not None else installed_fonts():
        shape = rendered(words, path)
        if shape is None:
            continue
        score = likeness(glyphs, shape)
        if any(w in Path(path).stem.lower() for w in ("oblique", "italic")):
            score *= SLANTED  # signs are rarely slanted: a slanted font must win clearly
        if score > best[1]:
            best = (path, score)
    return best


_FONT_FILES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
)


@lru_cache(maxsize=64)
def load_font(size: int, path: str | None = None) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The font file `path` at the given pixel size; without one (or when it cannot be
    read) a bold sans: DejaVu when installed, else Pillow's own."""
    for candidate in ((path,) if path else ()) + _FONT_FILES:
        if Path(candidate).exists():
            try:
                return ImageFont.truetype(candidate, size, layout_engine=layout_engine(candidate))
            except OSError:
                continue
    return ImageFont.load_default(size=size)


def fit_font(
    text: str, height: int, max_width: int, path: str | None = None
) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The largest font whose ink is at most `height` tall and `max_width` wide (a font's
    size is more than its capitals' height: the search starts at twice the height)."""
    low, high = 6, max(7, 2 * height)
    while low < high:  # the largest size that fits (ink grows with the size)
        size = (low + high + 1) // 2
        x0, y0, x1, y1 = load_font(size, path).getbbox(text)
        if y1 - y0 <= height and x1 - x0 <= max_width:
            low = size
        else:
            high = size - 1
    return load_font(low, path)
