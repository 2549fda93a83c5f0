"""Photo adjustments: the everyday edits a photographer makes in a raw developer
(exposure, contrast, highlights and shadows, white balance, saturation and vibrance,
black & white and toning, a tone curve, vignette, noise reduction, sharpening, blur),
on the whole picture, inside the selection, or inside a mask a finder made.

Each adjustment is one step whose strength is one number (the subtask's `amount`, on
the scale its `Adjustment` entry gives), so a step can be made again at another strength
without a new plan. The picture is worked on in float (8- or 16-bit in, the same depth out); tonal
edits happen on linear light where a camera's exposure does (exposure, white balance,
vignette) and on the display values elsewhere, as Lightroom's sliders do. Outside the
region nothing changes: the region's edge is feathered inwards only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from layerpath.errors import BadInput, ToolFailed
from layerpath.kit.adjustments import ADJUSTMENTS, TONES
from layerpath.kit.colours import hue_direction
from layerpath.kit.imaging import (
    luma,
    mask_box,
    noise_sigma,
    rgb_contiguous,
    smoothstep,
    wide_blur,
)
from layerpath.kit.looks import (
    REACH,
    Look,
    adjustment_problem,
    find_look,
    halo,
    look_named,
    look_names,
)
from layerpath.kit.names import ALONG_EDGES, finder_for, user_region
from layerpath.kit.regions import crop, full_box, grow_box, paste
from layerpath.kit.sky import picture_sky
from layerpath.kit.types import ArtifactKind, Box, ToolContext, ToolResult
from layerpath.tools.base import AnyDepth
from layerpath.tools.looks import (
    FIELD_STEPS,
    block_means,
    blurred,
    clarity,
    fade,
    field_blur,
    field_source,
    glow,
    haze,
    hue_shift,
    medium,
    split_tone,
)

#: the transition around a region an adjustment keeps off, as a share of its size
OUTSIDE_FEATHER = 0.2
# --- the arithmetic, on float RGB in 0..1 ----------------------------------------------


#: the sRGB curve as lookup tables: a camera file's 70 million values go through a table
#: that stays in the CPU's cache (a few hundred ms) rather than a power each (seconds).
#: Linear light is looked up by its square root, so the steps are fine where the curve
#: is steep (a 16-bit picture's deepest shadows stay within about a level of exact).
TABLE_STEPS = 1 << 16


@lru_cache(maxsize=1)
def _curves() -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(0.0, 1.0, TABLE_STEPS + 1, dtype=np.float64)
    linear = np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)
    v = x * x  # the display table's index is sqrt(linear)
    display = np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)
    return linear.astype(np.float32), display.astype(np.float32)


def _through(table: np.ndarray, index01: np.ndarray) -> np.ndarray:
    index = np.clip(index01, 0.0, 1.0)  # (then in place: no more copies of a band)
    index *= np.float32(TABLE_STEPS)
    index += np.float32(0.5)
    return np.take(table, index.astype(np.int32))


def to_linear(v: np.ndarray) -> np.ndarray:
    """sRGB display values (0..1) to linear light."""
    return _through(_curves()[0], v)


def to_display(v: np.ndarray) -> np.ndarray:
    """Linear light to sRGB display values (0..1), clipped."""
    return _through(_curves()[1], np.sqrt(np.maximum(v, 0.0)))


def _s_curve(x: np.ndarray, amount: float) -> np.ndarray:
    """More contrast towards a smoothstep (amount > 0), less towards flat mid-grey."""
    if amount >= 0:  # towards smoothstep twice over: 2.25 times the slope at mid-grey
        once = x * x * (3 - 2 * x)
        return x + amount * (once * once * (3 - 2 * once) - x)
    return x + (-amount) * 0.5 * (0.5 - x)


def _sigma(shape: tuple[int, ...], share: float) -> float:
    return max(0.8, share * min(shape[:2]))


def _gained(linear: np.ndarray, gain: Any, protect: bool) -> np.ndarray:
    """Linear light times `gain` (a number, or one per pixel or channel). With `protect`
    the tones a gain above 1 would push past white roll off into it instead: below a
    knee nothing changes; above it the range up to the gain's white is eased into what
    is left by a shoulder still rising at white, so a bright sky or snow keeps its
    gradation rather than turning flat white (lower knees for larger gains)."""
    lifted = linear * gain
    if not protect:
        return lifted
    g = np.maximum(np.asarray(gain, np.float32), 1.0)
    knee = np.clip((2.2 - g) / 2.0, 0.35, 0.9)
    span, top = 1.0 - knee, np.maximum(g - knee, 1e-6)
    # a shoulder t / (t + c) from the knee, as steep there as the gain's line and
    # reaching white exactly at the old white, still rising there (snow keeps its shading;
    # an exponential's tail had flattened it into the last levels)
    c = span * top / np.maximum(top - span, 1e-6)
    t = np.maximum(lifted - knee, 0.0)
    eased = knee + span * t / (t + c) * (top + c) / top
    return np.where((g > 1.0) & (lifted > knee), np.minimum(eased, 1.0), lifted).astype(np.float32)


def _gains(v: np.ndarray, gains: np.ndarray, protect: bool = False) -> np.ndarray:
    """Channel gains on linear light, scaled so the picture's brightness stays."""
    gains = gains / float(luma(gains[None, None, :])[0, 0])
    return to_display(_gained(to_linear(v), gains, protect))


def _saturated(v: np.ndarray, y: np.ndarray, factor: Any, protect: bool) -> np.ndarray:
    """The colours' distance from their grey `y` times `factor`. With `protect` a colour
    nears the gamut's edge instead of being cut at it (a red petal keeps its shading):
    what a pixel's factor asks beyond 1 is eased into the room its colour has left."""
    if not protect:
        return np.clip(y + (v - y) * factor, 0, 1)
    d = v - y
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d > 1e-6, (1.0 - y) / d, np.where(d < -1e-6, -y / d, np.inf))
    # (a fiftieth of the room is kept: eased all the way, the brightest channel would
    # round to the gamut's edge, where the colour stops shading)
    room = np.clip(0.98 * room.min(axis=2, keepdims=True) - 1.0, 1e-6, 1e3)
    excess = np.asarray(factor, np.float32) - 1.0
    eased = np.where(excess > 0, room * np.tanh(excess / room), excess)
    return np.clip(y + d * (1.0 + eased), 0, 1)


def _grey_world(v: np.ndarray) -> np.ndarray:
    """Gains that make the mid-tones neutral on average (grey world on the pixels
    neither near black nor clipped, which carry the cast)."""
    lin = to_linear(v).reshape(-1, 3)
    y = luma(lin[None])[0]
    keep = (y > 0.02) & (lin.max(axis=1) < 0.98)
    if keep.sum() < 64:
        return np.ones(3, np.float32)
    means = lin[keep].mean(axis=0)
    return (means.mean() / np.maximum(means, 1e-4)).astype(np.float32)


