"""Did the object take the colour, all of it, keeping its texture, and nothing else?

Measured inside the mask (its core, a few pixels in from the edge) on a copy of the
window scaled to at most ANALYSIS_PIXELS: the colour reached (the mean's hue and chroma,
or greyness for a neutral colour, and what people would call it: a salmon is no red, a
royal blue no navy), how much of the object reached it (half an object
recoloured fails), whether its shading and texture survived (flat paint fails; a darker
colour's contrast is weighed against its lightness), and how much of the photo's
background the mask took in along its edge took the colour (leaking past the object onto
the wall behind it; a loose mask whose ground was left as it was is no leak)."""

from __future__ import annotations

import cv2
import numpy as np

from layerpath.engine.judge.checks.removal import ring_and_window, untouched_outside
from layerpath.engine.judge.checks.texture import bands, energy, grain, grey, lab_of
from layerpath.engine.judge.checks.verdict import Verdict, verdict
from layerpath.kit.colours import (
    ColourNames,
    color_lab,
    colour_read_on,
    colour_term,
    colour_terms,
    parse_color,
    said_lightness,
)
from layerpath.kit.imaging import dilate, erode, mean_near
from layerpath.kit.regions import analysis_copies

ANALYSIS_PIXELS = 1_000_000


def color_match(lab_pixels: np.ndarray, target_rgb: tuple[int, int, int]) -> float:
    """How well the pixels' mean colour reaches the target: hue angle and chroma for a
    chromatic target (chroma relative, since gamut clipping caps saturated targets),
    low chroma for a neutral one; lightness may differ by a shading margin."""
    target = color_lab(target_rgb)
    mean = lab_pixels.mean(axis=0)
    chroma, target_chroma = float(np.hypot(mean[1], mean[2])), float(np.hypot(target[1], target[2]))
    if target_chroma < 12:
        hue_score = float(np.exp(-max(0.0, chroma - 10.0) / 15.0))
    else:
        angle = np.degrees(np.arctan2(mean[2], mean[1]) - np.arctan2(target[2], target[1]))
        angle = (angle + 180.0) % 360.0 - 180.0
        hue_score = float(np.exp(-((angle / 25.0) ** 2)) * min(1.0, chroma / (0.6 * target_chroma)))
    lightness = abs(float(mean[0]) - float(target[0]))
    return hue_score * float(np.exp(-max(0.0, lightness - 25.0) / 40.0))


def reached(lab_pixels: np.ndarray, target_rgb: tuple[int, int, int]) -> np.ndarray:
    """Per pixel: whether it has the target's hue (within 40 degrees, with some colour to
    it), or is near grey for a neutral target."""
    target = color_lab(target_rgb)
    target_chroma = float(np.hypot(target[1], target[2]))
    chroma = np.hypot(lab_pixels[:, 1], lab_pixels[:, 2])
    if target_chroma < 12:
        return chroma < 18
    angle = np.degrees(
        np.arctan2(lab_pixels[:, 2], lab_pixels[:, 1]) - np.arctan2(target[2], target[1])
    )
    angle = (angle + 180.0) % 360.0 - 180.0
    return (np.abs(angle) < 40) & (chroma > max(6.0, 0.25 * target_chroma))


#: the span (L*) over which a tone short of a named lightness grows from nothing to the
#: tolerance, reached where the tone is as near the term's own colour as the name's
#: (navy: from L* 19 to 25, a royal blue past it)
LIGHTNESS_SPAN = 6.0


def misread(
    lab_before: np.ndarray, lab_pixels: np.ndarray, target_rgb: tuple[int, int, int], name: str
) -> dict[str, float]:
    """How people would name the object's new colour, against the colour asked (the xkcd
    survey's names: kit/colours.py colour_term). Its middle tone read as another basic
    term than the asked colour's own neighbours in the survey give: 'reads as pink, not
    red' (a white glove taken only part of the way to red), 'reads as brown, not orange'.
    And where the name itself says light or dark (navy, maroon, light blue), the middle
    tone nearer its term's own lightness than the name's: 'too light for navy' (a royal
    blue); a light colour by its lit half. Neutral colours are left to the hue test."""
    target = color_lab(target_rgb)
    read_on = colour_read_on(lab_before, lab_pixels, target)
    if read_on is None:
        return {}
    asked = colour_term(target)
    middle = np.median(read_on, axis=0)
    defects: dict[str, float] = {}
    read = colour_term(middle)
    # (any term the asked colour's own neighbours give: a teal may read as blue or green)
    if read not in colour_terms(target):
        defects[f"reads as {read}, not {asked}"] = 1.5
    said = said_lightness(name, target)
    if said is not None:
        dark, half = said[0] == "dark", said[1]
        # (a light colour by its lit half: a thing's texture keeps its shaded half
        # short of a near-white)
        lit = read_on[read_on[:, 0] >= middle[0], 0].mean()
        tone = float(middle[0] if dark else lit)
        short = (tone - float(target[0])) * (1.0 if dark else -1.0)
        named = f"too light for {name}" if dark else f"too dark for {name}"
        defects[named] = max(0.0, short - half + LIGHTNESS_SPAN) / LIGHTNESS_SPAN
    return defects


#: a colour change (CIELAB) past which a pixel was recoloured
RECOLOURED = 6.0


