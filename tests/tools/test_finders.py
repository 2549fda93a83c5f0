"""Finding things offline with what ships inside OpenCV (Haar faces, HOG people, GrabCut),
on real photos (scikit-image's): the face, the person, the sky, position words, a rough
box refined to the object, and a clear message when nothing here can find a thing."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import data

from layerpath.errors import TargetNotFound
from layerpath.kit.imaging import dilate
from layerpath.kit.names import finder_for, position_of
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.masks import NamedMaskSource
from layerpath.tools.registry import Registry

REGISTRY = Registry.from_catalogue()
FINDER = REGISTRY.get("offline_finder")
#: where the astronaut's face is (by eye, in the 512x512 photo)
FACE = (175, 55, 275, 175)


def rgba(pixels: np.ndarray) -> np.ndarray:
    return np.dstack([pixels, np.full(pixels.shape[:2], 255, np.uint8)])


def find(image: np.ndarray, target: str, **params: object) -> np.ndarray:
    ctx = ToolContext(SubtaskKind.REGION_ADJUSTMENT, target=target, subtask_params=params)
    out = FINDER.run(ctx, {ArtifactKind.IMAGE: image}, FINDER.spec.param_schedule()[0])
    mask = out.outputs[ArtifactKind.MASK]
    assert mask.shape == image.shape[:2] and out.outputs[ArtifactKind.BOXES]
    return mask


def test_the_words_name_a_finder_and_a_position() -> None:
    assert finder_for("the faces") == "face"
    assert finder_for("people in the background") == "people"
    assert finder_for("background behind the man") == "background"
    assert finder_for("the cat") is None
    assert position_of("the person on the left", {}) == "left"
    assert position_of("face", {"position": "top right"}) == "top right"


def test_the_astronauts_face_and_person_are_found() -> None:
    image = rgba(data.astronaut())
    x0, y0, x1, y1 = FACE
    face = find(image, "face")
    assert face[y0:y1, x0:x1].mean() > 0.6 and face.mean() < 0.08  # the face, little else
    person = find(image, "the person")
    assert person[y0:y1, x0:x1].mean() > 0.8  # the face is part of the person
    assert person[300:400, 100:250].mean() > 0.8  # and the suit below it
    assert person[:80, :60].mean() < 0.1  # not the flag in the corner
    import cv2

    count, _, stats, _ = cv2.connectedComponentsWithStats(person.astype(np.uint8))
    areas = stats[1:, cv2.CC_STAT_AREA]
    assert (areas >= 0.05 * areas.max()).all()  # no crumbs along the body's edge
    background = find(image, "background")
    assert not (background & person).any() and background[:80, :60].mean() > 0.9


def test_a_position_picks_one_of_several_faces() -> None:
    one = data.astronaut()
    pair = rgba(np.hstack([one, one]))  # the same face at x ~225 and ~737
    both = find(pair, "faces")
    assert both[:, :512].any() and both[:, 512:].any()
    right = find(pair, "face on the right")
    assert right[:, 512:].any() and not right[:, :512].any()
    left = find(pair, "face", position="left")
    assert left[:, :512].any() and not left[:, 512:].any()


def test_a_dusk_sky_is_found_and_the_ground_is_not() -> None:
    image = rgba(data.rocket())
    sky = find(image, "the sky")
    assert sky[:100, 100:250].mean() > 0.9  # the sky between the towers
    assert sky[-15:].mean() < 0.2  # the ground (its dark blue left corner is taken: known)
    assert sky[180:360, 312:330].mean() < 0.1  # the rocket standing in it


def test_nothing_found_says_what_would_find_it() -> None:
    coffee = rgba(data.coffee())
    with pytest.raises(TargetNotFound, match="No face was found"):
        find(coffee, "face")
    ctx = ToolContext(SubtaskKind.OBJECT_REMOVAL, target="giraffe")
    said = FINDER.declines(ctx) or ""
    for advice in ("Select it", "name a mask or layer after it", "yolov8n-onnx"):
        assert advice in said
    assert "--" not in said  # no command-line flags: the panel shows the same words


def test_a_rough_box_around_a_named_object_is_refined_to_it() -> None:
    """A photographer drags a box around the cup and types 'recolor the cup to blue':
    the selection is used for the cup, cut to the cup inside the box (GrabCut)."""
    image = rgba(data.coffee())
    box = np.zeros(image.shape[:2], bool)
    box[20:390, 60:500] = True  # the cup and saucer, with table around them
    ctx = ToolContext(SubtaskKind.OBJECT_RECOLORATION, target="cup", selection=box)
    source = NamedMaskSource(REGISTRY.get("named_masks").spec)
    mask = source.run(ctx, {ArtifactKind.IMAGE: image}, {}).outputs[ArtifactKind.MASK]
    assert not (mask & ~box).any()  # never outside the selection
    assert 0.3 < mask[box].mean() < 0.9  # the table inside the box is left out
    assert mask[150:250, 200:350].mean() > 0.9  # the cup itself is in
    # a selection drawn to the object's shape is the user's own: kept as it is
    yy, xx = np.mgrid[: box.shape[0], : box.shape[1]]
    round_shape = ((xx - 275) / 130) ** 2 + ((yy - 200) / 110) ** 2 <= 1  # an ellipse
    ctx = ToolContext(SubtaskKind.OBJECT_RECOLORATION, target="cup", selection=round_shape)
    kept = source.run(ctx, {ArtifactKind.IMAGE: image}, {}).outputs[ArtifactKind.MASK]
    assert np.array_equal(kept, round_shape)


def test_a_background_with_no_people_is_all_but_the_subject_found_meanwhile() -> None:
    """'the background' looks for people and, on another core meanwhile, for the salient
    subject: on a photo with no people it is exactly all but the subject the finder finds
    for 'the subject' (GrabCut seeded alike), not a second, different cut."""
    from layerpath.tools.finders import find_people

    image = rgba(data.coffee())
    small = image[..., :3]
    assert not find_people(small)
    background, subject = find(image, "background"), find(image, "the subject")
    assert subject.any() and background.any()
    assert np.array_equal(background, ~subject)


def test_a_small_copy_of_an_rgba_photo_is_its_colours_small_copy() -> None:
    """The finders' working copy of an RGBA photo is scaled whole and its colours taken
    from the copy: the same pixels as scaling its colours alone (as they were), RGB and
    contiguous; a photo already small enough is its colours as they are."""
    from layerpath.kit.imaging import rgb, small_copy

    photo = np.dstack([data.astronaut(), np.full((512, 512), 200, np.uint8)])
    small = small_copy(photo, 300)
    want = cv2.resize(np.ascontiguousarray(rgb(photo)), (300, 300), interpolation=cv2.INTER_AREA)
    assert small.shape == (300, 300, 3) and small.flags.c_contiguous
    assert np.array_equal(small, want)
    assert np.array_equal(small_copy(photo, 600), rgb(photo))
    assert np.array_equal(small_copy(rgb(photo), 300), want)


def hills_under(top: np.ndarray, bottom: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A smooth band fading from the colour `top` to `bottom` over grassy hills with a wavy
    ridge, with film grain: the picture (RGBA) and where the band is."""
    rng = np.random.default_rng(11)
    h, w = 400, 600
    yy, xx = np.mgrid[:h, :w]
    band = yy < 220 + 20 * np.sin(xx / 60.0)
    t = (yy / 240.0)[..., None]
    picture = (1 - t) * np.asarray(top, float) + t * np.asarray(bottom, float)
    picture[~band] = (55, 105, 45) + rng.normal(0, 12, ((~band).sum(), 3))
    picture += rng.normal(0, 1.5, picture.shape)
    return rgba(np.clip(picture, 0, 255).astype(np.uint8)), band


