"""The offline planner turns ordinary English into ordered subtask chains."""

from __future__ import annotations

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
    plan = plan_offline("remove the cat and make it feel nostalgic")
    assert [s.kind for s in plan.subtasks] == [K.OBJECT_REMOVAL]
    assert any("nostalgic" in w for w in plan.warnings)


@pytest.mark.parametrize("instruction", ["", "   ", "make it feel nostalgic", "hello there"])
def test_nothing_supported_is_a_typed_error_listing_what_is_supported(instruction: str) -> None:
    with pytest.raises(UnsupportedInstruction) as error:
        plan_offline(instruction)
    assert "remove / recolor / replace" in str(error.value)
