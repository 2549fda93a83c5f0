"""Colours by name and colour spaces: 'deep blue', '#ffcc00' or 'mustard yellow' as RGB
(in the picture's own colour space when it has a profile), sRGB's curve, OKLab and
CIELAB."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
from PIL import ImageColor

from layerpath.errors import BadInput

_HUES = {"blue", "green", "red", "yellow", "orange", "purple", "pink", "brown", "grey", "gray"}


#: what a word before a colour does to it (OKLab): lightness added (L* points), chroma
#: scaled.
#: 'deep blue' is darker and richer than blue, 'pale blue' much lighter and greyer
COLOUR_MODIFIERS = {
    "deep": (-18.0, 1.1), "dark": (-22.0, 1.0), "rich": (-8.0, 1.15),
    "light": (18.0, 0.7), "pale": (26.0, 0.45), "pastel": (22.0, 0.5),
    "bright": (0.0, 1.2), "vivid": (0.0, 1.25), "vibrant": (0.0, 1.25),
    "muted": (0.0, 0.6), "dusty": (4.0, 0.5), "soft": (10.0, 0.7), "dull": (-4.0, 0.55),
}  # fmt: skip


#: what is left of a colour once its '-ish' goes, where that is not the colour's name
_SHADE_STEMS = {"blu": "blue", "redd": "red", "purpl": "purple", "whit": "white",
                "orang": "orange", "beig": "beige", "turquois": "turquoise",
                "mauv": "mauve", "oliv": "olive"}  # fmt: skip


def parse_color(name: str, surveyed: bool = True) -> tuple[int, int, int]:
    """'yellow', 'light blue', 'deep blue', '#ffcc00' -> RGB; a clear error for unknown
    names. A colour's own name first ('dark red', 'light grey' are CSS colours), then a
    modifier (COLOUR_MODIFIERS) applied to the colour after it ('deep blue', 'pale
    yellow'). `surveyed`: the xkcd survey's names count too ('mustard', 'sand': words
    that are also things, which a planner reading a sentence may want to leave out)."""
    cleaned = " ".join(name.strip().lower().replace("-", " ").split())
    words = cleaned.split()
    if words and len(words[-1]) > 5 and words[-1].endswith("ish"):  # 'bluish': a shade of blue
        stem = words[-1][:-3]
        cleaned = " ".join([*words[:-1], _SHADE_STEMS.get(stem, stem)])
    words = cleaned.split()
    if words and _misnamed_in_css(words[-1]) and cleaned in _surveyed_colours():
        # (a shade of such a colour, 'dark brown', is the survey's too: its brown
        # darkened again by the modifier would be near black)
        r, g, b = ImageColor.getrgb(_surveyed_colours()[cleaned])[:3]
        return int(r), int(g), int(b)
    # CSS and X11 names, with a modifier; only then the survey's ('pale blue' is CSS's
    # blue made paler, not the survey's near-white cyan)
    for names in (False, True) if surveyed else (False,):
        known = _named_colour(cleaned, names)
        if known is not None:
            return known
        if len(words) > 1 and words[0] in COLOUR_MODIFIERS:
            rest = " ".join(words[1:])
            base = _named_colour(rest, names) or _modified(rest, names)
            if base is not None:
                return _as_people_say(cleaned, base, _shifted(base, *COLOUR_MODIFIERS[words[0]]))
    raise BadInput(
        f"'{name}' is not a colour layerpath knows. Use a colour name such as "
        "'yellow', 'navy' or 'deep blue', or a hex value such as '#ffcc00'."
    )


def _as_people_say(
    name: str, base: tuple[int, int, int], shifted: tuple[int, int, int]
) -> tuple[int, int, int]:
    """A colour with a modifier, unless the modifier took it to another basic term than
    its base's ('pale yellow' made from CSS's yellow reads as a pale green, 'light orange'
    as a white): then the survey's colour for the whole name where it has one."""
    known = _surveyed_colours().get(name)
    if known is None or colour_term(color_lab(shifted)) == colour_term(color_lab(base)):
        return shifted
    r, g, b = ImageColor.getrgb(known)[:3]
    return int(r), int(g), int(b)


def _modified(name: str, surveyed: bool = True) -> tuple[int, int, int] | None:
    try:
        return parse_color(name, surveyed)
    except BadInput:
        return None


