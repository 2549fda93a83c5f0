"""The labelled check set: known-good and known-bad results of each image edit, made in
code from real photographs (benchmarks/photos.py), to measure the quality checks.

For each photo, things are put in (so the truth is known) and results are made from the
truth: good ones (the truth itself, the truth with a little noise, blur or a shift of a
few pixels, a recolour that keeps the texture) and bad ones of the kinds real tools
produce (a smear, streaks, a repeated patch, a ghost of the outline, the object left in
part, a foreign patch; a flat recolour, colour leaking past the object, half the object
recoloured, the wrong hue; a matte with holes, cut-off ears, a block of background kept,
a frame-shaped cut-out; old text half erased, new text over the sign's frame, the frame
erased, a misspelt word). OpenCV's Telea and Navier-Stokes fills, and patch_fill's own
results, are added as they come and labelled by their distance to the truth: a smooth
fill of a plain sky is good, of gravel bad; a patch fill that pieces a cat's fur together
from elsewhere is wrong however plausible it looks. A generated bad result that does not
differ visibly from the truth is left out: labels must be true.

Cases come one at a time (a generator): the photos are camera-sized.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from layerpath.benchmarks.photos import (
    SIGN_FONTS,
    WORDS,
    Photo,
    free_spot,
    make_object,
    make_subject,
    place,
    place_in_perspective,
    texture_sources,
)
from layerpath.engine.judge.checks.removal import fill_distance, judged_fill
from layerpath.kit.colours import (
    color_lab,
    colour_read_on,
    colour_term,
    colour_terms,
    parse_color,
    said_lightness,
    to_lab,
)
from layerpath.kit.fonts import load_font
from layerpath.kit.imaging import dilate, erode, mask_box
from layerpath.kit.regions import grow_box
from layerpath.kit.types import Box
from layerpath.tools.recolor import recolor_lab

CHECKERS = ("removal", "recolour", "cut-out", "text replacement", "text removal")
#: target colours for recolour cases (CSS names a photographer types)
COLOURS = ("teal", "yellow", "navy", "crimson", "orange", "purple", "green", "pink", "brown")


@dataclass
class CheckCase:
    """One result to judge: the checker it is for, what it shows (`family`), whether a
    photographer would accept it, and what the checker is given."""

    checker: str
    photo: str
    family: str
    good: bool
    before: np.ndarray  # RGBA
    after: np.ndarray  # RGBA
    mask: np.ndarray | None = None
    to: str | None = None
    sign: dict[str, Any] = field(default_factory=dict)  # text cases: words and boxes
    #: a removal patch_fill made: the parameters it made it with, so that it is judged
    #: as a run judges it, with the same fill tried on ground nearby (a made result
    #: has none: nothing could make its trial)
    params: Mapping[str, Any] | None = None


def rgba(rgb: np.ndarray, alpha: np.ndarray | None = None) -> np.ndarray:
    a = np.full(rgb.shape[:2], 255, np.uint8) if alpha is None else alpha
    return np.dstack([rgb, a]).astype(np.uint8)


def _crop_around(box: Box, shape: tuple[int, ...], margin: int) -> Box:
    return grow_box(box, margin, shape)


def _cut(array: np.ndarray, box: Box) -> np.ndarray:
    return np.ascontiguousarray(array[box.y0 : box.y1, box.x0 : box.x1])


# --- measuring against the truth ---------------------------------------------------------


def _lab(rgb: np.ndarray) -> np.ndarray:
    return to_lab(rgb)


# --- removal -------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _patch_fill() -> Any:
    from layerpath.tools.registry import Registry

    return Registry.from_catalogue().get("patch_fill")


def patch_fill(picture: np.ndarray, hole: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
    """patch_fill's result for a hole in a picture (RGBA), with these parameters, as a
    run calls it."""
    from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext

    result = _patch_fill().run(
        ToolContext(SubtaskKind.OBJECT_REMOVAL, "object"),
        {ArtifactKind.IMAGE: picture, ArtifactKind.MASK: hole},
        params,
    )
    return np.asarray(result.outputs[ArtifactKind.IMAGE])


def _patch_fills(
    before: np.ndarray, hole: np.ndarray
) -> Iterator[tuple[np.ndarray, Mapping[str, Any]]]:
    """patch_fill's results for the hole, with its first two parameter sets (what the
    engine tries first), and those parameters: the failures of a real tool, not only
    the made ones."""
    for params in _patch_fill().spec.param_schedule()[:2]:
        yield np.ascontiguousarray(patch_fill(rgba(before), hole, params)[..., :3]), params


def removal_cases(photo: Photo, rng: np.random.Generator) -> Iterator[CheckCase]:
    h, w = photo.rgb.shape[:2]
    side = int(min(h, w) * rng.uniform(0.12, 0.22))
    size = (side, int(side * rng.uniform(0.7, 1.3)))
    sources = texture_sources()
    spot = free_spot(rng, photo.rgb.shape, size)
    if spot is None:
        return
    placed = place(
        photo.rgb, make_object(rng, sources[int(rng.integers(len(sources)))], size), spot
    )
    view = _crop_around(placed.box, photo.rgb.shape, max(128, side))
    before, truth = _cut(placed.image, view), _cut(placed.truth, view)
    mask = _cut(placed.mask, view)
    hole = mask
    case = lambda family, good, after, params=None: CheckCase(  # noqa: E731
        "removal", photo.name, family, good, rgba(before), rgba(after), mask, params=params
    )
    yield case("the truth", True, truth)
    noisy = truth.astype(np.float32) + rng.normal(0, 1.5, truth.shape) * hole[..., None]
    yield case("truth with noise", True, np.clip(noisy, 0, 255).astype(np.uint8))
    for dy, dx in ((2, -3), (-4, 1)):
        shifted = truth.copy()
        moved = np.roll(truth, (dy, dx), axis=(0, 1))
        shifted[hole] = moved[hole]
        if judged_fill(shifted, truth, hole):
            yield case("truth shifted a few pixels", True, shifted)
    drift = _lab(truth)
    xx = np.mgrid[: hole.shape[0], : hole.shape[1]][1]
    drift[..., 0] += 1.5 * np.sin(xx / max(8.0, hole.shape[1] / 3.0))
    yield case(
        "truth with a slight brightness drift", True, _inside(truth, _rgb_of_lab(drift), hole)
    )
    grown = dilate(hole, 3)
    for method, name in ((cv2.INPAINT_TELEA, "Telea fill"), (cv2.INPAINT_NS, "Navier-Stokes fill")):
        filled = cv2.inpaint(before, grown.astype(np.uint8) * 255, 5, method)
        verdict = judged_fill(filled, truth, hole)
        if verdict is not None:
            yield case(f"{name} ({'plain ground' if verdict else 'smear'})", verdict, filled)
    for filled, params in _patch_fills(before, hole):  # the removal tool's own results
        verdict = judged_fill(filled, truth, hole)
        if verdict is not None:
            family = f"patch_fill ({'right' if verdict else 'wrong'} by the truth)"
            yield case(family, verdict, filled, params)
    bad: list[tuple[str, np.ndarray]] = []
    blurred = truth.copy()
    blurred[hole] = cv2.GaussianBlur(truth, (0, 0), max(3.0, side * 0.04))[hole]
    bad.append(("smear (blurred)", blurred))
    bad.append(("repeated patch", _repeated_patch(before, hole, rng)))
    ghost = _lab(truth)
    ghost[..., 0] += rng.choice([-1, 1]) * rng.uniform(14, 22)
    bad.append(("ghost of the outline", _inside(truth, _rgb_of_lab(ghost), hole)))
    leftover = truth.copy()
    ys, xs = np.nonzero(hole)
    half = (xs - xs.mean()) * np.cos(rng.uniform(0, np.pi)) > 0
    leftover[ys[half], xs[half]] = before[ys[half], xs[half]]
    bad.append(("object left in part", leftover))
    foreign = _foreign_patch(photo.rgb, truth, hole, view, rng)
    if foreign is not None and fill_distance(foreign, truth, hole)[0] > 12.0:
        bad.append(("foreign patch", foreign))  # (only where it clearly differs: grass
        # from elsewhere in a lawn is a good fill)
    bad.append(("streaks", _streaks(before, hole, rng)))
    for family, after in bad:
        if judged_fill(after, truth, hole, sigma=2.0) is False:
            yield case(family, False, after)


def _inside(base: np.ndarray, changed: np.ndarray, region: np.ndarray) -> np.ndarray:
    """`base` with `changed`'s pixels inside the region only."""
    out = base.copy()
    out[region] = changed[region]
    return out


