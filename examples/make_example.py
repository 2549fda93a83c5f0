"""Rebuild the example scene from scikit-image's coffee.png (CC0, Rachel Michetti,
courtesy of Pikolo Espresso Bar): adds a paper sign reading CLOSED and derives the
masks 'spoon', 'saucer' and 'sign' by colour thresholds. Run once; outputs are committed.

    python examples/make_example.py path/to/skimage/data/coffee.png
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).parent


def largest(mask: np.ndarray) -> np.ndarray:
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8))
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return labels == best


def main(source: Path) -> None:
    photo = np.array(Image.open(source).convert("RGB"))
    h, w = photo.shape[:2]
    hsv = cv2.cvtColor(photo, cv2.COLOR_RGB2HSV)
    yy, xx = np.mgrid[:h, :w]
    kernel = np.ones((7, 7), np.uint8)

    # Geometry drawn around each object, refined by colour (spoon: grey metal; saucer:
    # red glaze). Thresholds alone confuse the table's wood with the saucer's glaze.
    bowl = np.zeros((h, w), np.uint8)
    cv2.ellipse(bowl, (366, 284), (42, 45), 0, 0, 360, 1, -1)
    shaft = np.zeros((h, w), np.uint8)
    cv2.line(shaft, (372, 250), (412, 70), 1, 22)
    # The bowl mirrors the red saucer, so only the shaft is refined by colour.
    spoon = (bowl > 0) | ((shaft > 0) & (hsv[..., 1] < 110))
    spoon = cv2.morphologyEx(spoon.astype(np.uint8), cv2.MORPH_CLOSE, kernel) > 0
    spoon = cv2.dilate(spoon.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0

    saucer_zone = ((xx - 277) / 203.0) ** 2 + ((yy - 228) / 162.0) ** 2 < 1.0
    cup = ((xx - 290) / 120.0) ** 2 + ((yy - 145) / 130.0) ** 2 < 1.0
    handle = ((xx - 229) / 38.0) ** 2 + ((yy - 266) / 44.0) ** 2 < 1.0
    glaze = (hsv[..., 0] < 16) | (hsv[..., 0] > 168)
    saucer = saucer_zone & glaze & ~cup & ~handle & ~spoon
    saucer = largest(cv2.morphologyEx(saucer.astype(np.uint8), cv2.MORPH_CLOSE, kernel) > 0)

    picture = Image.fromarray(photo)
    draw = ImageDraw.Draw(picture)
    sign_box = (452, 22, 588, 78)
    draw.rectangle(sign_box, fill=(242, 238, 228), outline=(90, 70, 50), width=2)
    font = (
        ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", 28)
        if Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf").exists()
        else ImageFont.load_default(size=28)
    )
    draw.text((520, 50), "CLOSED", fill=(30, 30, 30), font=font, anchor="mm")
    sign = np.zeros((h, w), dtype=bool)
    sign[sign_box[1] : sign_box[3] + 1, sign_box[0] : sign_box[2] + 1] = True

    picture.save(HERE / "coffee.png")
    for name, mask in (("spoon", spoon), ("saucer", saucer), ("sign", sign)):
        Image.fromarray(mask.astype(np.uint8) * 255).save(HERE / f"{name}.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