@lru_cache(maxsize=1)
def _surveyed_colours() -> dict[str, str]:
    """The 923 names people gave colours in the xkcd colour survey ('mustard yellow',
    'warm grey', 'terracotta'), name -> hex (tools/data/colour_names.json)."""
    import json
    from importlib import resources

    text = resources.files("layerpath.tools.data").joinpath("colour_names.json").read_text()
    return dict(json.loads(text)["colours"])


def _named_colour(cleaned: str, surveyed: bool = True) -> tuple[int, int, int] | None:
    """A colour's own name (CSS and X11 first, then the names of the xkcd colour survey:
    'mustard', 'copper', 'warm grey'), None when it is none. A basic colour term whose
    CSS colour people call by another term is the survey's colour: CSS's 'brown' is a
    brick red (the survey's people call it 'dull red', 'brownish red')."""
    words = cleaned.split()
    shade = (" ".join(words[:-1]),) if len(words) > 1 and words[-1] in _HUES else ()
    # 'navy blue', 'forest green': the shade names the colour, the hue confirms it
    candidates = (cleaned, cleaned.replace(" ", ""), cleaned.replace(" ", "-"), *shade)
    for candidate in candidates:
        try:
            r, g, b = ImageColor.getrgb(candidate)[:3]
        except ValueError:
            continue
        if candidate in (cleaned, cleaned.replace(" ", "")) and _misnamed_in_css(cleaned):
            r, g, b = ImageColor.getrgb(_surveyed_colours()[cleaned])[:3]
        return int(r), int(g), int(b)
    if not surveyed:
        return None
    names = _surveyed_colours()
    # (whole names only: 'sky orange' is the sky made orange, not a shade called 'sky')
    for candidate in (cleaned, cleaned.replace("gray", "grey")):
        if candidate in names:
            r, g, b = ImageColor.getrgb(names[candidate])[:3]
            return int(r), int(g), int(b)
    return None


#: the basic colour terms (Berlin and Kay's eleven): the words people first call a colour
BASIC_TERMS = (
    "red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "grey", "white",
    "black",
)  # fmt: skip
#: how many of the survey's named colours nearest a colour vote on its term
TERM_VOTERS = 5


@lru_cache(maxsize=1)
def _termed_colours() -> tuple[np.ndarray, tuple[str, ...]]:
    """The survey's colours whose name ends in a basic term ('burnt orange', 'navy
    blue', 'dusty pink', 'pinkish red': the last one is the colour, what comes before
    qualifies it), as CIELAB, and that term."""
    rgbs, terms = [], []
    for name, value in _surveyed_colours().items():
        words = [word for word in name.replace("gray", "grey").split() if word in BASIC_TERMS]
        if words:
            rgbs.append(ImageColor.getrgb(value)[:3])
            terms.append(words[-1])
    return to_lab(np.array([rgbs], np.uint8))[0].astype(np.float64), tuple(terms)


def term_lab(term: str) -> np.ndarray:
    """The colour the survey's people gave a basic term itself ('blue': a royal blue), as
    CIELAB: the colour a name's lightness is measured from ('navy' is far darker)."""
    r, g, b = ImageColor.getrgb(_surveyed_colours()[term])[:3]
    return color_lab((int(r), int(g), int(b)))


#: how far (L*) a colour's lightness lies from its basic term's own colour where the
#: lightness is part of its name: navy (L* 13) against the survey's blue (37), maroon,
#: light blue
NAMED_LIGHTNESS = 15.0


def said_lightness(name: str, lab: np.ndarray) -> tuple[str, float] | None:
    """'dark' or 'light' where a colour's name says so (navy, maroon, deep blue: its
    colour `lab` NAMED_LIGHTNESS or more darker than its basic term's own colour in the
    survey; light blue, lime: that much lighter), and how far (L*) a thing's tone may
    stray from it towards the term's colour and still be nearer the name's: half the
    way (navy's L* 13 against blue's 37: up to 25). None for a basic term itself, or a
    colour whose lightness its name leaves open (crimson, teal)."""
    term = colour_term(lab)
    if name.strip().lower() in BASIC_TERMS or term not in _surveyed_colours():
        return None
    off = float(lab[0]) - float(term_lab(term)[0])
    if abs(off) < NAMED_LIGHTNESS:
        return None
    return ("dark" if off < 0 else "light"), abs(off) / 2.0


