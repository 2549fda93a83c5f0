"""Three overlapping steps and, for each, what the other two make alone: the case
issue 29 measures hiding a step on (tests/engine/test_kra.py, tests/plugin/test_krita.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

THREE_STEPS = "lift the shadows, make it warmer and add a vignette"
#: each step (the first word of its layer's name) and the words of the other two
OTHERS = {
    "Shadows": "make it warmer and add a vignette",
    "Temperature": "lift the shadows and add a vignette",
    "Vignette": "lift the shadows and make it warmer",
}


def others_alone(source: Path, folder: Path) -> dict[str, np.ndarray]:
    """For each step, what the other two make alone on `source` (`layerpath edit` to a
    flat PNG in `folder`), as RGBA."""
    from layerpath.plugin.cli import main

    alone = {}
    for step, words in OTHERS.items():
        flat = folder / f"{step}.png"
        assert main(["edit", str(source), words, "-o", str(flat), "--no-traces"]) == 0
        alone[step] = np.asarray(Image.open(flat).convert("RGBA"))
    return alone
