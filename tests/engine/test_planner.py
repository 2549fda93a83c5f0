"""The offline planner turns ordinary English into ordered subtask chains."""

from __future__ import annotations

import numpy as np
import pytest

from layerpath.engine.planner import plan_offline
from layerpath.engine.types import SubtaskKind as K
from layerpath.errors import UnsupportedInstruction


def chain(instruction: str) -> list[tuple[str, str | None, str | None]]:
    return [(s.kind.value, s.target, s.to) for s in plan_offline(instruction).subtasks]


def test_readme_instruction_with_pronoun_and_also() -> None:
    assert chain(
        "Detect the bench, recolor it to pink. Also remove the cat and recolor the wall to yellow."
    ) == [
        ("object_detection", "bench", None),
        ("object_recoloration", "bench", "pink"),
        ("object_removal", "cat", None),
        ("object_recoloration", "wall", "yellow"),
    ]


def test_text_replacement_with_uppercase_literal() -> None:
    plan = plan_offline(
        "remove the cat, recolor the wall to yellow and replace the sign text with OPEN"
    )
    assert [s.kind for s in plan.subtasks] == [
        K.OBJECT_REMOVAL,
        K.OBJECT_RECOLORATION,
        K.TEXT_REPLACEMENT,
    ]
    assert plan.subtasks[2].to == "OPEN"
    assert [s.id for s in plan.subtasks] == ["s1", "s2", "s3"]


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("make the car red", [("object_recoloration", "car", "red")]),
        ("paint the fence light blue", [("object_recoloration", "fence", "light blue")]),
        (
            "change the color of the door to dark green",
            [("object_recoloration", "door", "dark green")],
        ),
        (
            "remove the cat and the dog",
            [("object_removal", "cat", None), ("object_removal", "dog", None)],
        ),
        ("replace the cat with a dog", [("object_replacement", "cat", "dog")]),
        ("remove the background", [("background_removal", "background", None)]),
        ("make it night", [("changing_scenery", "scenery", "night")]),
        ("sharpen the photo", [("image_deblurring", None, None)]),
        ("segment the person", [("object_segmentation", "person", None)]),
        ("estimate the depth", [("depth_estimation", None, None)]),
    ],
)
def test_object_and_image_phrasings(
    instruction: str, expected: list[tuple[str, str | None, str | None]]
) -> None:
    assert chain(instruction) == expected


def test_quoted_text_becomes_match_and_new_text() -> None:
    plan = plan_offline("Replace the text 'CLOSED' with 'OPEN', then highlight the word 'price'")
    replace, highlight = plan.subtasks
    assert (replace.kind, replace.to, replace.params["match"]) == (
        K.TEXT_REPLACEMENT,
        "OPEN",
        "CLOSED",
    )
    assert (highlight.kind, highlight.params["match"]) == (K.KEYWORD_HIGHLIGHTING, "price")


def test_text_addition_keeps_position_and_colour() -> None:
    (add,) = plan_offline("add the text 'SALE' at the top in red").subtasks
    assert (add.kind, add.to, add.params) == (
        K.TEXT_ADDITION,
        "SALE",
        {"position": "top", "color": "red"},
    )


def test_redaction_pattern() -> None:
    (redact,) = plan_offline("redact the phone number").subtasks
    assert redact.kind == K.TEXT_REDACTION and redact.params == {"pattern": "phone"}


def test_replaced_object_is_recoloured_after_it_exists() -> None:
    assert chain("recolor the dog to pink and replace the cat with a dog") == [
        ("object_replacement", "cat", "dog"),
        ("object_recoloration", "dog", "pink"),
    ]


def test_text_detection_runs_after_text_edits_and_the_canvas_grows_last() -> None:
    """Edits work on the photo (and its masks) as it is; outpainting, then upscaling,
    grow the canvas after them."""
    kinds = [
        s.kind
        for s in plan_offline(
            "upscale 2x, detect the text, replace the text 'A1' with 'B2' and extend the "
            "image to the left"
        ).subtasks
    ]
    assert kinds == [K.TEXT_REPLACEMENT, K.TEXT_DETECTION, K.OUTPAINTING, K.IMAGE_UPSCALING]


def test_unknown_clause_is_a_warning_not_a_silent_drop() -> None:
    plan = plan_offline("remove the cat and make it feel like a Tuesday")
    assert [s.kind for s in plan.subtasks] == [K.OBJECT_REMOVAL]
    assert any("tuesday" in w.lower() for w in plan.warnings)


@pytest.mark.parametrize("instruction", ["", "   ", "make it feel like a Tuesday", "hello there"])
def test_nothing_supported_is_a_typed_error_listing_what_is_supported(instruction: str) -> None:
    with pytest.raises(UnsupportedInstruction) as error:
        plan_offline(instruction)
    assert "remove / recolor / replace" in str(error.value)


def test_the_public_instruction_set_is_planned_exactly() -> None:
    """benchmarks/data/*.jsonl (README's table): of the groups tuned on, at least 97 %
    planned exactly as meant; every instruction in another language is refused with
    'English only' (never planned into something else)."""
    from layerpath.benchmarks.words import HELD_OUT, instruction_set, score

    rows = instruction_set()
    assert len(rows) >= 700
    results = [score(row) for row in rows]
    tuned = [r for r in results if r.group not in HELD_OUT]
    assert sum(r.right for r in tuned) >= 0.97 * len(tuned)
    assert all(r.right for r in results if r.group == "other languages")
    # the held-out phrasings, never tuned on: README reports them; a floor under them
    held = [r for r in results if r.group == "fresh (held out)"]
    assert len(held) == 150 and sum(r.right for r in held) >= 0.85 * len(held)


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [  # the misreadings a new user met (issue 15)
        ("make it black and white", [("photo_adjustment", None, None)]),
        (
            "remove the people in the background",
            [("object_removal", "people in the background", None)],
        ),
        ("recolor the wall to navy blue", [("object_recoloration", "wall", "navy blue")]),
        ("update the closed signage to open", [("text_replacement", "text", "open")]),
        ("blur the face", [("region_adjustment", "face", None)]),
        ("convert to grayscale", [("photo_adjustment", None, None)]),
    ],
)
def test_everyday_words_are_read_as_meant(
    instruction: str, expected: list[tuple[str, str | None, str | None]]
) -> None:
    assert chain(instruction) == expected