@lru_cache(maxsize=64)
def _misnamed_in_css(name: str) -> bool:
    """A CSS colour named by a basic term ('brown', 'light yellow') that people call by
    another term (a brick red, a white), where the survey has the name."""
    words = name.split()
    if not words or words[-1] not in BASIC_TERMS or name not in _surveyed_colours():
        return False
    try:
        r, g, b = ImageColor.getrgb(name.replace(" ", ""))[:3]
    except ValueError:
        return False
    return colour_term(color_lab((int(r), int(g), int(b)))) != words[-1]


def colour_terms(lab: np.ndarray) -> dict[str, float]:
    """The basic colour terms people give a CIELAB colour, each with its share of the
    votes: the xkcd survey's named colours nearest it vote (TERM_VOTERS of them, each by
    its nearness). A teal gets 'blue' and 'green'."""
    colours, terms = _termed_colours()
    distance = np.linalg.norm(colours - np.asarray(lab, np.float64)[:3], axis=1)
    votes: dict[str, float] = {}
    for index in np.argsort(distance)[:TERM_VOTERS]:
        votes[terms[index]] = votes.get(terms[index], 0.0) + 1.0 / (1.0 + distance[index])
    total = sum(votes.values())
    return {term: vote / total for term, vote in votes.items()}


#: L* under which a thing's part is black: a recolour (a retoucher's too) keeps it black,
#: as it can carry no colour to speak of
BLACK = 20.0
#: the share of a thing left black past which it is mostly black: then it must take the
#: new colour, black or not
MOSTLY_BLACK = 0.4


