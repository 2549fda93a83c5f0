"""The README's demo scene at any size: scikit-image's coffee.png (CC0, photo by Rachel
Michetti, courtesy of Pikolo Espresso Bar) with a paper sign reading CLOSED, and the
masks a photographer would draw: 'spoon', 'saucer' and 'sign'.

The masks are drawn from the photo's geometry (the saucer's rim is an ellipse fitted to
points on it; the spoon a tapered handle and an oval bowl) at the final size, so their
outlines are as smooth at 24 MP as at 600x400. At `scale` > 1 the photo is enlarged and given a camera's fine
grain, so a 24-megapixel copy compresses and reads like a camera file; the sign and its
text are drawn at the final size, sharp, as a real sign would be photographed.
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image, ImageDraw

from layerpath.benchmarks.scenes import Scene
from layerpath.errors import BadInput
from layerpath.kit.fonts import load_font

#: points on the saucer's rim in the 600x400 photo (the far side is hidden by the cup)
SAUCER_RIM = [
    (165, 80), (125, 108), (95, 150), (80, 200), (83, 250), (100, 300), (140, 345),
    (200, 375), (280, 390), (350, 385), (410, 365), (450, 325), (475, 265), (478, 220),
    (460, 165), (430, 125), (400, 102),
]  # fmt: skip
#: the cup (its opening, its body down to the foot) and its handle
CUP_BODY = [(173, 120), (176, 200), (200, 245), (250, 283), (320, 287), (360, 258), (374, 235), (384, 205), (391, 180), (396, 150), (400, 120)]  # fmt: skip
#: the spoon's handle, tapering from its rounded end to the bowl's neck
SPOON_HANDLE = [
    (396, 66), (400, 115), (402, 140), (391, 190), (382, 215), (375, 242), (387, 242),
    (387, 220), (389, 205), (392, 190), (395, 175), (398, 160), (402, 150), (406, 140),
    (410, 130), (414, 120), (418, 110), (421, 100), (427, 70),
]  # fmt: skip
SIGN_BOX = (452, 22, 588, 78)
SIGN_TEXT = "CLOSED"


def coffee_photo() -> np.ndarray:
    """scikit-image's coffee.png, RGB (it ships inside the scikit-image package)."""
    try:
        from skimage import data
    except ImportError as exc:
        raise BadInput(
            "The demo scene is built from scikit-image's coffee photo: "
            "pip install 'layerpath[bench]'"
        ) from exc
    return np.asarray(data.coffee())


def _masks(h: int, w: int, scale: float = 1.0) -> dict[str, np.ndarray]:
    """The spoon, the saucer (its rim's ellipse less the cup, the handle and the spoon's
    own outline) and the sign, drawn at `scale` times the photo's 600x400 (h x w is that
    size): outlines drawn at the final size stay smooth, where a 600x400 mask enlarged
    would show its pixels as steps. The spoon's mask is a little generous (what a fill
    should cover); the saucer stops at the spoon's own outline, so with the spoon left in
    place no band of the saucer's old colour stays beside it."""

    def at(points: list[tuple[int, int]]) -> np.ndarray:
        return np.rint(np.array(points, np.float64) * scale).astype(np.int32)

    def ellipse(
        mask: np.ndarray, centre: tuple[float, float], axes: tuple[float, float], angle: float
    ) -> None:
        cv2.ellipse(
            mask,
            (round(centre[0] * scale), round(centre[1] * scale)),
            (max(1, round(axes[0] * scale)), max(1, round(axes[1] * scale))),
            angle, 0, 360, 1, -1,
        )  # fmt: skip

    outline = np.zeros((h, w), np.uint8)
    ellipse(outline, (411, 72), (14, 9), -15)
    cv2.fillPoly(outline, [at(SPOON_HANDLE)], 1)
    ellipse(outline, (364, 281), (39, 44), 26)  # fitted to its rim
    # where the handle meets the bowl the two shapes leave a notch: closed, not grown
    notch = max(3, round(9 * scale)) | 1
    outline = np.asarray(
        cv2.morphologyEx(
            outline, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (notch, notch))
        )
    )
    grow = max(3, round(5 * scale)) | 1  # a little generous: 2 px of the 600x400 photo
    spoon = np.asarray(
        cv2.dilate(outline, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (grow, grow)))
    )
    edge = max(3, round(3 * scale)) | 1  # the spoon's bright rim: 1 px of the 600x400 photo
    outline = np.asarray(
        cv2.dilate(outline, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (edge, edge)))
    )
    (cx, cy), (aw, ah), angle = cv2.fitEllipse(np.array(SAUCER_RIM, np.float32))
    saucer = np.zeros((h, w), np.uint8)
    ellipse(saucer, (cx, cy), (aw / 2, ah / 2), angle)
    cup = np.zeros((h, w), np.uint8)
    ellipse(cup, (289, 112), (117, 95), 0)
    cv2.fillPoly(cup, [at(CUP_BODY)], 1)
    ellipse(cup, (230, 270), (31, 40), 0)
    sign = np.zeros((h, w), np.uint8)
    x0, y0, x1, y1 = (round(v * scale) for v in SIGN_BOX)
    sign[y0 : y1 + 1, x0 : x1 + 1] = 1
    return {
        "spoon": spoon,
        "saucer": saucer * (1 - cup) * (1 - outline),
        "sign": sign,
    }


def demo_scene(scale: float = 1.0, grain: float = 2.0, seed: int = 0) -> Scene:
    """The coffee scene `scale` times the photo's 600x400, sign and masks at that size.
    `grain` (a standard deviation in 8-bit levels) is added only when enlarging."""
    photo = coffee_photo()
    h, w = photo.shape[:2]
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    masks = {name: mask > 0 for name, mask in _masks(size[1], size[0], scale).items()}
    if scale != 1.0:
        picture = cv2.resize(photo, size, interpolation=cv2.INTER_LANCZOS4)
        if grain > 0:
            noise = np.random.default_rng(seed).normal(0.0, grain, picture.shape[:2])
            picture = np.clip(picture + noise[..., None], 0, 255).astype(np.uint8)
    else:
        picture = photo.copy()
    canvas = Image.fromarray(picture)
    draw = ImageDraw.Draw(canvas)
    box = tuple(round(v * scale) for v in SIGN_BOX)
    draw.rectangle(box, fill=(242, 238, 228), outline=(90, 70, 50), width=max(2, round(2 * scale)))
    font = load_font(max(8, round(28 * scale)))
    centre = (520 * scale, 50 * scale)  # the words' middle, a little right of the panel's
    draw.text(centre, SIGN_TEXT, fill=(30, 30, 30), font=font, anchor="mm")
    image = np.dstack([np.asarray(canvas), np.full(picture.shape[:2], 255, np.uint8)])
    return Scene(image, masks, SIGN_TEXT)