def test_numbers_positions_and_order_words_are_kept() -> None:
    (extend,) = plan_offline("extend the canvas 200 pixels on the left").subtasks
    assert extend.params == {"side": "left", "pixels": 200}
    (write,) = plan_offline("write 'Sale' in the bottom right corner").subtasks
    assert write.params["position"] == "bottom right"
    (exposure,) = plan_offline("raise the exposure by 1.5 stops").subtasks
    assert exposure.params == {"op": "exposure", "amount": 1.5}
    assert chain("after you replace the cat with a rabbit, recolor it to pink") == [
        ("object_replacement", "cat", "rabbit"),
        ("object_recoloration", "rabbit", "pink"),
    ]


@pytest.mark.parametrize(
    ("instruction", "language"),
    [("entferne die Katze und färbe die Wand gelb", "German"), ("supprime le chat", "French")],
)
def test_another_language_is_told_english_only(instruction: str, language: str) -> None:
    with pytest.raises(UnsupportedInstruction) as error:
        plan_offline(instruction)
    assert f"reads as {language}" in str(error.value)
    assert "English only" in str(error.value) and "LLM endpoint in Settings" in str(error.value)


@pytest.mark.parametrize(
    "instruction",
    [
        "replace the sky with the sky from ref",
        "swap it for the sky in ref",
        "use the sky from ref",
        "take the sky of ref",
        "replace the sky with the one in ref",
    ],
)
def test_a_sky_from_a_reference_is_asked_for_in_everyday_words(instruction: str) -> None:
    """(issue 25: 'swap it for the sky in ref' and 'use the sky from ref' were refused)"""
    from layerpath.engine.references import Reference, ReferenceKind, rewrite

    ref = Reference("ref", ReferenceKind.PICTURE, "ref.jpg", pixels=np.zeros((8, 8, 3), np.uint8))
    (subtask,) = plan_offline(rewrite(instruction, {"ref": ref})).subtasks
    assert (subtask.kind, subtask.target, subtask.to) == (K.CHANGING_SCENERY, "sky", "@ref")


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [  # a complaint or a reason beside the edit is not an edit of its own (issue 25)
        ("the sky looks dull, make it bluer", [("region_adjustment", "sky", None)]),
        ("erase the sticker, the client doesn't want it", [("object_removal", "sticker", None)]),
        ("brighten it, it looks underexposed", [("photo_adjustment", None, None)]),
        ("crop it to 4:5 so it fits on instagram", [("crop", None, None)]),
        ("I need it square for my profile picture, crop it", [("crop", None, None)]),
        ("make it feel cosy, like candlelight", [("photo_adjustment", None, None)]),
        # a person's wish names no thing; a frame's edit takes no complaint's subject
        ("the client hates it, make it black and white", [("photo_adjustment", None, None)]),
        ("the sky looks dull, crop it square", [("crop", None, None)]),
        # a need said as a statement is the edit it asks for
        (
            "remove the cat, the wall needs to be yellow",
            [("object_removal", "cat", None), ("object_recoloration", "wall", "yellow")],
        ),
        (
            "brighten it, the sky needs more contrast",
            [("photo_adjustment", None, None), ("region_adjustment", "sky", None)],
        ),
    ],
)
def test_complaints_and_reasons_are_context_not_edits(
    instruction: str, expected: list[tuple[str, str | None, str | None]]
) -> None:
    plan = plan_offline(instruction)
    assert chain(instruction) == expected and not plan.warnings


@pytest.mark.parametrize("instruction", ["change the colour to red", "recolor to red"])
def test_a_recolour_that_names_no_thing_is_the_selections(instruction: str) -> None:
    assert chain(instruction) == [("object_recoloration", "this", "red")]


def test_bringing_back_the_shadows_is_not_darkening_them() -> None:
    try:
        plan = plan_offline("bring back the shadows")
    except UnsupportedInstruction:
        return  # (asked again, not guessed)
    assert all(s.params.get("amount", 0) > 0 for s in plan.subtasks)


def test_a_colour_with_a_modifier_is_that_colour_darker_lighter_or_richer() -> None:
    from layerpath.tools.imaging import color_lab, parse_color

    blue, deep, pale = (color_lab(parse_color(c)) for c in ("blue", "deep blue", "pale blue"))
    assert deep[0] < blue[0] - 5 and pale[0] > blue[0] + 10  # lightness
    assert np.hypot(*pale[1:]) < np.hypot(*blue[1:])  # paler: less colour
    r, g, b = parse_color("pale blue")  # still blue, not the lilac CIELAB's scaling gives
    assert b > g > r
    assert parse_color("dark red") == (139, 0, 0)  # a colour's own name first
    for shade, colour in (("bluish", "blue"), ("reddish", "red"), ("purplish", "purple")):
        assert parse_color(shade) == parse_color(colour)  # '-ish': a shade of that colour
