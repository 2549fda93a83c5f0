"""Text edits found by the benchmark suite: OCR does not take a ball or a diamond for a
line of text, and a longer replacement is fitted to its sign instead of spilling over."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from layerpath.benchmarks.suite import make_suite_scene
from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import EditRequest, RunResult, Snapshot
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


def _signs(*signs: tuple[tuple[int, int, int, int], str, int]) -> np.ndarray:
    """A busy wall with light panels on it, each with its word (box, word, size)."""
    rng = np.random.default_rng(5)
    picture = Image.fromarray(rng.integers(60, 140, (300, 480, 3)).astype(np.uint8))
    draw = ImageDraw.Draw(picture)
    for panel, word, size in signs:
        draw.rectangle(panel, fill=(248, 248, 240))
        centre = ((panel[0] + panel[2]) // 2, (panel[1] + panel[3]) // 2)
        draw.text(centre, word, fill=(20, 20, 25), font=load_font(size), anchor="mm")
    return np.dstack([np.asarray(picture), np.full((300, 480), 255, np.uint8)])


def _edited(
    image: np.ndarray, words: str, selected: tuple[int, int, int, int] | None = None
) -> RunResult:
    """The run of `words` on the picture, with the box (x0, y0, x1, y1) selected."""
    selection = None
    if selected is not None:
        selection = np.zeros(image.shape[:2], bool)
        selection[selected[1] : selected[3], selected[0] : selected[2]] = True
    request = EditRequest(words, Snapshot(image.copy(), {}, selection=selection))
    return Engine(Registry.from_catalogue()).run(request)


def _read(image: np.ndarray) -> str:
    return " ".join(t.text for t in read_text(image)).upper()


def test_the_sign_text_is_the_large_sign_not_a_plate_far_from_it() -> None:
    """A held-out photo's boats carried a small number plate OCR reads too: the word
    was written once over both, a giant across the boats between them (refused, and
    the sign kept its old word). "The sign text" is the sign's, far the largest."""
    sign = (150, 60, 350, 130)
    plate = (30, 230, 110, 258)
    image = _signs((sign, "OPEN", 44), (plate, "27 TO 4", 14))
    result = _edited(image, "replace the sign text with EXIT")
    assert result.ok, [o.error for o in result.outcomes]
    changed = (result.image != image).any(axis=2)
    ys, xs = np.nonzero(changed)
    assert xs.min() >= sign[0] and xs.max() <= sign[2] and ys.max() <= sign[3]
    read = _read(result.image)
    assert "EXIT" in read and "OPEN" not in read


def test_one_word_is_not_written_over_two_signs_alike() -> None:
    """Two signs of the same size: which one "the sign" is cannot be told, and one word
    across both would paint over what lies between them. Refused, saying how to name
    it; the picture untouched."""
    image = _signs(((40, 60, 210, 120), "OPEN", 40), ((270, 180, 440, 240), "SALE", 40))
    result = _edited(image, "replace the sign text with EXIT")
    assert not result.ok
    assert "say which to replace" in (result.outcomes[0].error or "")
    visible = result.image
    assert (visible == image).all()


def test_a_selection_says_which_sign_to_replace() -> None:
    """The same two signs, a rough box selected around the second: its word is replaced,
    the first sign's stays as it was (of texts alike, a selection says which)."""
    first, second = (40, 60, 210, 120), (270, 180, 440, 240)
    image = _signs((first, "OPEN", 40), (second, "SALE", 40))
    result = _edited(image, "replace the sign text with EXIT", (255, 170, 455, 250))
    assert result.ok, [o.error for o in result.outcomes]
    ys, xs = np.nonzero((result.image != image).any(axis=2))
    assert xs.min() >= second[0] and ys.min() >= second[1]  # the first sign untouched
    read = _read(result.image)
    assert "EXIT" in read and "OPEN" in read and "SALE" not in read


def test_a_selection_for_another_step_leaves_the_sign_text_the_signs() -> None:
    """'Brighten this' with a corner selected around a number plate, and the sign's
    word replaced: the selection is this's, the sign far the largest text is the sign
    text's; the plate keeps its words."""
    sign, plate = (150, 60, 350, 130), (30, 230, 110, 258)
    image = _signs((sign, "OPEN", 44), (plate, "27 TO 4", 14))
    result = _edited(
        image, "brighten this and replace the sign text with EXIT", (15, 215, 125, 275)
    )
    assert result.ok, [o.error for o in result.outcomes]
    read = _read(result.image)
    assert "EXIT" in read and "OPEN" not in read and "27" in read


def test_a_notice_of_small_lines_is_not_the_sign_text() -> None:
    """Prominence is a block's largest line, not the sum of its lines: a notice of twelve
    small lines is not 'the sign text' beside a sign's one large word; of lines a rough
    selection holds the centre of, only those."""
    from layerpath.kit.names import select_text_boxes
    from layerpath.kit.types import Box, TextBox

    word = TextBox(Box(300, 40, 500, 100), "OPEN", 0.99)
    notice = [TextBox(Box(20, 20 + 18 * i, 170, 34 + 18 * i), f"line {i}", 0.99) for i in range(12)]
    assert select_text_boxes([word, *notice], {}, replacing=True) == [word]
    assert len(select_text_boxes([word, *notice], {}, replacing=False)) == 13
    alike = TextBox(Box(300, 200, 500, 260), "SALE", 0.99)
    selection = np.zeros((300, 600), bool)
    selection[190:300, 280:600] = True  # (rough: it clips OPEN's box, not its centre)
    selection[95:110, 280:600] = True
    assert select_text_boxes([word, alike], {}, True, selection) == [alike]


def test_a_selection_holding_neither_sign_is_not_said_to_hold_them() -> None:
    """Two signs alike and a selection in an empty corner (this's, for the brightening):
    the replacement asks which sign by its words; it does not claim the selection holds
    two texts."""
    image = _signs(((40, 60, 210, 120), "OPEN", 40), ((270, 180, 440, 240), "SALE", 40))
    result = _edited(image, "brighten this and replace the sign text with EXIT", (0, 250, 60, 300))
    (text,) = [o for o in result.outcomes if o.subtask.kind.value == "text_replacement"]
    assert not text.ok and "say which to replace" in (text.error or "")
    assert "The selection holds" not in (text.error or "")


def test_a_camera_sized_signs_old_word_leaves_no_ghost_outline() -> None:
    """A sign photographed large (its letters 170 px, with the light halo that resizing
    and sharpening leave round them): the erase grows with the letters, so no outline of
    the old word stays on the panel (at 24 MP a 2 px grow left one, looked at)."""
    small = Image.new("RGB", (640, 400), (110, 120, 100))
    draw = ImageDraw.Draw(small)
    panel = (120, 120, 520, 280)
    draw.rectangle(panel, fill=(242, 238, 228))
    draw.text((320, 200), "OPEN", fill=(30, 30, 30), font=load_font(80), anchor="mm")
    big = np.asarray(small.resize((1600, 1000), Image.LANCZOS))  # (the halo)
    image = np.dstack([big, np.full(big.shape[:2], 255, np.uint8)])
    result = _edited(image, "remove the text")
    assert result.ok, [o.error for o in result.outcomes]
    inner = result.image[340:660, 340:1260, :3].astype(int)  # the panel within its frame
    off = np.abs(inner - np.array([242, 238, 228])).max(axis=2)
    assert (off > 12).mean() < 0.001 and _read(result.image) == ""
