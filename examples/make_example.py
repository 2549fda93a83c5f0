"""Rebuild the example scene from scikit-image's coffee.png (CC0, Rachel Michetti,
courtesy of Pikolo Espresso Bar): a paper sign reading CLOSED, and the masks 'spoon',
'saucer' and 'sign' (layerpath.benchmarks.demo draws them). Outputs are committed.

    python examples/make_example.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from layerpath.benchmarks.demo import demo_scene

HERE = Path(__file__).parent


def main() -> None:
    scene = demo_scene()
    Image.fromarray(scene.image[..., :3]).save(HERE / "coffee.png")
    for name, mask in scene.masks.items():
        Image.fromarray(mask.astype(np.uint8) * 255).save(HERE / f"{name}.png")


if __name__ == "__main__":
    main()