def apply(op: str, amount: float, v: np.ndarray, extra: Mapping[str, Any]) -> np.ndarray:
    """The adjustment `op` at `amount` on float RGB `v` (0..1); a new array."""
    protect = bool(extra.get("protect"))  # tones eased into white, colours into the gamut
    if op == "exposure":
        return to_display(_gained(to_linear(v), 2.0**amount, protect))
    if op == "contrast":  # an S around the photo's middle tone (a look's: mid-grey)
        pivot = float(extra.get("pivot") or 0.5)
        if abs(pivot - 0.5) < 1e-3:
            return np.clip(_s_curve(v, amount), 0, 1)
        gamma = np.log(0.5) / np.log(pivot)  # the pivot to mid-grey, the S, and back
        bent = np.clip(_s_curve(np.power(np.clip(v, 0, 1), gamma), amount), 0, 1)
        return np.power(bent, 1 / gamma).astype(np.float32)
    if op in ("highlights", "shadows"):
        local, cut = extra["local"] if "local" in extra else tonal_ranges(op, luma(v))
        if op == "highlights":
            weight = smoothstep(cut, 0.95, local)
            gain = 2.0 ** (amount * 1.0 * weight)
        else:
            weight = 1.0 - smoothstep(0.05, cut, local)
            gain = 2.0 ** (amount * 2.0 * weight)
        return to_display(_gained(to_linear(v), gain[..., None], protect))
    if op == "temperature":
        warm = np.array([1 + 0.25 * amount, 1.0, 1 - 0.25 * amount], np.float32)
        return _gains(v, warm, protect)
    if op == "tint":
        tint = np.array([1 + 0.06 * amount, 1 - 0.15 * amount, 1 + 0.06 * amount], np.float32)
        return _gains(v, tint, protect)
    if op == "white_balance":
        gains = extra["gains"] if "gains" in extra else _grey_world(v)
        return _gains(v, 1.0 + amount * (gains - 1.0), protect)
    if op == "color":  # towards a named colour, where the picture already leans to it
        return _towards(v, amount, extra)
    if op in ("saturation", "vibrance"):
        y = luma(v)[..., None]
        if op == "saturation":
            factor: Any = 1.0 + amount
        else:  # vibrance: the duller colours move most; skin-like ones least
            chroma = (v.max(axis=2) - v.min(axis=2))[..., None]
            factor = 1.0 + amount * (1.0 - np.clip(chroma * 1.6, 0, 1)) ** 2
        return _saturated(v, y, factor, protect)
    if op == "black_and_white":
        grey = to_display(luma(to_linear(v)))[..., None]
        tone = extra.get("tone")
        toned = np.repeat(grey, 3, axis=2)
        if tone:
            colour = np.array(_tone_rgb(str(tone)), np.float32) / 255.0
            tinted = grey * (colour / max(1e-3, float(luma(colour[None, None])[0, 0])))
            # the tone shows most in the mid-tones; black stays black, white stays white
            weight = 4 * grey * (1 - grey)
            toned = np.clip(toned + 0.6 * weight * (tinted - toned), 0, 1)
        return v + amount * (toned - v)
    if op == "curve":
        points = extra.get("points")
        if points:
            xs, ys = zip(*sorted((float(x), float(y)) for x, y in points), strict=True)
            return np.interp(v, xs, ys).astype(np.float32)
        if amount >= 0:
            return np.clip(_s_curve(v, amount), 0, 1)
        lifted = 0.08 * -amount  # a matte look: blacks lifted, whites eased
        return lifted + v * (1 - 1.6 * lifted)
    if op == "vignette":  # (a band of rows knows where it lies in the frame: "rows")
        gain = vignette_gain(amount, extra.get("rows", (0, v.shape[0], v.shape[1])), len(v))
        return to_display(_gained(to_linear(v), gain[..., None], protect))
    if op == "sharpen":
        y = luma(v)
        detail = 1.5 * amount * (y - cv2.GaussianBlur(y, (0, 0), _sigma(v.shape, 0.0008) + 0.6))
        if protect:  # an edge's halo eased into the room its tone has (less a few levels)
            room = np.where(detail > 0, 1.0 - v.max(axis=2), v.min(axis=2)) - 0.01
            room = np.maximum(room, 1e-4)
            detail = room * np.tanh(detail / room)
        return np.clip(v + detail[..., None], 0, 1)
    if op == "blur":
        return wide_blur(v, blur_sigma(amount, extra, v.shape))
    if op == "look":
        return render(look_named(str(extra.get("look"))), amount, v, extra)
    if op == "match":
        sky, parts = extra.get("sky_weight"), extra.get("source_parts")
        reference = extra["ref_stats"]
        if sky is not None and parts is not None:  # sky to sky, ground to ground
            into_sky = matched(v, parts["sky"], reference["parts"]["sky"], protect)
            into_ground = matched(v, parts["ground"], reference["parts"]["ground"], protect)
            share = sky[..., None]
            new = into_sky * share + into_ground * (1.0 - share)
        else:
            new = matched(v, extra["source_stats"], reference, protect)
        return amount * new + (1.0 - amount) * v
    raise BadInput(f"'{op}' is not an adjustment layerpath knows.")


#: how far a colour transfer may stretch or squeeze a channel's spread (L*; a*, b*): a
#: flat reference would wash a photo out, a vivid one amplify its noise
SPREAD_LIMITS = ((0.6, 1.6), (0.4, 2.5), (0.4, 2.5))


def matched(
    v: np.ndarray,
    source: Mapping[str, Any],
    reference: Mapping[str, Any],
    protect: bool = False,
) -> np.ndarray:
    """The colours of `v` moved onto a reference's (Reinhard, Ashikhmin, Gooch and
    Shirley's transfer in CIELAB): each of L*, a*, b* shifted and scaled so the
    picture's mean and spread (`source`) become the reference's. With `protect`, a
    colour the transfer takes beyond the gamut has its chroma eased back into it."""
    from layerpath.kit.colours import lab_exact, rgb_exact

    lab = lab_exact(v.astype(np.float64))
    lab = _transferred(lab, source, reference)
    lab[..., 0] = np.clip(lab[..., 0], 0.0, 100.0)
    out = rgb_exact(lab)
    if protect:
        for _ in range(4):  # a tenth less chroma each round, where a channel left 0..1
            outside = ((out < -0.002) | (out > 1.002)).any(axis=-1)
            if not outside.any():
                break
            lab[outside, 1:] *= 0.9
            out[outside] = rgb_exact(lab[outside][None])[0]
    return np.clip(out, 0.0, 1.0).astype(np.float32)


def _transferred(
    lab: np.ndarray, source: Mapping[str, Any], reference: Mapping[str, Any]
) -> np.ndarray:
    """Reinhard's transfer: each of L*, a*, b* shifted and scaled from the source's mean
    and spread to the reference's."""
    mean0, spread0 = np.array(source["mean"]), np.maximum(np.array(source["std"]), 1e-3)
    mean1, spread1 = np.array(reference["mean"]), np.array(reference["std"])
    ratio = np.clip(spread1 / spread0, *np.array(SPREAD_LIMITS).T)
    return (lab - mean0) * ratio + mean1


def tonal_ranges(op: str, grey: np.ndarray) -> tuple[np.ndarray, float]:
    """What counts as a highlight or a shadow: the local brightness (half the pixel's,
    half a wide blur's, so a bright sky darkens whole rather than its texture
    flattening), and where the range starts. A range is absolute, as a raw developer's,
    and reaches into this picture's own brighter or darker part, so a bright photo's
    shadows still lift."""
    local = 0.5 * grey + 0.5 * wide_blur(grey, _sigma(grey.shape, 0.02))
    if op == "highlights":
        return local, min(0.45, float(np.percentile(local[::4, ::4], 60)))
    return local, max(0.5, float(np.percentile(local[::4, ::4], 40)))


def _tone_rgb(tone: str) -> tuple[int, int, int]:
    from layerpath.kit.colours import parse_color

    return TONES.get(tone.lower(), None) or parse_color(tone)


def _towards(v: np.ndarray, amount: float, extra: Mapping[str, Any]) -> np.ndarray:
    """'Make the sky bluer': the colours moved towards the named one (its hue, more
    chroma), texture and brightness kept; the more a pixel already leans that way,
    the more it moves, so a white cloud in the sky stays white."""
    name = extra.get("colour")
    if not name:
        raise BadInput("Say which colour: e.g. 'make the sky bluer'.")
    from layerpath.kit.colours import lab_exact, rgb_exact

    lab = lab_exact(v.astype(np.float64))
    direction = hue_direction(str(name))
    along = lab[..., 1] * direction[0] + lab[..., 2] * direction[1]
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    lean = np.clip((along / np.maximum(chroma, 1e-6) + 0.2) / 1.2, 0, 1) * np.clip(chroma / 8, 0, 1)
    push = amount * 25.0 * lean
    lab[..., 1] += push * direction[0]
    lab[..., 2] += push * direction[1]
    return np.clip(rgb_exact(lab), 0, 1).astype(np.float32)