def left_black(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Where a recoloured thing's part was black and stayed so (`before`, `after`: the
    same pixels' L*, any shape)."""
    return (before < BLACK) & (after < BLACK + 5)


def colour_read_on(before: np.ndarray, after: np.ndarray, target: np.ndarray) -> np.ndarray | None:
    """The recoloured pixels (`after`, CIELAB, N x 3; `before`: the same pixels before)
    a new colour `target` (CIELAB) is read on: without the black parts left black, unless
    the thing is mostly black or the colour is dark itself (navy is near black). None
    where the colour is a grey (its name says nothing of a hue to read) or nothing is
    left to read."""
    black = left_black(before[:, 0], after[:, 0])
    if black.mean() < MOSTLY_BLACK and float(target[0]) >= BLACK + 15:
        after = after[~black]
    if float(np.hypot(target[1], target[2])) < 12 or len(after) == 0:
        return None
    return after


def colour_term(lab: np.ndarray) -> str:
    """The basic colour term people give a CIELAB colour first: 'brown' for a dark
    orange, 'pink' for a light red, 'red' for CSS's 'brown'."""
    votes = colour_terms(lab)
    return max(votes, key=lambda term: votes[term])


def _shifted(colour: tuple[int, int, int], lightness: float, chroma: float) -> tuple[int, int, int]:
    """The colour with `lightness` (in L* points) added and its chroma scaled by
    `chroma`, in OKLab (where a blue made paler stays blue, as it does not in CIELAB),
    brought back into sRGB's gamut by lowering the chroma (the hue kept)."""
    lab = oklab(srgb_decoded(np.array(colour, np.float64) / 255.0))
    target = np.array([np.clip(lab[0] + lightness / 100.0, 0.05, 0.98), *(lab[1:] * chroma)])
    for _ in range(60):
        back = from_oklab(target)
        if (back >= -1e-4).all() and (back <= 1 + 1e-4).all():
            break
        target[1:] *= 0.95
    r, g, b = (int(round(float(v) * 255)) for v in srgb_encoded(back))
    return r, g, b


def srgb_decoded(srgb: np.ndarray) -> np.ndarray:
    """sRGB values (0..1) as linear light."""
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def srgb_encoded(linear: np.ndarray) -> np.ndarray:
    """Linear light (0..1) as sRGB values."""
    linear = np.clip(linear, 0.0, 1.0)
    return np.where(linear <= 0.0031308, linear * 12.92, 1.055 * linear ** (1 / 2.4) - 0.055)


#: Björn Ottosson's OKLab: linear sRGB to LMS, and LMS (cube-rooted) to Lab
_OK_LMS = np.array([[0.4122214708, 0.5363325363, 0.0514459929],
                    [0.2119034982, 0.6806995451, 0.1073969566],
                    [0.0883024619, 0.2817188376, 0.6299787005]])  # fmt: skip
_OK_LAB = np.array([[0.2104542553, 0.7936177850, -0.0040720468],
                    [1.9779984951, -2.4285922050, 0.4505937099],
                    [0.0259040371, 0.7827717662, -0.8086757660]])  # fmt: skip


def oklab(linear: np.ndarray) -> np.ndarray:
    """Linear sRGB (..., 3) to OKLab (L 0..1): a space where a hue keeps its look as its
    lightness and chroma change (a paler blue stays blue)."""
    return np.cbrt(linear @ _OK_LMS.T) @ _OK_LAB.T


def from_oklab(lab: np.ndarray) -> np.ndarray:
    """OKLab (..., 3) to linear sRGB, unclipped (outside 0..1 when out of gamut)."""
    return ((lab @ np.linalg.inv(_OK_LAB).T) ** 3) @ np.linalg.inv(_OK_LMS).T


#: what parses a colour's name into the picture's own RGB values
ColourNames = Callable[[str], tuple[int, int, int]]


def colours_in(profile: bytes | None) -> ColourNames:
    """parse_color for a picture in the colour space `profile` describes: a named colour
    (an sRGB value) converted into that space, so 'yellow' looks yellow in an Adobe RGB
    or Display P3 photo, as a colour picker's colour does in Krita or Photoshop. The
    picture's own values are never converted. parse_color itself for sRGB, no profile
    or one LittleCMS cannot read."""
    transform = _from_srgb(profile) if profile else None
    if transform is None:
        return parse_color

    def named(name: str) -> tuple[int, int, int]:
        from PIL import Image, ImageCms

        swatch = Image.new("RGB", (1, 1), parse_color(name))
        r, g, b = ImageCms.applyTransform(swatch, transform).getpixel((0, 0))  # type: ignore[union-attr,misc]
        return int(r), int(g), int(b)

    return named


@lru_cache(maxsize=8)
def _from_srgb(profile: bytes) -> Any:
    """LittleCMS's transform from sRGB into `profile` (relative colorimetric), or None
    where that changes no colour by more than a level (the profile is sRGB's) or the
    profile cannot be read."""
    import io

    from PIL import Image, ImageCms

    try:
        target = ImageCms.ImageCmsProfile(io.BytesIO(profile))
        transform = ImageCms.buildTransform(
            ImageCms.createProfile("sRGB"),
            target,
            "RGB",
            "RGB",
            renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC,
        )
    except (ImageCms.PyCMSError, OSError, ValueError, TypeError):
        return None
    probe = np.array([[[255, 255, 0], [0, 128, 128], [200, 30, 40], [90, 90, 90]]], np.uint8)
    moved = np.asarray(ImageCms.applyTransform(Image.fromarray(probe), transform))
    return transform if np.abs(moved.astype(int) - probe).max() > 1 else None


def to_lab(pixels_rgb: np.ndarray) -> np.ndarray:
    """OpenCV 8-bit Lab as float: L in 0..100, a/b centred on 0."""
    lab = np.asarray(
        cv2.cvtColor(np.ascontiguousarray(pixels_rgb, dtype=np.uint8), cv2.COLOR_RGB2LAB),
        dtype=np.float32,
    )
    lab[..., 0] *= 100.0 / 255.0
    lab[..., 1:] -= 128.0
    return lab


def from_lab(lab: np.ndarray) -> np.ndarray:
    out = lab.astype(np.float32).copy()
    out[..., 0] *= 255.0 / 100.0
    out[..., 1:] += 128.0
    return cv2.cvtColor(np.clip(out, 0, 255).astype(np.uint8), cv2.COLOR_LAB2RGB)


#: sRGB (D65) to XYZ, and OpenCV's white point, so float Lab matches its 8-bit Lab
_RGB_TO_XYZ = np.array(
    [
        [0.412453, 0.357580, 0.180423],
        [0.212671, 0.715160, 0.072169],
        [0.019334, 0.119193, 0.950227],
    ],
    np.float64,
)
_WHITE = np.array([0.950456, 1.0, 1.088754])


def lab_exact(rgb01: np.ndarray) -> np.ndarray:
    """sRGB in 0..1 (float) to Lab (L 0..100, a/b centred) in float64, exactly: OpenCV's
    float conversion goes through 10-bit tables, too coarse for a 16-bit gradient."""
    return _lab_of_linear(srgb_decoded(rgb01))


def lab_exact_8bit(rgb8: np.ndarray) -> np.ndarray:
    """lab_exact of 8-bit RGB (levels 0..255) within 2e-4 (every one of the 16.7 million
    colours: tested), in float32, by OpenCV: each level's linear light from a table,
    CIE XYZ over the white point and Lab from its cube roots each one pass over the
    pixels (a fifth of numpy's float64 time: the checks read two a picture). Any other
    depth goes the exact way."""
    if rgb8.dtype != np.uint8:
        return lab_exact(np.asarray(rgb8, np.float64) / 255.0)
    shape = rgb8.shape
    if rgb8.size == 0:
        return np.zeros(shape, np.float32)
    pixels = np.ascontiguousarray(rgb8.reshape(-1, 1, 3) if rgb8.ndim < 3 else rgb8)
    linear = cv2.LUT(pixels, _level_lut())
    xyz = cv2.transform(linear, _XYZ_OVER_WHITE)
    f = cv2.pow(xyz, 1.0 / 3.0, dst=linear)  # (two arrays, reused: fresh ones cost more)
    dark = xyz <= 0.008856
    np.copyto(f, cv2.addWeighted(xyz, 7.787, xyz, 0.0, 16.0 / 116.0, dst=xyz), where=dark)
    # L* = 116 fy - 16 (the dark end's 903.3 Y within 1e-4), a* = 500 (fx - fy), b* = 200 (fy - fz)
    return cv2.transform(f, _LAB_OF_F, dst=xyz).reshape(shape)


@lru_cache(maxsize=1)
def _level_lut() -> np.ndarray:
    """Each 8-bit level's linear light, for OpenCV's LUT on three channels."""
    return np.repeat(_linear_levels().astype(np.float32)[None, :, None], 3, axis=2)


_XYZ_OVER_WHITE = (_RGB_TO_XYZ / _WHITE[:, None]).astype(np.float32)
_LAB_OF_F = np.array([[0, 116, 0, -16], [500, -500, 0, 0], [0, 200, -200, 0]], np.float32)


@lru_cache(maxsize=1)
def _linear_levels() -> np.ndarray:
    return srgb_decoded(np.arange(256, dtype=np.float64) / 255.0)


def _lab_of_linear(linear: np.ndarray) -> np.ndarray:
    xyz = linear @ _RGB_TO_XYZ.T / _WHITE
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16.0 / 116.0)
    lightness = np.where(xyz[..., 1] > 0.008856, 116.0 * f[..., 1] - 16.0, 903.3 * xyz[..., 1])
    return np.stack(
        [lightness, 500.0 * (f[..., 0] - f[..., 1]), 200.0 * (f[..., 1] - f[..., 2])], -1
    )


