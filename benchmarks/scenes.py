"""Synthetic scenes built in code: a textured wall, a floor, a red ball and a sign with
text, with the named masks a photographer would have drawn."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from layerpath.engine.types import Snapshot
from layerpath.kit.fonts import load_font


@dataclass
class Scene:
    image: np.ndarray  # RGBA
    masks: dict[str, np.ndarray]
    sign_text: str

    def snapshot(self) -> Snapshot:
        return Snapshot(self.image.copy(), dict(self.masks))

    def save(self, folder: Path) -> tuple[Path, dict[str, Path]]:
        folder.mkdir(parents=True, exist_ok=True)
        image_path = folder / "scene.png"
        Image.fromarray(self.image).save(image_path)
        mask_paths = {}
        for name, mask in self.masks.items():
            mask_paths[name] = folder / f"{name}.png"
            Image.fromarray(mask.astype(np.uint8) * 255).save(mask_paths[name])
        return image_path, mask_paths


def make_scene(
    seed: int = 0, width: int = 320, height: int = 240, sign_text: str = "CLOSED"
) -> Scene:
    """A beige textured wall, a grey floor, a red ball, and a white sign with dark text."""
    rng = np.random.default_rng(seed)
    image = np.zeros((height, width, 3), dtype=np.float32)
    floor_y = int(height * 0.72)
    image[:floor_y] = (214, 200, 170)
    image[floor_y:] = (120, 120, 125)
    image += rng.normal(0, 3.0, image.shape)
    yy, xx = np.mgrid[:height, :width]
    ball = (xx - 90) ** 2 + (yy - 150) ** 2 < 28**2
    shade = 1.0 - 0.35 * np.clip(((xx - 80) ** 2 + (yy - 140) ** 2) / 28.0**2, 0, 1)
    image[ball] = np.array([200, 40, 35], dtype=np.float32) * shade[ball, None]
    picture = Image.fromarray(np.clip(image, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(picture)
    sign = (170, 24, 300, 84)
    draw.rectangle(sign, fill=(250, 250, 246))
    draw.text(
        ((sign[0] + sign[2]) / 2, (sign[1] + sign[3]) / 2),
        sign_text,
        fill=(25, 25, 30),
        font=load_font(26),
        anchor="mm",
    )
    rgba = np.dstack([np.asarray(picture), np.full((height, width), 255, np.uint8)])
    sign_mask = np.zeros((height, width), dtype=bool)
    sign_mask[sign[1] : sign[3] + 1, sign[0] : sign[2] + 1] = True
    wall = (yy < floor_y) & ~ball & ~sign_mask
    return Scene(rgba, {"ball": ball, "wall": wall, "sign": sign_mask}, sign_text)