def denoise_8bit(pixels: np.ndarray, amount: float) -> np.ndarray:
    """Non-local means (OpenCV) on 8-bit RGB, its strength from the noise it measures."""
    grey = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY).astype(np.float32)
    sigma = noise_sigma(grey)
    h = max(2.0, min(25.0, 1.1 * sigma * (0.5 + amount)))
    return cv2.fastNlMeansDenoisingColored(pixels, None, h, h * 0.8, 7, 21)


# --- the tool ---------------------------------------------------------------------------


def _op_and_amount(asked: Mapping[str, Any]) -> tuple[str, float]:
    """The subtask's op and amount (its default when none is given); a clear error for an
    unknown op or an amount outside its range."""
    problem = adjustment_problem(asked)
    if problem:
        raise BadInput(problem)
    op, given = str(asked["op"]), asked.get("amount")
    return op, ADJUSTMENTS[op].default if given is None else float(given)


def graduated(shape: tuple[int, ...], window: Box, side: str) -> np.ndarray:
    """A graduated filter's weight over `window`: 1 along the frame's `side`, easing to
    0 by three quarters of the way across (as a graduated ND filter's soft edge)."""
    h, w = shape[:2]
    if side in ("top", "bottom"):
        along = (np.arange(window.y0, window.y1, dtype=np.float32) + 0.5) / h
        along = along if side == "top" else 1.0 - along
        ramp = (1.0 - smoothstep(0.1, 0.75, along))[:, None]
        return np.repeat(ramp, window.x1 - window.x0, axis=1)
    along = (np.arange(window.x0, window.x1, dtype=np.float32) + 0.5) / w
    along = along if side == "left" else 1.0 - along
    ramp = (1.0 - smoothstep(0.1, 0.75, along))[None, :]
    return np.repeat(ramp, window.y1 - window.y0, axis=0)


#: adjustments that are one curve per channel: made as a lookup table of the picture's
#: own levels (256 or 65536) and applied in one pass, no float copy of a camera file
SEPARABLE = {"exposure", "temperature", "tint", "white_balance", "contrast", "curve"}