def rgb_exact(lab: np.ndarray) -> np.ndarray:
    """Lab (as lab_exact gives it) back to sRGB in 0..1, clipped to the gamut."""
    fy = (lab[..., 0] + 16.0) / 116.0
    f = np.stack([fy + lab[..., 1] / 500.0, fy, fy - lab[..., 2] / 200.0], -1)
    xyz = np.where(f > 0.206893, f**3, (f - 16.0 / 116.0) / 7.787) * _WHITE
    linear = np.clip(xyz @ np.linalg.inv(_RGB_TO_XYZ).T, 0.0, 1.0)
    return np.where(linear <= 0.0031308, linear * 12.92, 1.055 * linear ** (1 / 2.4) - 0.055)


def color_lab(color: tuple[int, int, int]) -> np.ndarray:
    return to_lab(np.array([[color]], dtype=np.uint8))[0, 0]


#: the hue 'bluer', 'greener', ... mean: the colour of a sky, of grass, of a rose; not
#: sRGB's primaries (pure blue is violet-leaning, pure green acid)
HUES = {
    "blue": (40, 120, 230), "green": (50, 160, 60), "red": (210, 35, 35),
    "yellow": (240, 200, 30), "orange": (240, 130, 25), "purple": (130, 50, 170),
    "pink": (240, 105, 165), "teal": (0, 140, 140), "cyan": (0, 180, 220),
    "magenta": (200, 0, 160), "gold": (220, 170, 30),
}  # fmt: skip


def hue_direction(name: str) -> np.ndarray:
    """The unit (a*, b*) direction of a named hue (HUES, else the colour's own)."""
    colour = HUES.get(name.lower()) or parse_color(name)
    lab = lab_exact(np.array(colour, np.float64)[None, None] / 255.0)[0, 0]
    return lab[1:] / max(1e-6, float(np.hypot(*lab[1:])))
