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

from layerpath.engine.files.io import GroupLayer, PixelLayer, composite, read_layered
from layerpath.kit.fonts import load_font

#: (label, x0, y0, x1, y1) in the 600x400 photo
CROPS = (
    ("the spoon", 300, 40, 470, 340),
    ("the saucer's far rim", 60, 60, 230, 200),
    ("the sign", 440, 14, 600, 90),
)


def before_after(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The photo, the run's result, and the result with the best attempts of failed
    subtasks (hidden layers) shown; None when nothing failed."""
    doc = read_layered(path)
    original = doc.layers[0]
    assert isinstance(original, PixelLayer)
    failed = [
        child
        for group in doc.layers
        if isinstance(group, GroupLayer)
        for child in group.children
        if child.name.endswith("(failed the check: best attempt)")
    ]
    for child in failed:
        child.visible = True
    attempted = composite(doc)[..., :3] if failed else None
    for child in failed:
        child.visible = False
    return original.pixels[..., :3], composite(doc)[..., :3], attempted


def main(path: Path, large: Path | None = None) -> None:
    before, after, attempted = before_after(path)
    tiles: list[tuple[str, Image.Image]] = []
    for label, x0, y0, x1, y1 in CROPS:
        scale = 300 / (y1 - y0) if label != "the sign" else 2.5
        size = (round((x1 - x0) * scale), round((y1 - y0) * scale))
        shown = [before, after]
        title = f"{label}: before / after"
        if attempted is not None and not np.array_equal(
            attempted[y0:y1, x0:x1], after[y0:y1, x0:x1]
        ):
            shown.append(attempted)
            title += " / the best attempt the checks turned down (a hidden layer)"
        tiles.append((title, _side_by_side([_crop(a, (x0, y0, x1, y1), size) for a in shown])))
    if large is not None:
        big_before, big_after, big_attempted = before_after(large)
        factor = big_before.shape[1] / before.shape[1]
        x0, y0 = int(340 * factor), int(200 * factor)
        side = 600
        shown = [big_before, big_after if big_attempted is None else big_attempted]
        what = "after" if big_attempted is None else "its best attempt, turned down"
        tiles.append(
            (
                f"24 MP, 100 %: the spoon's bowl before / {what}",
                _side_by_side([_crop(a, (x0, y0, x0 + side, y0 + side)) for a in shown]),
            )
        )
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


def _crop(
    picture: np.ndarray, box: tuple[int, int, int, int], size: tuple[int, int] | None = None
) -> Image.Image:
    x0, y0, x1, y1 = box
    tile = Image.fromarray(picture[y0:y1, x0:x1])
    return tile if size is None else tile.resize(size, Image.Resampling.LANCZOS)


def _side_by_side(tiles: list[Image.Image]) -> Image.Image:
    out = Image.new("RGB", (sum(t.width + 8 for t in tiles) - 8, tiles[0].height), (245, 245, 245))
    x = 0
    for tile in tiles:
        out.paste(tile, (x, 0))
        x += tile.width + 8
    return out


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
