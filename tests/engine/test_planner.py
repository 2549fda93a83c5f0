"""The offline planner turns ordinary English into ordered subtask chains."""

from __future__ import annotations

import numpy as np
import pytest

from layerpath.engine.plan.planner import plan_offline
from layerpath.engine.types import SubtaskKind as K
from layerpath.errors import BadInput, UnsupportedInstruction


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
    held = [r for r in results if r.group in HELD_OUT]
    assert len(held) >= 140 and sum(r.right for r in held) >= 0.95 * len(held)


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
    from layerpath.engine.plan.references import Reference, ReferenceKind, rewrite

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
    from layerpath.kit.colours import color_lab, parse_color

    blue, deep, pale = (color_lab(parse_color(c)) for c in ("blue", "deep blue", "pale blue"))
    assert deep[0] < blue[0] - 5 and pale[0] > blue[0] + 10  # lightness
    assert np.hypot(*pale[1:]) < np.hypot(*blue[1:])  # paler: less colour
    r, g, b = parse_color("pale blue")  # still blue, not the lilac CIELAB's scaling gives
    assert b > g > r
    assert parse_color("dark red") == (139, 0, 0)  # a colour's own name first
    for shade, colour in (("bluish", "blue"), ("reddish", "red"), ("purplish", "purple")):
        assert parse_color(shade) == parse_color(colour)  # '-ish': a shade of that colour


def _plans(instruction: str) -> list[tuple[str, str | None, str | None, dict[str, object]]]:
    subtasks = plan_offline(instruction).subtasks
    return [(s.kind.value, s.target, s.to, dict(s.params)) for s in subtasks]


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [  # the shapes of the words the first held-out phrasings missed, said with other words
        # a thing and where it is, said as one
        ("darken the cars on the street", ("region_adjustment", "cars on the street", None)),
        # a purpose at the end is no part of the target
        ("blur the licence plate for privacy", ("text_redaction", "licence plate", None)),
        ("brighten the groom to draw the eye to the couple", ("region_adjustment", "groom", None)),
        ("blur the plates out", ("text_redaction", "plates", None)),
        # a verb that is a colour, a particle that belongs to the verb
        ("whiten the fence", ("object_recoloration", "fence", "white")),
        ("redden the door", ("object_recoloration", "door", "red")),
        ("clear out the rubbish bins", ("object_removal", "rubbish bins", None)),
        # a request asked as a question
        ("could you turn the car to navy?", ("object_recoloration", "car", "navy")),
        # the adjustment's own noun is no region
        ("raise the brightness by a third of a stop", ("photo_adjustment", None, None)),
        # a verb whose particle says the direction
        ("take 10% off the vibrance", ("photo_adjustment", None, None)),
        ("take some contrast out of the sky", ("region_adjustment", "sky", None)),
        ("slap a heavy vignette on it", ("photo_adjustment", None, None)),
        # a wish said first, as a look's adjectives
        ("I'd like a gritty cinematic look", ("photo_adjustment", None, None)),
    ],
)
def test_targets_are_the_thing_not_the_words_around_it(
    instruction: str, expected: tuple[str, str | None, str | None]
) -> None:
    """(issue 25, the held-out phrasings: a reason, a verb's particle or a look's
    adjective was read as part of the target)"""
    ((kind, target, to, params),) = _plans(instruction)
    assert (kind, target, to) == expected
    if "off" in instruction or "out of" in instruction:
        assert float(params["amount"]) < 0  # (taken out: lowered)


def test_a_ratio_said_after_a_comma_and_a_named_frame_are_the_crop_s() -> None:
    assert _plans("crop it for the website, 3:2")[0][3] == {"aspect": "3:2"}
    assert _plans("crop to widescreen")[0][3] == {"aspect": "16:9"}
    assert _plans("crop to a widescreen 2.39:1 frame")[0][3] == {"aspect": "2.39:1"}


def test_a_wish_or_a_need_said_as_a_statement_gives_the_vague_edit_its_meaning() -> None:
    assert _plans("my editor wants it in black and white, do it please") == [
        ("photo_adjustment", None, None, {"op": "black_and_white", "amount": 1.0})
    ]
    ((kind, target, _, params),) = _plans(
        "the faces in the crowd need to be unrecognisable, blur them out"
    )
    assert (kind, target) == ("region_adjustment", "faces in the crowd")
    assert (params["op"], params["amount"]) == ("blur", 1.0)


def test_a_whole_picture_adjustment_keeps_its_place_after_an_upscale() -> None:
    kinds = [k for k, *_ in _plans("upscale it 4x, then sharpen it slightly")]
    assert kinds == ["image_upscaling", "photo_adjustment"]
    # a region's edit still runs before the frame grows (its mask is the photo's size)
    kinds = [k for k, *_ in _plans("upscale it 4x, then brighten the sky")]
    assert kinds == ["region_adjustment", "image_upscaling"]