def _rgb_of_lab(lab: np.ndarray) -> np.ndarray:
    from layerpath.kit.colours import from_lab

    return from_lab(lab)


def _repeated_patch(before: np.ndarray, hole: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The hole tiled with one small patch taken from beside it."""
    box = mask_box(hole)
    assert box is not None
    side = max(8, min(box.width, box.height) // 4)
    ring = dilate(hole, side * 2) & ~dilate(hole, 2)
    ys, xs = np.nonzero(ring[:-side, :-side])
    pick = int(rng.integers(len(ys)))
    patch = before[ys[pick] : ys[pick] + side, xs[pick] : xs[pick] + side]
    reps = (before.shape[0] // side + 1, before.shape[1] // side + 1, 1)
    tiled = np.tile(patch, reps)[: before.shape[0], : before.shape[1]]
    out = before.copy()
    out[hole] = tiled[hole]
    return out


def _foreign_patch(
    photo: np.ndarray, truth: np.ndarray, hole: np.ndarray, view: Box, rng: np.random.Generator
) -> np.ndarray | None:
    """The hole filled with the photo from somewhere far away."""
    h, w = photo.shape[:2]
    vh, vw = hole.shape
    for _ in range(20):
        y, x = int(rng.integers(0, max(1, h - vh))), int(rng.integers(0, max(1, w - vw)))
        if abs(y - view.y0) < vh and abs(x - view.x0) < vw:
            continue
        elsewhere = photo[y : y + vh, x : x + vw]
        if elsewhere.shape[:2] != hole.shape:
            continue
        out = truth.copy()
        out[hole] = elsewhere[hole]
        return out
    return None


def _streaks(before: np.ndarray, hole: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The hole filled by dragging the pixels at one side of it across (directional
    streaks, as a diffusion fill leaves on a textured ground)."""
    out = before.copy()
    vertical = rng.random() < 0.5
    source = out.transpose(1, 0, 2) if vertical else out
    mask = hole.T if vertical else hole
    for row in range(mask.shape[0]):
        cols = np.flatnonzero(mask[row])
        if len(cols):
            edge = max(0, cols[0] - 1)
            source[row, cols] = source[row, edge]
    return out


# --- recolour ------------------------------------------------------------------------------


def _hue(rgb: tuple[int, int, int] | np.ndarray) -> float:
    lab = to_lab(np.array([[rgb]], np.uint8))[0, 0]
    return float(np.degrees(np.arctan2(lab[2], lab[1])) % 360)


#: how far (L*) past the point where a thing's tone is as near its term's lightness as
#: the name's (navy's L* 13, blue's 37: 25) it is half right, not wrong: a royal blue is
#: no navy
NAMED_OFF = 10.0


def named_as(
    before: np.ndarray, pixels: np.ndarray, target: np.ndarray, colour: str
) -> tuple[str, float] | None:
    """What people would call the thing's new colour (`pixels`, CIELAB; `before`: the
    same pixels before), when not the colour asked (the xkcd survey's names,
    kit/colours.py): its middle tone read as another basic term (a salmon for red, an
    ochre for orange), or, where the asked name says light or dark, that tone nearer its
    term's lightness than the name's (a light colour: its lit half's). Black parts left
    black are left out, unless the thing is mostly black or the colour itself dark. The
    reason and the most the result scores; None when it reads as asked, or the colour is
    a grey."""
    read_on = colour_read_on(before, pixels, target)
    if read_on is None:
        return None
    pixels = read_on
    middle = np.median(pixels, axis=0)
    read = colour_term(middle)
    if read not in colour_terms(target):  # (a teal may read as blue or as green)
        return f"reads as {read}", 0.0
    said = said_lightness(colour, target)
    if said is None:
        return None
    dark, half = said[0] == "dark", said[1]
    # (a light colour by its lit half: shading keeps the rest of a thing darker)
    lit = pixels[pixels[:, 0] >= middle[0]][:, 0].mean()
    tone = float(middle[0]) if dark else float(lit)
    off = (tone - float(target[0])) * (1.0 if dark else -1.0)
    if off <= half:
        return None
    return f"{off:.0f} L* short of {colour}'s lightness", (0.5 if off <= half + NAMED_OFF else 0.0)


def recolour_cases(photo: Photo, rng: np.random.Generator) -> Iterator[CheckCase]:
    h, w = photo.rgb.shape[:2]
    side = int(min(h, w) * rng.uniform(0.15, 0.25))
    size = (side, int(side * rng.uniform(0.7, 1.3)))
    sources = texture_sources()
    spot = free_spot(rng, photo.rgb.shape, size)
    if spot is None:
        return
    placed = place(
        photo.rgb, make_object(rng, sources[int(rng.integers(len(sources)))], size), spot
    )
    view = _crop_around(placed.box, photo.rgb.shape, max(96, side // 2))
    before = _cut(placed.image, view)
    mask = _cut(placed.mask, view)
    own = _hue(before[mask].mean(axis=0).astype(np.uint8))
    far = [c for c in COLOURS if abs((_hue(parse_color(c)) - own + 180) % 360 - 180) > 70]
    colour = str(rng.choice(far or COLOURS))
    target = parse_color(colour)

    def recoloured(region: np.ndarray, lightness: float = 0.6, share: float = 1.0) -> np.ndarray:
        new = recolor_lab(before, region, target, lightness).astype(np.float32)
        soft = cv2.GaussianBlur(region.astype(np.float32), (5, 5), 0) * region * share
        return np.clip(before * (1 - soft[..., None]) + new * soft[..., None], 0, 255).astype(
            np.uint8
        )

    case = lambda family, good, after, used=mask: CheckCase(  # noqa: E731
        "recolour", photo.name, family, good, rgba(before), rgba(after), used, colour
    )
    core = erode(mask, 2)
    for family, lightness in (("texture kept", 0.6), ("texture kept, lighter", 1.0)):
        after = recoloured(mask, lightness=lightness)
        read = named_as(to_lab(before)[core], to_lab(after)[core], color_lab(target), colour)
        if read is None:
            yield case(family, True, after)
        elif read[1] == 0.0:  # (half right is too close to call)
            yield case(f"{family}, {read[0]}", False, after)
    flat = before.copy()
    flat[mask] = target
    yield case("flat paint (texture lost)", False, flat)
    smooth = recoloured(mask)
    smooth[mask] = cv2.GaussianBlur(smooth, (0, 0), max(3.0, side * 0.03))[mask]
    yield case("texture blurred away", False, smooth)
    leak = dilate(mask, max(6, side // 8))
    yield case("colour leaking past the object", False, recoloured(leak), leak)
    ys, xs = np.nonzero(mask)
    half = np.zeros_like(mask)
    keep = (xs - xs.mean()) * np.cos(rng.uniform(0, np.pi)) + (ys - ys.mean()) * 0.3 > 0
    half[ys[keep], xs[keep]] = True
    yield case("half the object recoloured", False, recoloured(half))
    wrong = [
        c for c in COLOURS if abs((_hue(parse_color(c)) - _hue(target) + 180) % 360 - 180) > 80
    ]
    other = parse_color(str(rng.choice(wrong)))
    new = recolor_lab(before, mask, other, 0.6)
    off = before.copy()
    off[mask] = new[mask]
    yield case("the wrong colour", False, off)
    yield case("barely changed", False, recoloured(mask, share=0.2))


# --- background removal --------------------------------------------------------------------


def cutout_cases(photo: Photo, rng: np.random.Generator) -> Iterator[CheckCase]:
    h, w = photo.rgb.shape[:2]
    side = int(min(h, w) * rng.uniform(0.4, 0.6))
    size = (side, int(side * rng.uniform(0.9, 1.2)))
    if size[1] >= h * 0.9:
        size = (side, int(h * 0.85))
    sources = texture_sources()
    spot = free_spot(rng, photo.rgb.shape, size)
    if spot is None:
        return
    subject = make_subject(rng, sources[int(rng.integers(len(sources)))], size)
    placed = place(photo.rgb, subject, spot)
    before = rgba(placed.image)
    truth = placed.alpha
    box = placed.box

    def matte(alpha: np.ndarray) -> np.ndarray:
        return rgba(placed.image, np.clip(np.rint(alpha * 255), 0, 255).astype(np.uint8))

    case = lambda family, good, alpha: CheckCase(  # noqa: E731
        "cut-out", photo.name, family, good, before, matte(alpha)
    )
    yield case("the subject's own edge", True, truth)
    yield case("edge a pixel inside", True, cv2.erode(truth, np.ones((3, 3), np.uint8)))
    yield case("edge a pixel outside", True, cv2.dilate(truth, np.ones((3, 3), np.uint8)))
    yield case("edge feathered", True, cv2.GaussianBlur(truth, (0, 0), 1.0))
    holes = truth.copy()
    inner = erode(truth > 0.5, max(4, side // 10))
    ys, xs = np.nonzero(inner)
    for _ in range(4):
        pick = int(rng.integers(len(ys)))
        cv2.circle(holes, (int(xs[pick]), int(ys[pick])), max(4, side // 14), 0.0, -1)
    yield case("holes through the subject", False, holes)
    ears = truth.copy()
    ears[: box.y0 + int(size[1] * 0.28)] = 0.0
    yield case("ears cut off", False, ears)
    half = truth.copy()
    half[box.y0 + size[1] // 2 :] = 0.0
    yield case("half the subject cut away", False, half)
    block = truth.copy()
    bw, bh = max(8, side // 2), max(8, side // 3)
    corner = free_spot(rng, photo.rgb.shape, (bw, bh), [box])
    if corner is not None:
        block[corner[1] : corner[1] + bh, corner[0] : corner[0] + bw] = 1.0
        yield case("a block of background kept", False, block)
    frame = np.zeros_like(truth)
    cv2.ellipse(frame, (w // 2, h // 2), (int(w * 0.45), int(h * 0.45)), 0, 0, 360, 1.0, -1)
    yield case("a frame-shaped guess", False, frame)


# --- text ----------------------------------------------------------------------------------


def _draw_word(
    flat: np.ndarray, word: str, font: str, height: float, centre: tuple[float, float]
) -> tuple[np.ndarray, Box]:
    """The word drawn in dark ink centred on `centre` of the flat sign (its ink box)."""
    from PIL import Image, ImageDraw

    face = load_font(max(6, int(height)), font)
    x0, y0, x1, y1 = face.getbbox(word)
    left, top = centre[0] - (x0 + x1) / 2, centre[1] - (y0 + y1) / 2
    picture = Image.fromarray(flat)
    ImageDraw.Draw(picture).text((left, top), word, fill=(30, 30, 30), font=face)
    ink = Box(int(left + x0), int(top + y0), int(np.ceil(left + x1)), int(np.ceil(top + y1)))
    return np.asarray(picture).copy(), ink


def text_cases(photo: Photo, rng: np.random.Generator) -> Iterator[CheckCase]:
    h, w = photo.rgb.shape[:2]
    font = str(rng.choice(SIGN_FONTS))
    old, new = (str(s) for s in rng.choice(WORDS, 2, replace=False))
    height = int(min(h, w) * rng.uniform(0.12, 0.18))
    width = int(height * (0.6 * max(len(old), len(new)) + 1.0))
    if width > w * 0.8:
        return
    panel, frame = (242, 238, 228), (70, 55, 40)
    line = max(2, height // 16)
    blank = np.zeros((height, width, 3), np.uint8)
    blank[:] = panel
    cv2.rectangle(blank, (0, 0), (width - 1, height - 1), frame, line)
    centre = (width / 2, height / 2)
    spot = free_spot(rng, photo.rgb.shape, (width, height))
    if spot is None:
        return
    letters = height * 0.5
    with_old, _ = _draw_word(blank, old, font, letters, centre)
    with_new, _ = _draw_word(blank, new, font, letters, centre)
    warp_rng = np.random.default_rng(int(rng.integers(1 << 30)))
    placed, homography = place_in_perspective(photo.rgb, with_old, spot, warp_rng)
    size = (w, h)

    def shown(flat: np.ndarray) -> np.ndarray:
        warped = cv2.warpPerspective(flat, homography, size, flags=cv2.INTER_CUBIC)
        a = placed.alpha[..., None]
        return np.clip(placed.truth * (1 - a) + warped * a, 0, 255).astype(np.uint8)

    view = _crop_around(placed.box, photo.rgb.shape, max(96, height))
    before = _cut(placed.image, view)
    sign = {"old": old, "new": new}

    def case(checker: str, family: str, good: bool, flat: np.ndarray) -> CheckCase:
        return CheckCase(
            checker,
            photo.name,
            family,
            good,
            rgba(before),
            rgba(_cut(shown(flat), view)),
            None,
            new,
            sign,
        )

    yield case("text replacement", "the new word, cleanly", True, with_new)
    smaller, _ = _draw_word(blank, new, font, letters * 0.85, centre)
    yield case("text replacement", "the new word, a little smaller", True, smaller)
    half = with_old.copy()
    remains = (with_old.astype(int) - blank.astype(int)).any(axis=2)
    cols = np.arange(width)
    stripes = (cols // max(2, width // 24)) % 2 == 0
    erase = remains & stripes[None, :]
    half[erase] = panel
    half_new, _ = _draw_word(half, new, font, letters * 0.8, (centre[0], centre[1]))
    yield case("text replacement", "old text half erased under the new", False, half_new)
    big, _ = _draw_word(blank, new, font, height * 1.05, centre)
    yield case("text replacement", "new text over the sign's frame", False, big)
    broken = with_new.copy()
    gap = slice(int(height * 0.15), int(height * 0.85))
    broken[gap, : line + 1] = panel
    yield case("text replacement", "the sign's frame erased in part", False, broken)
    typo = new[:-1] + ("X" if new[-1] != "X" else "Y")
    misspelt, _ = _draw_word(blank, typo, font, letters, centre)
    yield case("text replacement", "a misspelt word", False, misspelt)
    yield case("text removal", "the panel clean", True, blank)
    yield case("text removal", "old text half erased", False, half)
    frameless = blank.copy()
    frameless[gap, : line + 1] = panel
    yield case("text removal", "the sign's frame erased in part", False, frameless)
    yield case("text removal", "nothing erased", False, with_old)


GENERATORS = {
    "removal": removal_cases,
    "recolour": recolour_cases,
    "cut-out": cutout_cases,
    "text": text_cases,
}


def check_cases(
    photos: Sequence[Photo],
    seed: int = 0,
    rounds: int = 1,
    kinds: Sequence[str] = tuple(GENERATORS),
) -> Iterator[CheckCase]:
    """Every case for every photo, `rounds` placements per photo and kind."""
    for index, photo in enumerate(photos):
        for kind in kinds:
            for round_ in range(rounds):
                rng = np.random.default_rng([seed, index, round_, list(GENERATORS).index(kind)])
                yield from GENERATORS[kind](photo, rng)
