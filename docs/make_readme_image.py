"""Rebuild docs/example-result.png from the README's first command's output.

python docs/make_readme_image.py out/coffee.ora
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

from layerpath.engine.files.io import GroupLayer, PixelLayer, composite, read_layered
from layerpath.kit.fonts import load_font


def main(path: Path) -> None:
    doc = read_layered(path)
    original, group = doc.layers[0], doc.layers[-1]
    assert isinstance(original, PixelLayer) and isinstance(group, GroupLayer)
    w, h = doc.width, doc.height
    panel = Image.new("RGB", (w * 2 + 10 + 470, h), (245, 245, 245))
    panel.paste(Image.fromarray(original.pixels[..., :3]), (0, 0))
    panel.paste(Image.fromarray(composite(doc)[..., :3]), (w + 10, 0))
    draw = ImageDraw.Draw(panel)
    x, y = w * 2 + 22, 10
    title = group.name if len(group.name) <= 50 else group.name[:49] + "…"
    draw.text((x, y), f"Group: {title}", fill=(0, 0, 0), font=load_font(14))
    y += 26
    for child in reversed(group.children):
        shade = (20, 20, 20) if child.visible else (140, 140, 140)
        mark = "[x]" if child.visible else "[ ]"
        draw.text(
            (x, y),
            f"{mark} {child.name.replace(' — ', ' · ')}"[:62],
            fill=shade,
            font=load_font(13),
        )
        y += 21
    draw.text((x, y + 6), "[x] Original (untouched)", fill=(20, 20, 20), font=load_font(13))
    panel.save(Path(__file__).parent / "example-result.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