def test_extra_canvas_on_a_side_is_outpainting() -> None:
    assert _plans("add 200 px of canvas on the left") == [
        ("outpainting", None, None, {"side": "left", "pixels": 200})
    ]


@pytest.mark.parametrize(
    ("instruction", "kind", "target", "op", "sign"),
    [  # a complaint names the fault: what puts it right is its opposite, on what it names
        ("it's far too warm, fix it", "photo_adjustment", None, "temperature", -1),
        ("too cold", "photo_adjustment", None, "temperature", 1),
        ("the sky is too bright, sort it out", "region_adjustment", "sky", "exposure", -1),
        (
            "there's a magenta cast from the lamps, correct it",
            "photo_adjustment",
            None,
            "white_balance",
            1,
        ),
        (
            "the photo is oversaturated, can you fix that?",
            "photo_adjustment",
            None,
            "saturation",
            -1,
        ),
    ],
)
def test_a_complaint_and_fix_it_is_the_edit_that_puts_the_fault_right(
    instruction: str, kind: str, target: str | None, op: str, sign: int
) -> None:
    """(issue 25: "it's too warm" was planned as warmer, and 'there's an orange cast,
    correct it' was refused)"""
    ((got_kind, got_target, _, params),) = _plans(instruction)
    assert (got_kind, got_target, params["op"]) == (kind, target, op)
    assert float(params["amount"]) * sign > 0


def test_a_fault_with_no_adjustment_is_put_right_by_its_own_kind() -> None:
    assert [k for k, *_ in _plans("it's a bit blurry, fix it")] == ["image_deblurring"]
    assert [k for k, *_ in _plans("the horizon is crooked, fix it")] == ["rotation"]
    # a thing said to be there is what 'it' is
    assert _plans("there's a traffic cone by the door, get rid of it")[0][:2] == (
        "object_removal",
        "traffic cone by the door",
    )


def test_a_kept_region_said_first_and_the_rest_edited() -> None:
    assert _plans("leave the flowers as they are, and make the rest black and white") == [
        (
            "region_adjustment",
            "flowers",
            None,
            {"op": "black_and_white", "amount": 1.0, "outside": True},
        )
    ]


@pytest.mark.parametrize(
    ("instruction", "target", "to"),
    [  # colour names people use (the xkcd survey's), after a verb that colours
        ("recolour the van in burnt orange", "van", "burnt orange"),
        ("dye the scarf mustard", "scarf", "mustard"),
        ("paint his bike a dusty rose", "bike", "dusty rose"),
        ("paint the shed a cool grey", "shed", "cool grey"),
    ],
)
def test_everyday_colour_names_are_colours(instruction: str, target: str, to: str) -> None:
    assert chain(instruction) == [("object_recoloration", target, to)]


def test_a_thing_that_is_also_a_colour_name_stays_a_thing() -> None:
    assert chain("remove the sand") == [("object_removal", "sand", None)]
    assert chain("make the stone darker")[0][1] == "stone"


def test_a_colour_name_gives_the_colour_people_call_by_it() -> None:
    """CSS's 'brown' is a brick red, and CSS's yellow made paler reads as a pale green
    (the xkcd survey's people call them 'dull red' and 'very light green'): "make it
    brown" made things red. A name gives what people call by it, read as its basic colour
    term from the survey's nearest named colours; its modifier's lightness kept."""
    from layerpath.kit.colours import color_lab, colour_term, parse_color, said_lightness

    assert colour_term(color_lab((165, 42, 42))) == "red"  # CSS's brown
    assert colour_term(color_lab((255, 165, 0))) == "orange"
    for name, term in (
        ("brown", "brown"), ("dark brown", "brown"), ("light brown", "brown"),
        ("pale yellow", "yellow"), ("light yellow", "yellow"), ("dark yellow", "yellow"),
        ("light orange", "orange"), ("navy", "blue"), ("pale blue", "blue"),
        ("deep blue", "blue"), ("dark red", "red"), ("pink", "pink"),
    ):  # fmt: skip
        assert colour_term(color_lab(parse_color(name))) == term, name
    lightness = [color_lab(parse_color(f"{m}brown"))[0] for m in ("dark ", "", "light ")]
    assert lightness == sorted(lightness)
    # where the name itself says dark or light, the checks ask for that lightness
    said = {c: said_lightness(c, color_lab(parse_color(c))) for c in ("navy", "light blue")}
    assert {c: s[0] for c, s in said.items() if s} == {"navy": "dark", "light blue": "light"}
    assert 10 < said["navy"][1] < 14  # (navy's L* 13, the survey's blue 37: half way)
    for open_ in ("blue", "red", "crimson", "teal", "brown"):
        assert said_lightness(open_, color_lab(parse_color(open_))) is None, open_


