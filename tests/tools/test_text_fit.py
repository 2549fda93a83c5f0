"""Text edits found by the benchmark suite: OCR does not take a ball or a diamond for a
line of text, and a longer replacement is fitted to its sign instead of spilling over."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from layerpath.benchmarks.suite import make_suite_scene
from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import EditRequest, Snapshot
from layerpath.kit.fonts import load_font
from layerpath.tools.ocr import read_text
from layerpath.tools.registry import Registry


def test_round_objects_are_not_read_as_letters() -> None:
    """Scene 276 of the suite: PP-OCR reads its orange ball as '0' and its red diamond
    as a block glyph, unsure of both; only the sign's word is text."""
    scene = make_suite_scene(276)
    assert [t.text for t in read_text(scene.image)] == [scene.sign_text]


def test_a_longer_replacement_stays_on_its_sign() -> None:
    rng = np.random.default_rng(3)
    wall = rng.integers(60, 140, (200, 360, 3)).astype(np.uint8)  # a busy wall
    picture = Image.fromarray(wall)
    draw = ImageDraw.Draw(picture)
    panel = (144, 70, 216, 112)  # a small sign, just wide enough for its word
    draw.rectangle(panel, fill=(248, 248, 240))
    draw.text((180, 91), "OPEN", fill=(20, 20, 25), font=load_font(24), anchor="mm")
    image = np.dstack([np.asarray(picture), np.full((200, 360), 255, np.uint8)])
    request = EditRequest("replace the sign text with SOLD OUT", Snapshot(image.copy(), {}))
    result = Engine(Registry.from_catalogue()).run(request)
    assert result.ok, [o.error for o in result.outcomes]
    ink = (result.image[..., :3] < 50).all(axis=2)  # the new dark letters (the wall is >= 60)
    ys, xs = np.nonzero(ink)
    assert xs.min() >= panel[0] and xs.max() <= panel[2]  # no letter past the sign
    assert "SOLD" in " ".join(t.text for t in read_text(result.image)).upper()