def _per_channel(op: str, amount: float, part: np.ndarray, extra: dict[str, Any]) -> np.ndarray:
    """A separable adjustment of the RGBA pixels' colour channels through one table per
    channel (the same arithmetic as `apply`, on every level once): the RGBA pixels, their
    alpha as it was."""
    top = 65535 if part.dtype == np.uint16 else 255
    if op == "white_balance":  # the cast is measured on the picture, then a curve
        sample = part[:: max(1, part.shape[0] // 512), :: max(1, part.shape[1] // 512), :3]
        extra = {**extra, "gains": _grey_world(sample.astype(np.float32) / top)}
    ramp = np.repeat(np.linspace(0.0, 1.0, top + 1, dtype=np.float32)[:, None, None], 3, axis=2)
    tables = np.clip(np.rint(apply(op, amount, ramp, extra)[:, 0, :] * top), 0, top)
    tables = tables.astype(part.dtype)
    if part.dtype == np.uint8:  # OpenCV's table lookup: every channel in one pass
        lut = np.empty((1, 256, 4), np.uint8)
        lut[0, :, :3], lut[0, :, 3] = tables, np.arange(256)
        return cv2.LUT(np.ascontiguousarray(part), lut)
    out = np.empty_like(part)
    for c in range(3):
        np.take(tables[:, c], part[..., c], out=out[..., c])
    out[..., 3] = part[..., 3]
    return out


class SceneryLook(AnyDepth):
    """The paper's Changing Scenery ('make it night', 'make it winter', 'add fog') as a
    look over the whole picture, offline: the light and colour of that time, season or
    weather, not new things in the scene (a diffusion model paints those, on a GPU)."""

    def declines(self, ctx: ToolContext) -> str | None:
        if ctx.target and ctx.target != "scenery":
            return f"the offline looks change the whole picture, not only the {ctx.target}"
        if not ctx.to or find_look(ctx.to) is None:
            return f"'{ctx.to}' is not a look it can make; the looks: {look_names()}"
        return None

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        out, window = adjusted(inputs[ArtifactKind.IMAGE], None, scenery_asked(ctx), params)
        return ToolResult({ArtifactKind.IMAGE: out}, window=window, everywhere=True)


def scenery_asked(ctx: ToolContext) -> dict[str, Any]:
    """A Changing Scenery subtask as the look adjustment it is made by offline."""
    return {"op": "look", "look": look_named(ctx.to or "").name, **ctx.subtask_params}


def feathered(mask: np.ndarray, feather: float) -> np.ndarray:
    """The region's weight: 1 inside, falling to 0 at its edge over `feather` pixels,
    0 everywhere outside (nothing outside the region changes)."""
    if feather < 1:
        return mask.astype(np.float32)
    inside = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 5)
    return np.clip(inside / feather, 0.0, 1.0).astype(np.float32)


class PhotoAdjust(AnyDepth):
    """One adjustment over the whole picture, or inside the selection when there is one
    (subtask 'photo_adjustment'); inside the step's mask when given one (subtask
    'region_adjustment'). Offline, no model."""

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        region = inputs.get(ArtifactKind.MASK)
        if region is None and ctx.selection is not None and ctx.selection.any():
            region = ctx.selection
        elif region is not None and not params.get("feather") and follows_edges(ctx):
            # a found sky's or subject's outline lies on the photo's own edges: an edge
            # of a pixel or two, not a fade that leaves a band of the old tone along it
            params = {**params, "feather": EDGE_FEATHER * min(image.shape[:2]), "edge": True}
        settled: dict[str, Any] = {}
        out, window = adjusted(image, region, ctx.subtask_params, params, settled)
        whole = region is None and not ctx.subtask_params.get("graduated")
        return ToolResult(
            {ArtifactKind.IMAGE: out}, window=window, everywhere=whole, settled=settled
        )


#: the feather (a share of the picture's shorter side) of a region whose outline lies on
#: the photo's edges: 0.9 px on a 2 MP photo, 3.2 px at 24 MP
EDGE_FEATHER = 0.0008


def follows_edges(ctx: ToolContext) -> bool:
    """Whether the step's region is one a finder found along the photo's own edges (a
    sky, the subject, the background), not the user's mask or a face's ellipse."""
    found = user_region(ctx.target, ctx.masks, ctx.selection) is None
    return found and finder_for(ctx.target) in ALONG_EDGES


#: ops whose brightening eases the highlights into white from the first try (a snow
#: scene brightened kept its shading: 3.3 % of its pixels clipped stayed 3.3 %, not 7.7 %)
BRIGHTENING = ("exposure", "highlights")


def protected(op: str, amount: float, params: Mapping[str, Any]) -> bool:
    """Whether the step eases tones into white and colours into the gamut: as its
    parameters say, else by default when it brightens."""
    asked = params.get("protect")
    if asked is not None:
        return bool(asked)
    return op in BRIGHTENING and amount > 0


def adjusted(
    image: np.ndarray,
    region: np.ndarray | None,
    asked: Mapping[str, Any],
    params: Mapping[str, Any],
    settled: dict[str, Any] | None = None,
) -> tuple[np.ndarray, Box | None]:
    """The picture (RGBA, 8 or 16 bits) with the adjustment `asked` (the subtask's op,
    amount and modifiers) applied, and the window it changed (None: all of it); what it
    chose from the picture itself (a contrast's pivot) put in `settled`. With
    `outside`, the region is what stays as it is ('keep the face unchanged'); with
    `graduated`, the adjustment is whole at that side of the frame and fades out across
    it (a graduated filter)."""
    op, amount = _op_and_amount(asked)
    look = look_named(str(asked["look"])) if op == "look" else None
    extra: dict[str, Any] = {**asked, "protect": protected(op, amount, params)}
    if op == "match" and not isinstance(asked.get("ref_stats"), Mapping):
        raise BadInput("Matching colours needs a reference picture: --ref NAME=FILE.")
    top = 65535 if image.dtype == np.uint16 else 255
    window = full_box(image.shape)
    weight = None
    if region is not None:
        if region.shape != image.shape[:2]:
            raise ToolFailed("The region's mask is not the picture's size.")
        box = mask_box(region)
        if box is None:
            raise ToolFailed("The region to adjust is empty.")
        feather = float(params.get("feather") or 0.004 * min(image.shape[:2]))
        if asked.get("outside"):  # all but the region, which keeps every pixel
            # a look kept off a face fades in over a fifth of the region's size (a sharp
            # edge shows an ellipse's outline as a ring); off a sky, at its own edge
            fade = 0.0 if params.get("edge") else OUTSIDE_FEATHER * min(box.width, box.height)
            soft = max(feather, fade)
            weight = feathered(~region.astype(bool), soft)
        else:
            # a blur and the local tonal ops read context around the region
            reach = 0.05 * min(box.width, box.height) if op == "blur" else _sigma(image.shape, 0.02)
            context = int(3 * reach) if op in ("blur", "highlights", "shadows") else 4
            window = grow_box(box, context, image.shape)
            weight = feathered(crop(region, window), feather)
            extra["side"] = min(box.width, box.height)
    if asked.get("graduated"):
        ramp = graduated(image.shape, window, str(asked["graduated"]))
        weight = ramp if weight is None else weight * ramp
    part = crop(image, window)
    if op == "contrast":  # its middle tone: as settled on the photo, else the picture's
        pivot = params.get("pivot", asked.get("pivot"))
        extra["pivot"] = tone_pivot(part, weight) if pivot is None else float(pivot)
        if settled is not None:
            settled["pivot"] = extra["pivot"]
    if op == "match":  # the region's own colours, which the transfer moves
        extra["source_stats"] = _lab_stats(part, weight)
        extra.update(_sky_parts(part, weight, asked["ref_stats"]))
    whole = window == full_box(image.shape)
    out = None
    if whole and op not in SEPARABLE:  # the new picture's colours are made where they lie
        out = np.empty_like(image)
        out[..., 3] = image[..., 3]
    into = out[..., :3] if out is not None else None
    if op in SEPARABLE:
        changed = _per_channel(op, amount, part, extra)
        if weight is None and whole:
            return changed, None  # (a new picture already: no copy to fill)
        values = changed[..., :3]
        if weight is not None:
            mixed = part[..., :3] + (values - part[..., :3].astype(np.float32)) * weight[..., None]
            values = np.clip(np.rint(mixed), 0, top).astype(image.dtype)
    elif op == "black_and_white" and image.dtype == np.uint8 and not extra.get("tone"):
        values = _grey_8bit(part, weight, amount, out)
        if into is not None:  # (made in the new picture's colours where they lie)
            values = into
    elif op == "vignette" and image.dtype == np.uint8 and weight is None and amount >= 0:
        values = into if into is not None else np.empty(part.shape[:2] + (3,), np.uint8)
        _vignette_8bit(part, amount, values)
    elif op in BANDED or look is not None and look.banded:
        # a look that turns a band of hues reads a margin of rows around each band (its
        # glow and clarity read fields of the whole picture instead)
        margin = halo(look, (image.shape[0], image.shape[1])) if look is not None else 0
        values = _in_bands(op, amount, part, weight, extra, margin, into, out)
    else:
        values = _whole(op, amount, part, weight, extra)
    if whole:
        if out is None:
            out = image.copy()
        if values is not into:
            out[..., :3] = values
        return out, None
    patch = part.copy()
    patch[..., :3] = values
    return paste(image, window, patch), window


#: the medians a contrast's pivot follows (a darker or brighter one is held there: an S
#: bent further flattens the other end), and how far from mid-grey towards the
#: median it turns: chosen on mate's 12 photos (the tuning set), where all the way a
#: saturated red flower's contrast fell just short of its check (0.50) and 0.7 passes
#: all 12 (before: 11, a pale wood refused); KDE's 12, held out: 12 (before: 10)
PIVOTS, PIVOT_SHARE = (0.2, 0.8), 0.7


def tone_pivot(part: np.ndarray, weight: np.ndarray | None) -> float:
    """The middle tone of the picture (inside the region's weight) a contrast turns
    around: mid-grey moved PIVOT_SHARE of the way to its luma's median (within PIVOTS).
    Around mid-grey a dark photo's S went darker with hardly more contrast (KDE's Path,
    a forest at mean L* 16.8: to 12.0, its L* spread 10.8 -> 11.0) and a pale one's
    flatter (mate's Wood, 4.2 -> 3.6); around this pivot Path goes to L* 13.9 with a
    spread of 12.6 (all the way to its median: 16.1), a moss at 18.5 to 18.3."""
    step = max(1, round(np.sqrt(part.shape[0] * part.shape[1] / 250_000)))
    top = 65535 if part.dtype == np.uint16 else 255
    sample = part[::step, ::step].astype(np.float32) / top
    tones = luma(sample[..., :3])
    seen = sample[..., 3] > 0  # (a transparent pixel's colour is no tone of the picture)
    if weight is not None:
        seen &= weight[::step, ::step] > 0
    tones = tones[seen]
    if not tones.size:
        return 0.5
    return 0.5 + PIVOT_SHARE * (float(np.clip(np.median(tones), *PIVOTS)) - 0.5)


def _sky_parts(
    part: np.ndarray, weight: np.ndarray | None, reference: Mapping[str, Any]
) -> dict[str, Any]:
    """Where a colour match pairs like with like: the picture's sky (a soft weight) and
    its sky's and ground's own colours, when the reference has both parts and the
    picture a sky too (none: the whole picture matches the whole reference)."""
    if not isinstance(reference.get("parts"), Mapping):
        return {}
    sky = picture_sky(part)
    if sky is None:
        return {}
    inside = weight if weight is not None else np.ones(sky.shape, np.float32)
    try:
        parts = {
            "sky": _lab_stats(part, inside * (sky > 0.5)),
            "ground": _lab_stats(part, inside * (sky <= 0.5)),
        }
    except ToolFailed:  # (the region holds one part only)
        return {}
    return {"sky_weight": sky, "source_parts": parts}


def _lab_stats(part: np.ndarray, weight: np.ndarray | None) -> dict[str, list[float]]:
    """The CIELAB mean and spread of a picture's pixels (those of its region), on a
    sample of about half a million of them."""
    from layerpath.kit.colours import lab_exact

    step = max(1, int(np.sqrt(part.shape[0] * part.shape[1] / 500_000)))
    top = 65535.0 if part.dtype == np.uint16 else 255.0
    sample = part[::step, ::step, :3].astype(np.float64) / top
    lab = lab_exact(sample).reshape(-1, 3)
    if weight is not None:
        lab = lab[weight[::step, ::step].ravel() > 0.5]
    if not len(lab):
        raise ToolFailed("The region to match is empty.")
    return {"mean": lab.mean(axis=0).tolist(), "std": lab.std(axis=0).tolist()}


#: adjustments that need no neighbourhood beyond what is worked out for the whole picture
#: first: made a band of rows at a time (the float copies of a camera file are a band's)
BANDED = {
    "saturation",
    "vibrance",
    "color",
    "black_and_white",
    "vignette",
    "highlights",
    "shadows",
    "match",
}
BAND_ROWS = 512
#: the pixels of a band with no margin (its float copies a few tens of MB, whatever the
#: photo's width)
BAND_PIXELS = 1 << 20
#: the most bands made at once (each a few float copies of 512 rows)
BAND_THREADS = 4


def band_rows(width: int, margin: int) -> int:
    """The rows of a band: BAND_ROWS where a margin is read around each band (a look's
    blur: fewer rows would make the margin over again more often), else as many as
    BAND_PIXELS hold."""
    return BAND_ROWS if margin else max(16, BAND_PIXELS // max(1, width))


def _in_bands(
    op: str,
    amount: float,
    part: np.ndarray,
    weight: np.ndarray | None,
    extra: dict[str, Any],
    margin: int = 0,
    into: np.ndarray | None = None,
    picture: np.ndarray | None = None,
) -> np.ndarray:
    """The adjustment made a band of rows at a time (band_rows), each read with `margin` rows
    above and below it for the steps that look around a pixel (a look's glow); the
    colours made `into` the given array (the new picture's colours, of RGBA `picture`
    when given), else a new one."""
    top = 65535 if part.dtype == np.uint16 else 255
    h, w = part.shape[:2]
    values = into if into is not None else np.empty((h, w, 3), part.dtype)
    local = None
    if op in ("highlights", "shadows"):
        grey = np.empty((h, w), np.float32)
        for y in range(0, h, BAND_ROWS):
            grey[y : y + BAND_ROWS] = luma(part[y : y + BAND_ROWS, :, :3].astype(np.float32) / top)
        local = tonal_ranges(op, grey)
        del grey

    ahead = None
    if op == "look":
        look = look_named(str(extra["look"]))
        runs = _runs(look.recipe)
        # an 8-bit look over the whole picture whose steps read the pixel alone (or a
        # whole picture's field) is made with OpenCV's tables, a band at a time (one
        # whose every step is position-free through one 3D LUT, when that is near)
        eight = part.dtype == np.uint8 and weight is None and margin == 0
        wanted = part.dtype == np.uint8 and (not eight or _free_runs(runs) == len(runs))
        lut = _look_lut(look.name, amount) if wanted else None
        whole = lut is not None and lut[0] == len(runs)
        if lut is not None and lut[2] and whole and weight is None:
            _through_lut(lut[1], part, values)  # the whole look: one LUT
            return values
        # its glow's or clarity's field, from the whole picture: made as made8 makes the
        # steps before it, or else through the look's first runs' LUT however near (the
        # picture itself only where that LUT is within tolerance)
        prefix = (lut[0], lut[1]) if lut is not None and not whole else None
        fields = _look_fields(look, amount, part, prefix, eight)
        if eight:
            return _look_8bit(look, amount, part, fields, values, picture)
        extra = {**extra, "fields": fields}
        ahead = prefix if lut is not None and lut[2] else None
    rows = band_rows(w, margin)

    def band(y: int) -> None:
        low, high = max(0, y - margin), min(h, y + rows + margin)
        read = part[low:high, :, :3].astype(np.float32) / top
        here = {**extra, "rows": (low, h, w)}
        if op == "look":  # after its last blur, a look works on the band's own rows
            here["inner"] = (y - low, y - low + min(rows, h - y))
        if ahead is not None:
            here["begun"] = (ahead[0], _lut_band(ahead[1], part[low:high]))
        if local is not None:
            here["local"] = (local[0][y : y + rows], local[1])
        if extra.get("sky_weight") is not None:  # (a colour match's sky, the band's rows)
            here["sky_weight"] = extra["sky_weight"][low:high]
        new = apply(op, amount, read, here)
        if new.shape[0] == read.shape[0]:  # (a look gives the band's own rows already)
            new = new[y - low : y - low + rows]
        v = read[y - low : y - low + rows]
        if weight is not None:
            new = v + (new - v) * weight[y : y + rows, :, None]
        values[y : y + rows] = np.clip(np.rint(new * top), 0, top)

    _on_every_core(band, range(0, h, rows))
    return values


def _on_every_core(work: Callable[[int], None], bands: Iterable[int]) -> None:
    """`work` for each band, on every core this process may use (OpenCV's threads: a
    batch's worker shares the cores with the others): numpy lets go of the interpreter
    while it works on a band."""
    with ThreadPoolExecutor(max_workers=max(1, min(BAND_THREADS, cv2.getNumThreads()))) as pool:
        list(pool.map(work, bands))


def _look_8bit(
    look: Look,
    strength: float,
    part: np.ndarray,
    fields: dict[int, np.ndarray],
    values: np.ndarray,
    picture: np.ndarray | None = None,
) -> np.ndarray:
    """An 8-bit look over the whole picture made into `values` (made8, below), the
    colours of RGBA `picture` when given (OpenCV lays each band's into its rows: a
    fifth of numpy's strided copy), a band of rows at a time on every core."""
    h, w = part.shape[:2]
    rows = band_rows(w, 0)
    whole = picture is not None and picture.shape == part.shape and picture.flags.c_contiguous

    def band(y: int) -> None:
        made = made8(look, strength, part[y : y + rows], (y, h, w), fields)
        if whole and picture is not None:
            cv2.mixChannels([made], [picture[y : y + rows]], [0, 0, 1, 1, 2, 2])
        else:
            values[y : y + rows] = made

    _on_every_core(band, range(0, h, rows))
    return values


# --- an 8-bit look made with OpenCV's tables ----------------------------------------------
# `render` is the arithmetic it keeps to, within a level: each level's colour through the
# look's first run of per-channel steps read from a 256-entry table as the band goes to
# float, the steps between as `render` makes them, and a closing vignette (with an
# exposure that only darkens just before it) made on linear light and read out as the new
# levels, laid over the photo at the look's strength in one pass. A 24 MP golden hour: 0.9
# s of tools, not 2.7 s.


def made8(
    look: Look,
    strength: float,
    band: np.ndarray,
    rows: tuple[int, int, int],
    fields: Mapping[int, np.ndarray],
) -> np.ndarray:
    """The look at `strength` on 8-bit RGBA (or RGB) rows `band`, lying at `rows` (top,
    frame height, frame width) of the frame, with the whole picture's `fields` of its
    glow or clarity: the band's new 8-bit colours."""
    runs = _runs(look.recipe)
    colours = rgb_contiguous(band)
    closing = _closing(runs)
    stop = len(runs) if closing is None else closing[0]
    styled = styled8(look, colours, rows, fields, stop)
    if closing is None:
        styled *= np.float32(255)
    else:
        styled = _vignetted(styled, closing[1], closing[2], rows)
    return cv2.addWeighted(colours, 1.0 - strength, styled, strength, 0.0, dtype=cv2.CV_8U)


def styled8(
    look: Look,
    colours: np.ndarray,
    rows: tuple[int, int, int],
    fields: Mapping[int, np.ndarray],
    until: int,
) -> np.ndarray:
    """8-bit RGB rows as the look's runs before `until` leave them: float RGB, 0..1 (the
    first run, when it is one of per-channel steps, read from a table of the levels)."""
    runs = _runs(look.recipe)
    first = 1 if runs and runs[0][0]["op"] in PER_CHANNEL and until > 0 else 0
    keys = tuple(_key(step) for step in runs[0]) if first else ()
    styled = cv2.LUT(rgb_contiguous(colours), _level_table(keys))
    for index in range(first, until):
        styled = look_step(look, styled, runs[index], rows, fields.get(index))
    return styled


@lru_cache(maxsize=32)
def _level_table(steps: tuple[str, ...]) -> np.ndarray:
    """Each 8-bit level's value (level / 255, as a band read in float is) after the run of
    per-channel `steps` (none: the value itself): OpenCV's table, (1, 256, 3) float32."""
    levels = np.arange(256, dtype=np.float32) / np.float32(255)
    ramp = np.repeat(levels[:, None, None], 3, axis=2)
    if steps:
        ramp = _through_tables(ramp, _tables(steps))
    return np.ascontiguousarray(ramp.reshape(1, 256, 3), np.float32)


def _closing(runs: Sequence[Sequence[Mapping[str, Any]]]) -> tuple[int, float, float] | None:
    """Where the look's closing darkening starts, its vignette's amount and the gain of
    the exposure folded into it: a vignette that only darkens, as the last run, and an
    exposure alone in the run before it that only darkens (exposure and vignette are
    gains on linear light, so one gain makes both). None: the look does not close so."""
    if not runs or [step["op"] for step in runs[-1]] != ["vignette"]:
        return None
    amount = float(runs[-1][0].get("amount", 1.0))
    if amount < 0 or runs[-1][0].get("protect"):
        return None
    before = runs[-2] if len(runs) > 1 else []
    exposure = float(before[0].get("amount", 1.0)) if len(before) == 1 else 1.0
    if [step["op"] for step in before] == ["exposure"] and exposure <= 0:
        return len(runs) - 2, amount, 2.0**exposure
    return len(runs) - 1, amount, 1.0


def _vignetted(
    styled: np.ndarray, amount: float, gain: float, rows: tuple[int, int, int]
) -> np.ndarray:
    """The closing vignette (times the exposure's `gain`) on float RGB `styled`: its
    display values times 255, through linear light's tables. (Above the sRGB curve's
    straight toe a gain on linear light is exactly a multiply and add on the display
    values; finding and redoing the values that land in the toe cost more than the
    tables save: 32 ms a band of a 24 MP photo, not 26.)"""
    steps = vignette_gain(amount, rows, styled.shape[0]) * np.float32(gain * LINEAR_STEPS)
    linear = to_linear(styled)
    linear *= steps[..., None]  # (the gain in steps of the display table)
    linear += np.float32(0.5)
    return np.take(_display255(), linear.astype(np.int32))


@lru_cache(maxsize=1)
def _display255() -> np.ndarray:
    """Each step of linear light's display value times 255 (LINEAR_STEPS + 1 of them,
    the sRGB curve worked exactly)."""
    linear = np.linspace(0.0, 1.0, LINEAR_STEPS + 1, dtype=np.float64)
    display = np.where(linear <= 0.0031308, linear * 12.92, 1.055 * linear ** (1 / 2.4) - 0.055)
    return (display * 255.0).astype(np.float32)


def _look_fields(
    look: Look,
    strength: float,
    part: np.ndarray,
    ahead: tuple[int, Any] | None = None,
    eight: bool = False,
) -> dict[int, np.ndarray]:
    """The fields of a look's glow or clarity (tools/looks.py), each from the picture as
    the look's steps before it leave it, made in bands a whole number of the field's
    blocks tall (the whole picture's blocks): by the index of the step in _runs."""
    fields: dict[int, np.ndarray] = {}
    for index, run in enumerate(_runs(look.recipe)):
        if run[0]["op"] in FIELD_STEPS:
            op = str(run[0]["op"])
            fields[index] = _look_field(look, strength, part, index, op, dict(fields), ahead, eight)
    return fields


def _look_field(
    look: Look,
    strength: float,
    part: np.ndarray,
    index: int,
    op: str,
    known: dict[int, np.ndarray],
    ahead: tuple[int, Any] | None = None,
    eight: bool = False,
) -> np.ndarray:
    """One field of _look_fields: the step `op` at `index`, after the `known` fields'
    steps (the look's first runs through the LUT `ahead`, when it has one; with
    `eight`, the 8-bit picture's steps as made8 makes them)."""
    top = 65535 if part.dtype == np.uint16 else 255
    h, w = part.shape[:2]
    sigma, block = field_blur(op, (h, w))
    rows = max(1, band_rows(w, 0) // block) * block
    small = np.empty((-(-h // block), -(-w // block), 3 if op == "glow" else 1), np.float32)

    def source(y: int) -> None:
        if eight:
            state = styled8(look, part[y : y + rows], (y, h, w), known, index)
        else:
            read = part[y : y + rows, :, :3].astype(np.float32) / top
            here: dict[str, Any] = {"rows": (y, h, w), "fields": known}
            if ahead is not None:
                here["begun"] = (ahead[0], _lut_band(ahead[1], part[y : y + rows]))
            state = render(look, strength, read, here, index)
        means = block_means(field_source(op, state), block)
        small[y // block : y // block + means.shape[0]] = means

    _on_every_core(source, range(0, h, rows))
    return blurred(small, sigma, block)


#: the LUT's lattice (Pillow's finest: its trilinear reading strays least)
LUT_SIZE = 65
#: the most the LUT may stray from the arithmetic at its cells' centres (where a
#: trilinear reading strays most), in levels, for it to be used: with the rounding to a
#: level, the picture stays within a level of the arithmetic's
LUT_TOLERANCE = 0.5


def _free_runs(runs: Sequence[Sequence[Mapping[str, Any]]]) -> int:
    """How many runs of steps a look starts with that are position-free."""
    return next((i for i, run in enumerate(runs) if run[0]["op"] not in POSITION_FREE), len(runs))


@lru_cache(maxsize=16)
def _look_lut(name: str, strength: float) -> tuple[int, Any, bool] | None:
    """The run of position-free steps a look starts with, as a 3D LUT (Pillow's
    Color3DLUT) of what they make: (how many runs it holds, the LUT, whether it is
    within LUT_TOLERANCE of the arithmetic everywhere); the whole look at `strength`
    when every step is position-free. None when the look starts with none. (A LUT
    that strays further, by a level or so where a steep curve or the gamut's edge lies
    between its points, still makes a glow's or clarity's field: blurred wide, that
    cannot show.)"""
    from PIL import ImageFilter

    look = look_named(name)
    runs = _runs(look.recipe)
    count = _free_runs(runs)
    if count == 0:
        return None
    until = None if count == len(runs) else count

    def made(levels: np.ndarray) -> np.ndarray:
        b, g, r = np.meshgrid(levels, levels, levels, indexing="ij")  # (red fastest)
        grid = np.stack([r, g, b], axis=-1).reshape(-1, 1, 3)
        shape = (len(levels),) * 3 + (3,)
        return render(look, strength, grid, {}, until).reshape(shape).astype(np.float64)

    points = np.linspace(0.0, 1.0, LUT_SIZE, dtype=np.float32)
    table = made(points)
    corners = [table[i : LUT_SIZE - 1 + i, j : LUT_SIZE - 1 + j, k : LUT_SIZE - 1 + k]
               for i in (0, 1) for j in (0, 1) for k in (0, 1)]  # fmt: skip
    centres = made((points[:-1] + points[1:]) / 2)
    within = 255.0 * float(np.abs(sum(corners) / 8.0 - centres).max()) <= LUT_TOLERANCE
    return count, ImageFilter.Color3DLUT(LUT_SIZE, table.reshape(-1)), within


def _lut_rows(lut: Any, rgba: np.ndarray) -> np.ndarray:
    """8-bit RGBA rows through the LUT (Pillow reads them where they lie): RGBA."""
    from PIL import Image

    h, w = rgba.shape[:2]
    rows = Image.frombuffer("RGBA", (w, h), np.ascontiguousarray(rgba), "raw", "RGBA", 0, 1)
    return np.asarray(rows.filter(lut))


def _lut_band(lut: Any, rgba: np.ndarray) -> np.ndarray:
    """8-bit RGBA rows through the LUT, as float RGB in 0..1."""
    made = cv2.cvtColor(_lut_rows(lut, rgba), cv2.COLOR_RGBA2RGB)
    return made.astype(np.float32) * np.float32(1 / 255)


def _through_lut(lut: Any, part: np.ndarray, into: np.ndarray) -> None:
    """An 8-bit picture through the LUT into `into` (its colours), a band of rows at a
    time on every core."""
    h, w = part.shape[:2]
    rows = band_rows(w, 0)

    def band(y: int) -> None:
        into[y : y + rows] = _lut_rows(lut, part[y : y + rows])[..., :3]

    _on_every_core(band, range(0, h, rows))


def _grey_8bit(
    part: np.ndarray, weight: np.ndarray | None, amount: float, into: np.ndarray | None = None
) -> np.ndarray:
    """An 8-bit picture's black and white, as `apply` makes it within a level, with
    OpenCV a band of rows at a time (_grey_tables): each level's linear light from a
    table, the luma of a pixel's three by OpenCV's RGB to grey, then its display level
    from a table. Made `into` the given array (3 channels, or the new RGBA picture,
    whose colours it fills and whose alpha it leaves), else a new one: its colours."""
    lut, display = _grey_tables()
    h, w = part.shape[:2]
    values = into if into is not None else np.empty((h, w, 3), np.uint8)
    rows = band_rows(w, 0)

    def grey_band(y: int) -> None:
        band = np.ascontiguousarray(part[y : y + rows])
        grey8 = display[cv2.cvtColor(cv2.LUT(band, lut), cv2.COLOR_RGBA2GRAY)]
        if weight is None and amount == 1.0:
            if values.shape[2] == 4:  # the grey into the colours where they lie
                cv2.mixChannels([grey8], [values[y : y + rows]], [0, 0, 0, 1, 0, 2])
            else:
                values[y : y + rows] = cv2.merge([grey8, grey8, grey8])
            return
        share = amount if weight is None else amount * weight[y : y + rows]
        old = band[..., :3].astype(np.float32)
        toned = grey8.astype(np.float32)[..., None]
        mixed = old + (toned - old) * np.asarray(share, np.float32)[..., None]
        values[y : y + rows, :, :3] = np.clip(np.rint(mixed), 0, 255).astype(np.uint8)

    _on_every_core(grey_band, range(0, h, rows))
    return values[..., :3]


#: the luma's weights on linear light (Rec. 709), and those OpenCV's RGB to grey gives
LUMA = np.array([0.2126, 0.7152, 0.0722])
OPENCV_GREY = np.array([0.299, 0.587, 0.114])


@lru_cache(maxsize=1)
def _grey_tables() -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's 16-bit RGB to grey made the luma of linear light: each level's linear
    light times LUMA / OPENCV_GREY in steps of 1/scale (the widest within 16 bits: a
    step is a fiftieth of a level in the deepest shadows), so the grey it gives is the
    luma's steps; and each step's display level (65536 of them)."""
    share = LUMA / OPENCV_GREY
    scale = 65000.0 / share.max()
    lut = np.zeros((1, 256, 4), np.uint16)
    lut[0, :, :3] = np.rint(_level_linear()[:, None].astype(np.float64) * share * scale)
    linear = np.clip(np.arange(65536) / scale, 0.0, 1.0).astype(np.float32)
    display = np.clip(np.rint(to_display(linear) * 255.0), 0, 255).astype(np.uint8)
    return lut, display


def vignette_gain(amount: float, rows: tuple[int, int, int], count: int) -> np.ndarray:
    """A vignette's gain on linear light for `count` rows of the frame from `rows`' (top,
    frame height, frame width): 1 in the middle, falling towards the corners (amount
    0.5: the corners a stop darker; a negative amount lightens them). Read from a table
    of the squared distance from the middle, the sum of a row's and a column's share."""
    top, h, w = rows
    down = ((np.arange(top, top + count, dtype=np.float32) - (h - 1) / 2) / (h / 2)) ** 2
    across = ((np.arange(0, w, dtype=np.float32) - (w - 1) / 2) / (w / 2)) ** 2
    index = down[:, None] + across[None, :]  # twice the squared distance: 0..2
    index *= np.float32(VIGNETTE_STEPS / 2)
    index += np.float32(0.5)
    np.minimum(index, VIGNETTE_STEPS, out=index)  # (beyond the frame: as at its corners)
    return np.take(_vignette_table(float(amount)), index.astype(np.int32))


#: the steps of the squared distance from the middle a vignette's table holds
VIGNETTE_STEPS = 1 << 16


@lru_cache(maxsize=8)
def _vignette_table(amount: float) -> np.ndarray:
    """The vignette's gain at each step of the squared distance from the middle (0 in
    the middle, 1 at the corners): two to the power of -2 `amount` times a smoothstep
    of the distance from 0.35 to 1."""
    r = np.sqrt(np.linspace(0.0, 1.0, VIGNETTE_STEPS + 1, dtype=np.float64))
    return (2.0 ** (-2.0 * amount * smoothstep(0.35, 1.0, r))).astype(np.float32)


#: the steps of linear light the 8-bit vignette's display table holds (a level's
#: twentieth in the deepest shadows, where the display curve is steepest)
LINEAR_STEPS = 65535


@lru_cache(maxsize=1)
def _level_linear() -> np.ndarray:
    """Each 8-bit level's linear light, as `to_linear` makes it (256 of them)."""
    return to_linear(np.arange(256, dtype=np.float32) / np.float32(255)).astype(np.float32)


@lru_cache(maxsize=1)
def _display_levels() -> np.ndarray:
    """Each step of linear light's 8-bit display level (LINEAR_STEPS + 1 of them)."""
    linear = np.linspace(0.0, 1.0, LINEAR_STEPS + 1, dtype=np.float32)
    return np.clip(np.rint(to_display(linear) * 255.0), 0, 255).astype(np.uint8)


def _vignette_8bit(part: np.ndarray, amount: float, into: np.ndarray) -> None:
    """An 8-bit picture's darkening vignette (amount >= 0: no gain above 1, so nothing
    to protect), as `apply` makes it within a level, into `into` a band of rows at a
    time: each level's linear light from a table (OpenCV), times the band's gain, and
    each step of linear light's display level from a table."""
    lut = _level_linear().reshape(1, 256)
    display = _display_levels()
    h, w = part.shape[:2]
    rows = band_rows(w, 0)

    def band(y: int) -> None:
        count = min(rows, h - y)
        linear = cv2.LUT(np.ascontiguousarray(part[y : y + count, :, :3]), lut)
        steps = vignette_gain(amount, (y, h, w), count)[..., None] * np.float32(LINEAR_STEPS)
        index = linear * steps + np.float32(0.5)
        into[y : y + count] = display[index.astype(np.int32)]

    _on_every_core(band, range(0, h, rows))


def blur_sigma(amount: float, extra: Mapping[str, Any], shape: tuple[int, ...]) -> float:
    """A blur's Gaussian sigma in pixels: the radius asked for, else a region's blur
    scaled with the region (a face's), the picture's with the picture."""
    radius = extra.get("radius")
    side = float(extra.get("side") or min(shape[:2]))
    share = 0.05 if extra.get("side") else 0.012
    return float(radius) / 2 if radius else max(1.0, amount * share * side)


def _region_blur(part: np.ndarray, weight: np.ndarray, sigma: float, top: int) -> np.ndarray | None:
    """A wide blur of the region's own pixels (a subject beside a blurred background
    does not bleed into it as a halo), worked out where the blur is 8 pixels wide (as
    wide_blur does) and laid in through the weight a band of rows at a time: no float
    copy of the whole picture but the blur's, scaled back up once. None for a blur too
    narrow to scale down (made at full size)."""
    if sigma <= 8:
        return None
    h, w = part.shape[:2]
    scale = 8.0 / sigma
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    region = (weight > 0).view(np.uint8)
    inside = cv2.resize(region.astype(np.float32), size, interpolation=cv2.INTER_AREA)
    colours = rgb_contiguous(part)
    # the pixels outside the region are left out before scaling down (a scaled-down
    # pixel on the region's edge would carry the subject's colour into the blur)
    own = cv2.bitwise_and(colours, colours, mask=region)
    own_small = cv2.resize(own, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    del own
    small = cv2.resize(colours, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    spread = cv2.GaussianBlur(own_small, (0, 0), 8.0)
    share = cv2.GaussianBlur(inside, (0, 0), 8.0)[..., None]
    blurred = np.where(share > 1e-3, spread / np.maximum(share, 1e-3), small)
    blurred = cv2.resize(blurred, (w, h), interpolation=cv2.INTER_LINEAR)
    values = np.empty((h, w, 3), part.dtype)
    rows = band_rows(w, 0)

    def band(y: int) -> None:  # laid in through the weight, on every core
        v = colours[y : y + rows].astype(np.float32)
        mixed: np.ndarray = blurred[y : y + rows]  # (the blur, mixed in place)
        mixed -= v
        mixed *= weight[y : y + rows, :, None]
        mixed += v
        np.rint(mixed, out=mixed)
        values[y : y + rows] = np.clip(mixed, 0, top, out=mixed)

    _on_every_core(band, range(0, h, rows))
    return values


def _whole(
    op: str, amount: float, part: np.ndarray, weight: np.ndarray | None, extra: dict[str, Any]
) -> np.ndarray:
    top = 65535 if part.dtype == np.uint16 else 255
    if op == "blur" and weight is not None:
        made = _region_blur(part, weight, blur_sigma(amount, extra, part.shape), top)
        if made is not None:
            return made
    v = part[..., :3].astype(np.float32) / top
    if op == "denoise":
        eight = np.clip(np.rint(v * 255), 0, 255).astype(np.uint8)
        clean = denoise_8bit(eight, amount).astype(np.float32) / 255.0
        new = v + (clean - eight.astype(np.float32) / 255.0)  # 16 bits keep their steps
    elif op == "blur" and weight is not None:
        # only the region's own pixels are blurred together: a subject next to a blurred
        # background does not bleed into it as a halo
        inside = (weight > 0).astype(np.float32)
        spread = apply(op, amount, v * inside[..., None], extra)
        share = apply(op, amount, np.repeat(inside[..., None], 3, axis=2), extra)
        new = np.where(share > 1e-3, spread / np.maximum(share, 1e-3), v)
    else:
        new = apply(op, amount, v, extra)
    if weight is not None:
        new = v + (new - v) * weight[..., None]
    return np.clip(np.rint(new * top), 0, top).astype(part.dtype)


# --- a look: its recipe of adjustments and its own steps ------------------------------


#: steps that are one curve per colour channel: a run of them is made as one table
PER_CHANNEL = {"exposure", "contrast", "temperature", "tint", "curve", "fade"}
#: steps that change each colour alike wherever it lies: the run of them a look starts
#: with is made at 8 bits as one 3D LUT
POSITION_FREE = PER_CHANNEL | {"split_tone", "saturation", "vibrance", "black_and_white"}


def _runs(recipe: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The recipe's steps, consecutive per-channel ones grouped."""
    runs: list[list[dict[str, Any]]] = []
    for step in recipe:
        if runs and step["op"] in PER_CHANNEL and runs[-1][0]["op"] in PER_CHANNEL:
            runs[-1].append(step)
        else:
            runs.append([step])
    return runs


def _key(step: Mapping[str, Any]) -> str:
    return json.dumps(step, sort_keys=True)


@lru_cache(maxsize=64)
def _tables(steps: tuple[str, ...]) -> np.ndarray:
    """The run of per-channel steps worked out on every level once: (levels, 3)."""
    ramp = np.repeat(np.linspace(0.0, 1.0, TABLE_STEPS + 1, dtype=np.float32)[:, None, None], 3, 2)
    for text in steps:
        step = json.loads(text)
        op, amount = str(step["op"]), float(step.get("amount", 1.0))
        ramp = fade(ramp, amount) if op == "fade" else apply(op, amount, ramp, step)
    return np.clip(ramp[:, 0, :], 0.0, 1.0).astype(np.float32)


def _through_tables(v: np.ndarray, tables: np.ndarray) -> np.ndarray:
    index = np.clip(v, 0.0, 1.0) * np.float32(TABLE_STEPS) + np.float32(0.5)
    index = index.astype(np.int32)
    return np.stack([np.take(tables[:, c], index[..., c]) for c in range(3)], axis=-1)


def _inner(
    v: np.ndarray, rows: tuple[int, int, int] | None, inner: tuple[int, int]
) -> tuple[np.ndarray, tuple[int, int, int] | None]:
    """A band's own rows of a block read with a margin, and where they lie in the frame."""
    start, stop = inner
    if rows is not None:
        rows = (rows[0] + start, rows[1], rows[2])
    return v[start:stop], rows


def look_step(
    look: Look,
    styled: np.ndarray,
    steps: Sequence[Mapping[str, Any]],
    rows: tuple[int, int, int] | None,
    field: np.ndarray | None,
) -> np.ndarray:
    """One run of the look's steps (_runs) on float RGB `styled`: `rows` where its rows lie
    in the frame, `field` the whole picture's field of its glow or clarity."""
    if steps[0]["op"] in PER_CHANNEL:  # one table per channel for the whole run
        return _through_tables(styled, _tables(tuple(_key(step) for step in steps)))
    step = steps[0]
    op, amount = str(step["op"]), float(step.get("amount", 1.0))
    here = {**step, **({"rows": rows} if rows is not None else {})}
    if field is not None:
        here["field"] = field
    if op == "split_tone":
        return split_tone(styled, amount, step)
    if op == "hue_shift":
        return hue_shift(styled, amount, here)
    if op == "haze":
        return haze(styled, amount, here)
    if op == "glow":
        return glow(styled, amount, here)
    if op == "clarity":
        return clarity(styled, amount, here)
    if op == "fade":
        return fade(styled, amount)
    if op == "medium":
        return medium(styled, step)
    if op in ADJUSTMENTS:
        return apply(op, amount, styled, here)
    raise BadInput(f"look {look.name}: '{op}' is not a step layerpath knows.")


def render(
    look: Look,
    strength: float,
    v: np.ndarray,
    extra: Mapping[str, Any],
    until: int | None = None,
) -> np.ndarray:
    """The look at `strength` (0..1: the look laid over the picture at that opacity) on
    float RGB `v` (0..1); `extra` carries where a band of rows lies in the frame
    ("rows"), the whole picture's fields of its glow or clarity ("fields", by the index
    of its step in _runs) and, for a band read with a margin for the blurs, which of its
    rows are the band's own ("inner"): only those are made after the last blur, and
    returned; "begun" (index, picture): the picture as the runs before that index leave
    it, made already (_look_lut). `until`: the picture as the steps before that index
    leave it."""
    runs = _runs(look.recipe)
    fields = extra.get("fields") or {}
    inner = extra.get("inner")
    # after the last step that reads around a pixel, the margin rows are not needed
    last_blur = max((i for i, run in enumerate(runs) if run[0]["op"] in REACH), default=-1)
    rows = extra.get("rows")
    # ("begun": the picture as its first runs leave it, made through a 3D LUT)
    first, styled = extra.get("begun") or (0, v)
    if inner is not None and last_blur < 0:
        (v, rows), (styled, _) = _inner(v, rows, inner), _inner(styled, rows, inner)
    for index, steps in enumerate(runs):
        if index < first:
            continue
        if index == until:
            return styled
        if index - 1 == last_blur and inner is not None and last_blur >= 0:
            (styled, rows), (v, _) = _inner(styled, rows, inner), _inner(v, rows, inner)
        styled = look_step(look, styled, steps, rows, fields.get(index))
    if inner is not None and last_blur == len(runs) - 1:
        (styled, _), (v, _) = _inner(styled, rows, inner), _inner(v, rows, inner)
    return np.clip(v + strength * (styled - v), 0.0, 1.0).astype(np.float32)
