"""OCR on a camera-size photo: the sign's text is found with a tight box (read again at
its best size from the photo's own pixels), at sizes where RapidOCR alone, which works
on a 2000-pixel copy, gives a box spilling far past the sign or misses huge letters."""

from __future__ import annotations

import pytest

from layerpath.benchmarks.demo import SIGN_BOX, demo_scene
from layerpath.tools.ocr import read_text

pytest.importorskip("skimage")


@pytest.mark.slow
@pytest.mark.parametrize("scale", [1, 6])
def test_the_signs_text_is_read_with_a_tight_box_at_camera_size(scale: int) -> None:
    scene = demo_scene(scale=scale)
    (line,) = read_text(scene.image)
    assert line.text == "CLOSED"
    x0, y0, x1, y1 = (v * scale for v in SIGN_BOX)
    box, ink = line.box, line.ink
    assert x0 <= box.x0 and y0 <= box.y0 and box.x1 <= x1 and box.y1 <= y1  # on the sign
    assert ink is not None and 16 * scale <= ink.height <= 24 * scale  # the letters, 20 px at 1x
    assert line.background[0] > 200 and line.color[0] < 60  # paper and ink told apart


def test_the_engine_reads_text_back_through_the_catalogues_service() -> None:
    """The checks read text through the catalogue's "read_text" service (the engine
    imports no tool family); it is the real PP-OCR of rapidocr's shipped weights."""
    from layerpath.tools.registry import service, services

    assert set(services()) >= {"read_text", "picture_similarity"}
    lines = service("read_text")(demo_scene().image, 0.3)
    assert [line.text for line in lines] == ["CLOSED"]
    with pytest.raises(KeyError, match="no tool family offers the service 'spell'"):
        service("spell")
    for name in services():  # each binding names a function that is there
        assert callable(service(name))