def test_surveyed_colour_names_resolve_after_css_and_modifiers() -> None:
    from layerpath.kit.colours import parse_color

    assert parse_color("navy") == (0, 0, 128)  # CSS's navy, not the survey's
    assert parse_color("mustard yellow") == (210, 189, 10)  # the survey's
    r, g, b = parse_color("pale blue")  # CSS blue made paler (the survey's is near white)
    assert b > g > r
    with pytest.raises(BadInput):
        parse_color("sand", surveyed=False)


@pytest.mark.parametrize(
    ("instruction", "kind", "target", "params"),
    [  # the shapes the third fresh set missed, said with other words
        # how much, said in words: never a region
        (
            "cool it down a smidge",
            "photo_adjustment",
            None,
            {"op": "temperature", "amount": -0.175},
        ),
        (
            "saturation up forty percent",
            "photo_adjustment",
            None,
            {"op": "saturation", "amount": 0.4},
        ),
        (
            "push the exposure a stop and a half",
            "photo_adjustment",
            None,
            {"op": "exposure", "amount": 1.5},
        ),
        ("pump up the vibrance", "photo_adjustment", None, {"op": "vibrance", "amount": 0.4}),
        # a look's strength said in a clause of its own
        (
            "film noir, but only subtly",
            "photo_adjustment",
            None,
            {"op": "look", "look": "low_key", "amount": 0.4},
        ),
        (
            "cinematic grade, about 60%",
            "photo_adjustment",
            None,
            {"op": "look", "look": "teal_orange", "amount": 0.6},
        ),
        (
            "vintage look at half strength",
            "photo_adjustment",
            None,
            {"op": "look", "look": "vintage", "amount": 0.5},
        ),
        # a graduated edit said with a filter's name, from a side said plainly
        (
            "darken the sky a stop with a grad ND",
            "region_adjustment",
            "sky",
            {"op": "exposure", "amount": -1.0, "graduated": "top"},
        ),
        (
            "brighten the left-hand side with a gradient",
            "photo_adjustment",
            None,
            {"op": "exposure", "amount": 0.5, "graduated": "left"},
        ),
        # everything but a region, said mid-sentence
        (
            "make everything except the umbrella black and white",
            "region_adjustment",
            "umbrella",
            {"op": "black_and_white", "amount": 1.0, "outside": True},
        ),
        (
            "keep the dog sharp and blur everything around him",
            "region_adjustment",
            "dog",
            {"op": "blur", "amount": 0.5, "outside": True},
        ),
    ],
)
def test_amounts_strengths_sides_and_kept_regions_said_every_which_way(
    instruction: str, kind: str, target: str | None, params: dict[str, object]
) -> None:
    ((got_kind, got_target, _, got),) = _plans(instruction)
    assert (got_kind, got_target, got) == (kind, target, params)


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [  # verbs people use for an edit layerpath has
        ("clone out the power lines", ("object_removal", "power lines", None)),
        ("edit out the photobomber", ("object_removal", "photobomber", None)),
        ("make the crisp packet disappear", ("object_removal", "crisp packet", None)),
        ("get the tripod out of the frame", ("object_removal", "tripod", None)),
        ("switch the kettle to sage green", ("object_recoloration", "kettle", "sage green")),
        ("turn the cushions mauve", ("object_recoloration", "cushions", "mauve")),
        (
            "change the colour of the door to teal blue",
            ("object_recoloration", "door", "teal blue"),
        ),
        ("go mono", ("photo_adjustment", None, None)),
        ("smooth her skin slightly", ("region_adjustment", "skin", None)),
        ("crisp it up a little", ("photo_adjustment", None, None)),
        ("crisp it up", ("image_deblurring", None, None)),  # (as 'sharpen it': deblurring)
        ("tilt it 3 degrees anti clockwise", ("rotation", None, None)),
        ("triple the resolution", ("image_upscaling", None, None)),
        ("redact all of the lettering", ("text_redaction", "text", None)),
    ],
)
def test_everyday_verbs_for_the_edits_layerpath_has(
    instruction: str, expected: tuple[str, str | None, str | None]
) -> None:
    assert _plans(instruction)[0][:3] == expected
    assert len(_plans(instruction)) == 1


