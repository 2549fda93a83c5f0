"""Font style recognition: the typeface a sign's text is set in is recognised among the
installed fonts (no model; the DejaVu fonts CI installs), and a text replacement is
written in it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont, features

from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import EditRequest, Snapshot
from layerpath.kit.fonts import foreign_harfbuzz, layout_engine, match_font
from layerpath.tools.ocr import read_text, with_fonts
from layerpath.tools.registry import Registry

FOLDER = Path("/usr/share/fonts/truetype/dejavu")
CORE = tuple(
    str(FOLDER / name)
    for name in (
        "DejaVuSans.ttf",
        "DejaVuSans-Bold.ttf",
        "DejaVuSerif.ttf",
        "DejaVuSerif-Bold.ttf",
        "DejaVuSansMono.ttf",
        "DejaVuSansMono-Bold.ttf",
    )
)
pytestmark = pytest.mark.skipif(
    not all(Path(p).exists() for p in CORE), reason="needs fonts-dejavu-core"
)


def sign(text: str, font_path: str, size: int = 26) -> np.ndarray:
    """A grey wall with a cream panel carrying dark text in the given font (RGBA)."""
    picture = Image.new("RGB", (360, 160), (120, 130, 125))
    draw = ImageDraw.Draw(picture)
    draw.rectangle((30, 40, 330, 110), fill=(245, 238, 215))
    font = ImageFont.truetype(font_path, size)
    draw.text((180, 75), text, fill=(30, 25, 35), font=font, anchor="mm")
    pixels = np.asarray(picture)
    return np.dstack([pixels, np.full(pixels.shape[:2], 255, np.uint8)])


def family(path: str | None) -> str:
    name = Path(path or "").stem
    return name.split("-")[0]


def test_each_core_font_is_recognised_from_the_photo() -> None:
    right = 0
    for path in CORE:
        image = sign("FRESH BREAD", path)
        (line,) = [tb for tb in read_text(image) if "BREAD" in tb.text.upper()]
        found, likeness = match_font(
            image[..., :3], line.text, line.ink, line.background, line.color, CORE
        )
        assert found is not None and likeness > 0.3
        assert family(found) == family(path)  # serif, sans or mono: always
        right += found == path
    assert right >= 5  # and bold or regular nearly always


def test_a_replacement_is_written_in_the_signs_font() -> None:
    serif = str(FOLDER / "DejaVuSerif-Bold.ttf")
    image = sign("CLOSED", serif)
    request = EditRequest("replace the sign text with WELCOME", Snapshot(image.copy(), {}))
    result = Engine(Registry.from_catalogue()).run(request)
    assert result.ok, [o.error for o in result.outcomes]
    (line,) = [tb for tb in read_text(result.image) if "WELCOME" in tb.text.upper()]
    found, _ = match_font(
        result.image[..., :3], line.text, line.ink, line.background, line.color, CORE
    )
    assert family(found) == "DejaVuSerif"  # not the default bold sans
    boxes = with_fonts(image, read_text(image), 0.3)
    assert boxes and "Serif" in Path(str(boxes[0].font)).name  # any serif installed


def test_a_hosts_own_harfbuzz_turns_raqm_layout_off() -> None:
    """Krita links the system HarfBuzz; Pillow's RAQM layout then binds to it and, some
    runs and not others, measures glyphs hundreds of megapixels big (the docker's sign
    replacement failed about one run in four). Pillow's own, renamed copy is no host's."""
    pillow = (
        "7f0-7f1 r-xp 0 08:01 1 /venv/site-packages/pillow.libs/libharfbuzz-fb49c9fc.so.0.61450.0"
    )
    krita = "7f2-7f3 r-xp 0 08:01 2 /usr/lib/x86_64-linux-gnu/libharfbuzz.so.0.60000.0"
    assert not foreign_harfbuzz(pillow)
    assert foreign_harfbuzz(pillow + "\n" + krita)
    # this test process loaded only Pillow's copy: RAQM shaping stays on where Pillow has it
    ImageDraw.Draw(Image.new("L", (40, 20))).text(
        (0, 0), "Aw", font=ImageFont.truetype(CORE[0], 12)
    )
    assert not foreign_harfbuzz()
    assert layout_engine(CORE[0]) == (
        ImageFont.Layout.RAQM if features.check("raqm") else ImageFont.Layout.BASIC
    )