def background_recoloured(before_lab: np.ndarray, after_lab: np.ndarray, mask: np.ndarray) -> float:
    """How deep (in pixels, on average along the mask's edge) the new colour reaches
    into ground the mask took in: pixels of the mask's outer band (as deep as a loose
    mask or a leak reaches) that look like the ground just outside them more than the
    object just inside them, and that changed colour. A loose mask whose ground the
    tool left as it was is no leak; an object's own shaded rim is the object's."""
    side = float(np.sqrt(mask.sum()))
    depth = max(4, round(0.08 * side))
    band = mask & ~erode(mask, depth)
    inner = erode(mask, depth) & ~erode(mask, 3 * depth)
    outer = bands(mask, 1, 1 + depth)
    if inner.sum() < 16 or outer.sum() < 16 or not band.any():
        return 0.0
    sigma = float(2 * depth)
    ground, thing = mean_near(before_lab, outer, sigma), mean_near(before_lab, inner, sigma)
    pixels = before_lab[band]
    to_ground = np.linalg.norm(pixels - ground[band], axis=1)
    to_thing = np.linalg.norm(pixels - thing[band], axis=1)
    apart = np.linalg.norm(ground[band] - thing[band], axis=1) > RECOLOURED
    moved = np.linalg.norm(after_lab[band] - pixels, axis=1) > RECOLOURED
    ground_like = float(((to_ground < 0.5 * to_thing) & apart & moved).sum())
    perimeter = float((mask & ~erode(mask, 1)).sum())
    return ground_like / max(1.0, perimeter)


#: grey levels added to a mean before two are compared as a ratio (near black, noise
#: and the sensor's floor, not the colour, set the contrast)
DARK_FLOOR = 10.0
#: the share of its fine detail, against its coarser shading, that a darkened object
#: must keep for its lower contrast to be put down to its darker colour (a blur keeps
#: the coarse shapes of bricks or stones and loses the fine grain between them)
PROFILE_KEPT = 0.7


def darkened(before: np.ndarray, after: np.ndarray, core: np.ndarray) -> float:
    """How many times darker (grey levels, DARK_FLOOR added) a recoloured object is than
    it was, at least 1, as the credit its texture's contrast gets: a darker colour shows
    the same shading and grain with less contrast, in proportion (the light it gives back
    is its colour's times the shading's), so navy from grey keeps its texture with a
    third of the contrast. No credit where its fine detail was lost against its coarse
    shapes (blurred, not darkened: PROFILE_KEPT), nor for a lighter colour, whose
    texture must keep its contrast."""
    if not core.any():
        return 1.0
    ratio = (float(before[core].mean()) + DARK_FLOOR) / (float(after[core].mean()) + DARK_FLOOR)
    if ratio <= 1.0:
        return 1.0

    def profile(luma: np.ndarray) -> float:
        fine = np.abs(luma - cv2.GaussianBlur(luma, (0, 0), 1.0))[core].mean()
        return float(fine) / max(float(energy(luma, 2.0)[core].mean()), 1e-3)

    return ratio if profile(after) >= PROFILE_KEPT * profile(before) else 1.0


def check_recolour(
    before: np.ndarray,
    after: np.ndarray,
    mask: np.ndarray,
    colour: str,
    colours: ColourNames = parse_color,
) -> Verdict:
    """How well the object in `mask` took `colour` (`before`, `after`: RGBA of one size;
    `colours`: the colour's name to the picture's own values)."""
    target = colours(colour)
    untouched = untouched_outside(before, after, dilate(mask, 3))
    found = ring_and_window(mask, 0.15, (4, 300), rings=2)
    if found is None:
        return Verdict(0.0, "no region to recolour")
    width, window = found
    (start, end, region), scale = analysis_copies(window, ANALYSIS_PIXELS, before, after, mask)
    core = erode(region, 2) if erode(region, 2).any() else region
    if not core.any():
        return Verdict(0.0, "no region to recolour")
    lab_before, lab_after = lab_of(start), lab_of(end)
    defects: dict[str, float] = {}
    defects["not the asked colour"] = max(0.0, 0.75 - color_match(lab_after[core], target)) / 0.25
    defects.update(misread(lab_before[core], lab_after[core], target, colour))
    coverage = float(reached(lab_after[core], target).mean())
    defects["part of the object not recoloured"] = max(0.0, 0.85 - coverage) / 0.1
    luma_before, luma_after = grey(start), grey(end)
    darker = darkened(luma_before, luma_after, core)
    detail = float(energy(luma_before)[core].mean())
    if detail > 3.0:  # an object with texture or shading must keep it
        kept = darker * float(energy(luma_after)[core].mean()) / detail
        defects["texture lost"] = max(0.0, 0.7 - kept) / 0.2
    fine = grain(luma_before, core)
    grainy = float(np.clip((fine - 1.5) / 1.5, 0.0, 1.0))
    kept_grain = darker * grain(luma_after, core) / (fine + 1e-3)
    defects["grain lost"] = grainy * max(0.0, 0.5 - kept_grain) / 0.15
    defects["colour leaking onto the background"] = (
        max(0.0, background_recoloured(lab_before, lab_after, region) - 3.0) / 2.0
    )
    return verdict(defects, untouched)