def test_a_purpose_or_a_cause_at_the_end_is_no_region() -> None:
    assert _plans("a dreamy look for the engagement shoot")[0][:2] == ("photo_adjustment", None)
    assert _plans("blur the email so nobody can copy it")[0][:2] == ("text_redaction", "email")
    assert _plans("remove the vignetting from the lens")[0][1] is None
    # a swap's 'for' names the new thing
    assert _plans("swap the mug for a teapot")[0][:3] == ("object_replacement", "mug", "teapot")


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [  # the shapes the fourth fresh set missed, said with other words
        ("take the bollard out, please", ("object_removal", "bollard", None)),
        ("repaint the gate forest green", ("object_recoloration", "gate", "forest green")),
        ("blur the phone number before we print it", ("text_redaction", "phone number", None)),
        (
            "remove the glare from the window behind her",
            ("object_removal", "glare from the window behind her", None),
        ),
        ("correct the colour cast from the tungsten lamps", ("photo_adjustment", None, None)),
        ("smooth out the grain", ("photo_adjustment", None, None)),
        ("sharpen the logo", ("region_adjustment", "logo", None)),
        ("give it the blockbuster movie look", ("photo_adjustment", None, None)),
        ("pull the foreground down a touch", ("region_adjustment", "foreground", None)),
    ],
)
def test_the_fourth_sets_shapes_said_otherwise(
    instruction: str, expected: tuple[str, str | None, str | None]
) -> None:
    plans = _plans(instruction)
    assert len(plans) == 1 and plans[0][:3] == expected


def test_a_reason_said_as_what_i_did_is_no_edit() -> None:
    assert _plans("brighten it by half a stop, we shot it too dark") == [
        ("photo_adjustment", None, None, {"op": "exposure", "amount": 0.5})
    ]


def test_what_the_rest_or_everything_else_gets_keeps_the_thing_just_edited() -> None:
    assert _plans("recolour the scarf teal and make everything else black and white")[1] == (
        "region_adjustment",
        "scarf",
        None,
        {"op": "black_and_white", "amount": 1.0, "outside": True},
    )


@pytest.mark.parametrize(
    ("instruction", "to", "match"),
    [  # what a sign should say, said as a wish
        ("the poster should say 'Sold Out', change the text", "Sold Out", None),
        ("could you fix the sign so it reads 'Closed Mondays'", "Closed Mondays", None),
        ("the chalkboard says 'Soup', make it say 'Salad'", "Salad", "Soup"),
        ("change the sign from open to closed", "closed", "open"),
    ],
)
def test_a_sign_s_new_words_said_as_a_wish(instruction: str, to: str, match: str | None) -> None:
    ((kind, _, got_to, params),) = _plans(instruction)
    assert (kind, got_to, params.get("match")) == ("text_replacement", to, match)


def test_the_temperature_by_its_name_goes_the_way_the_verb_says() -> None:
    """(the one word the fifth fresh set showed missing, after it was measured)"""
    assert _plans("bring the temperature down a little")[0][3] == {
        "op": "temperature",
        "amount": -0.175,
    }
    assert _plans("increase the colour temperature")[0][3] == {"op": "temperature", "amount": 0.35}


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [  # what a review of the new words found going wrong, kept right
        ("make the sky orange", ("object_recoloration", "sky", "orange")),
        ("make the grass green", ("object_recoloration", "grass", "green")),
        ("make her lipstick red", ("object_recoloration", "lipstick", "red")),
        ("blur license plates", ("text_redaction", "license plates", None)),
        ("brighten mountains", ("region_adjustment", "mountains", None)),
        ("increase saturation of flowers", ("region_adjustment", "flowers", None)),
        ("crop for the face", ("crop", "face", None)),
        ("take the noise out", ("photo_adjustment", None, None)),
        ("the sky is noisy, fix it", ("region_adjustment", "sky", None)),
        ("the water looks flat, fix it", ("region_adjustment", "water", None)),
        ("the dark areas are noisy, fix it", ("region_adjustment", "dark areas", None)),
        ("crop to sixteen by nine", ("crop", None, None)),
    ],
)
def test_words_a_review_found_misread(
    instruction: str, expected: tuple[str, str | None, str | None]
) -> None:
    plans = _plans(instruction)
    assert len(plans) == 1 and plans[0][:3] == expected


def test_a_state_after_make_is_no_colour_and_a_shadow_cast_is_no_colour_cast() -> None:
    for instruction in ("make the sky dark", "make the skin pale"):
        with pytest.raises(UnsupportedInstruction):
            plan_offline(instruction)  # (asked again, not painted a colour called 'dark')
    try:
        plans = _plans("there's a shadow cast across her face, fix it")
    except UnsupportedInstruction:
        plans = []
    assert all(p[3].get("op") != "white_balance" for p in plans)


def test_a_purpose_after_a_swap_that_named_its_new_thing_goes_and_a_slider_too_high_comes_down() -> (
    None
):
    assert _plans("replace the sky with a sunset for the poster")[0][:3] == (
        "changing_scenery",
        "sky",
        "sunset",
    )
    assert _plans("swap the mug for a teapot")[0][2] == "teapot"
    assert _plans("the temperature is too high, fix it")[0][3]["amount"] < 0
    assert _plans("the contrast is too harsh, sort it out")[0][3] == {
        "op": "contrast",
        "amount": -0.35,
    }
