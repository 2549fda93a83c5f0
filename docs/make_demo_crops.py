"""Rebuild docs/demo-crops.png: before and after crops of the README's demo, where a
photographer looks: the spoon, the saucer's far rim, the sign; and, from the same edit on
the demo at 24 megapixels, the spoon's place at 100 %.

python docs/make_demo_crops.py out/coffee.ora [out24/coffee.ora]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from layerpath.engine.io import PixelLayer, composite, read_layered
from layerpath.tools.text import load_font

#: (label, x0, y0, x1, y1) in the 600x400 photo
CROPS = (
    ("the spoon", 300, 40, 470, 340),
    ("the saucer's far rim", 60, 60, 230, 200),
    ("the sign", 440, 14, 600, 90),
)


def before_after(path: Path) -> tuple[np.ndarray, np.ndarray]:
    doc = read_layered(path)
    original = doc.layers[0]
    assert isinstance(original, PixelLayer)
    return original.pixels[..., :3], composite(doc)[..., :3]


def main(path: Path, large: Path | None = None) -> None:
    before, after = before_after(path)
    tiles: list[tuple[str, Image.Image]] = []
    for label, x0, y0, x1, y1 in CROPS:
        scale = 300 / (y1 - y0) if label != "the sign" else 2.5
        size = (round((x1 - x0) * scale), round((y1 - y0) * scale))
        pair = [
            Image.fromarray(a[y0:y1, x0:x1]).resize(size, Image.Resampling.LANCZOS)
            for a in (before, after)
        ]
        tiles.append((f"{label}: before / after", _side_by_side(pair)))
    if large is not None:
        big_before, big_after = before_after(large)
        factor = big_before.shape[1] / before.shape[1]
        x0, y0 = int(340 * factor), int(200 * factor)
        side = 600
        pair = [Image.fromarray(a[y0 : y0 + side, x0 : x0 + side]) for a in (big_before, big_after)]
        tiles.append(("24 MP, 100 %: the spoon's bowl before / after", _side_by_side(pair)))
    width = max(t.width for _, t in tiles) + 20
    height = sum(t.height + 34 for _, t in tiles) + 10
    sheet = Image.new("RGB", (width, height), (245, 245, 245))
    draw = ImageDraw.Draw(sheet)
    y = 10
    for label, tile in tiles:
        draw.text((10, y), label, fill=(0, 0, 0), font=load_font(16))
        sheet.paste(tile, (10, y + 24))
        y += tile.height + 34
    sheet.save(Path(__file__).parent / "demo-crops.png")


def _side_by_side(pair: list[Image.Image]) -> Image.Image:
    out = Image.new("RGB", (pair[0].width * 2 + 8, pair[0].height), (245, 245, 245))
    out.paste(pair[0], (0, 0))
    out.paste(pair[1], (pair[0].width + 8, 0))
    return out


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