def test_a_clear_dusks_violet_sky_is_found() -> None:
    """(issue 25: a held-out dusk's violet sky, fading to lavender at the ridge, was no
    sky's colour to the finder, which found the lavender strip alone and was refused)"""
    image, band = hills_under((80, 80, 175), (215, 185, 225))
    sky = find(image, "the sky")
    assert (sky & band).sum() / (sky | band).sum() > 0.9


def test_a_purple_wall_above_a_lawn_is_no_sky() -> None:
    """Violet is a dusk's, not every purple's: a purple thing (CIELAB a* 40 and more)
    filling the top of a photo is not taken for its sky."""
    image, band = hills_under((110, 30, 120), (150, 60, 160))
    with pytest.raises(TargetNotFound):
        sky = find(image, "the sky")
        assert sky[band].mean() < 0.1  # (or found nowhere near it)


def test_a_found_sky_reaches_down_into_each_valley_of_a_ridge() -> None:
    """(issue 25: at camera size a found sky stopped a few pixels short of a forest's
    ridge, most in each valley between the tree tops, and a "dramatic look but don't
    touch the sky" changed a pale sliver of sky there: the sky is found on a small copy
    and its edge was never moved onto the photo's own.) A generated 4 MP photo."""
    rng = np.random.default_rng(5)
    h, w = 1600, 2560
    xx = np.arange(w)
    ridge = 700 + 40 * np.abs(np.sin(np.pi * xx / 90.0)) ** 0.5 + 60 * np.sin(xx / 400.0)
    share = np.clip(ridge[None, :] - np.arange(h)[:, None] + 0.5, 0, 1)[..., None]
    t = (np.arange(h)[:, None, None] / 780.0) * np.ones((1, w, 1))
    sky = (1 - t) * np.array([150, 130, 210.0]) + t * np.array([235, 215, 240.0])
    ground = np.array([30, 50, 28.0]) + rng.normal(0, 10, (h, w, 3))
    ground[:, (xx // 37) % 3 == 0] *= 0.6  # (trunks)
    picture = sky * share + ground * (1 - share) + rng.normal(0, 1.2, (h, w, 3))
    found = find(rgba(np.clip(picture, 0, 255).astype(np.uint8)), "the sky")
    truth = share[..., 0] > 0.5
    beside_ridge = truth & dilate(~truth, 7) & ~dilate(~truth, 2)
    assert found[beside_ridge].mean() > 0.99  # (0.978 before)
    assert (found & ~truth).sum() < 0.002 * (~truth).sum()


def test_the_gaps_of_a_lit_meadows_grass_are_no_sunset() -> None:
    """(issue 25: out-of-focus grass under a grey sky, yellow-green, was of a sunset's
    warm colours to the finder, which took a quarter of it into the sky, and "darken
    the sky" darkened the blades along the ridge.) A sunset's yellow is never as green
    as grass (CIELAB a* -12 against -38 here)."""
    rng = np.random.default_rng(8)
    h, w = 500, 750
    yy, xx = np.mgrid[:h, :w]
    sky = yy < 230 + 25 * np.sin(xx / 50.0)
    t = (yy / 260.0)[..., None]
    picture = (1 - t) * np.array([70, 80, 110.0]) + t * np.array([120, 130, 160.0])
    blades = 0.5 + 0.5 * np.sin(xx / 9.0 + rng.uniform(0, 6, (1, w)))
    blades = cv2.GaussianBlur(blades.astype(np.float32), (0, 0), 3)[..., None]
    grass = blades * np.array([150, 205, 50.0]) + (1 - blades) * np.array([95, 150, 30.0])
    picture[~sky] = grass[~sky]
    picture += rng.normal(0, 1.0, picture.shape)
    found = find(rgba(np.clip(picture, 0, 255).astype(np.uint8)), "the sky")
    assert found[~sky].mean() < 0.01  # (0.25 before)
    assert found[sky].mean() > 0.98
