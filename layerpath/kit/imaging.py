"""Pixel helpers the checks and every tool family share: RGBA <-> RGB, masks, boxes of
masks, sectors and filters (colours by name: kit/colours.py)."""

from __future__ import annotations

import sys

import cv2
import numpy as np

from layerpath.errors import ToolFailed
from layerpath.kit.types import Box


def rgb(image: np.ndarray) -> np.ndarray:
    """The colour channels of an RGBA image (a view, no copy)."""
    return image[..., :3]


def with_rgb(image: np.ndarray, new_rgb: np.ndarray) -> np.ndarray:
    """A copy of the RGBA image with new colour channels and the old alpha."""
    out = image.copy()
    out[..., :3] = new_rgb
    return out


def differs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two RGBA pictures (8 or 16 bits, one shape) differ in any channel: each
    pixel's four channels compared as one integer (a quarter of the work)."""
    fast = a.dtype == b.dtype and a.dtype in (np.uint8, np.uint16)
    if fast and a.shape[-1] == 4 and a.strides[-1] == a.itemsize == b.strides[-1]:
        whole = np.uint32 if a.dtype == np.uint8 else np.uint64
        return a.view(whole)[..., 0] != b.view(whole)[..., 0]
    return np.any(a != b, axis=-1)


def opaque(pixels: np.ndarray) -> bool:
    """Whether every pixel of 8-bit RGBA is opaque (read as whole pixels where it can)."""
    if pixels.flags.c_contiguous and sys.byteorder == "little":
        return int(pixels.view(np.uint32).min()) >= 255 << 24
    return int(pixels[..., 3].min()) == 255


def paint_region(mask: np.ndarray, grow: int) -> np.ndarray:
    """The mask a painting tool works in: the given one grown by `grow` pixels; a clear
    error when it is empty."""
    region = dilate(mask, grow)
    if not region.any():
        raise ToolFailed("The mask to paint into is empty; select the object first.")
    return region


#: beyond this radius a distance transform is cheaper than a disc-shaped kernel (whose
#: cost grows with its size)
_KERNEL_LIMIT = 12


def dilate(mask: np.ndarray, pixels: int) -> np.ndarray:
    """The mask grown by a disc of `pixels` radius."""
    if pixels <= 0:
        return mask.copy()
    if pixels > _KERNEL_LIMIT:
        outside = np.ascontiguousarray(~mask).astype(np.uint8)
        return cv2.distanceTransform(outside, cv2.DIST_L2, cv2.DIST_MASK_PRECISE) <= pixels
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * pixels + 1, 2 * pixels + 1))
    return cv2.dilate(mask.astype(np.uint8), kernel).astype(bool)


def shrunk(mask: np.ndarray, size: tuple[int, int], whole: bool = False) -> np.ndarray:
    """The mask on a smaller grid (`size`: width, height): a pixel there wherever its
    area holds any of the mask, or with `whole` only where it lies wholly inside. (An
    8-bit area shrink rounds a pixel half outside the mask away: a hole's edge pixels
    would count as known and lend the object's colour to a fill.)"""
    share = cv2.resize(mask.astype(np.float32), size, interpolation=cv2.INTER_AREA)
    return share >= 1.0 - 1e-4 if whole else share > 1e-4


def erode(mask: np.ndarray, pixels: int) -> np.ndarray:
    """The mask shrunk by a disc of `pixels` radius."""
    if pixels <= 0:
        return mask.copy()
    if pixels > _KERNEL_LIMIT:
        inside = np.ascontiguousarray(mask).astype(np.uint8)
        return cv2.distanceTransform(inside, cv2.DIST_L2, cv2.DIST_MASK_PRECISE) > pixels
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * pixels + 1, 2 * pixels + 1))
    return cv2.erode(mask.astype(np.uint8), kernel).astype(bool)


def main_pieces(mask: np.ndarray, share: float = 0.05) -> np.ndarray:
    """The mask's pieces that hold most of it: each at least `share` of the largest
    (specks a segmentation left go)."""
    count, parts, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8))
    if count <= 2:
        return mask.astype(bool)
    areas = stats[1:, cv2.CC_STAT_AREA]
    return np.isin(parts, 1 + np.flatnonzero(areas >= share * areas.max()))


def moved_edge(mask: np.ndarray, pixels: int) -> np.ndarray:
    """The region grown by `pixels` (shrunk when negative)."""
    if pixels > 0:
        return dilate(mask, pixels)
    if pixels < 0:
        return erode(mask, -pixels)
    return mask


def nearest_of(source: np.ndarray, where: np.ndarray) -> np.ndarray:
    """For each pixel of `where` (in np.nonzero order), the flat index of the nearest
    pixel of `source` (Euclidean distance): a hole's pixels given the ground's nearest
    colour, a band inside an edge paired with the band outside it."""
    _, labels = cv2.distanceTransformWithLabels(
        (~source).astype(np.uint8), cv2.DIST_L2, 5, labelType=cv2.DIST_LABEL_PIXEL
    )
    at = np.flatnonzero(source.ravel())
    lookup = np.zeros(int(labels.max()) + 1, np.int64)
    lookup[labels.ravel()[at]] = at  # (each source pixel carries its own label)
    return lookup[labels[where]]


def on_picture_edges(picture: np.ndarray, region: np.ndarray, reach: int) -> np.ndarray:
    """The region (bool) with its outline moved onto the picture's (RGB or RGBA, 8 or 16
    bits, the region's size) own edges within `reach` pixels: the watershed of the picture between
    the region well inside its outline and what lies well outside it (a mask found on a
    coarser grid stops a pixel or two short of a ridge, and in each valley). Pieces and
    holes too thin to keep a core at `reach` stay as they are (a sky seen between twigs,
    a wire across it)."""
    region = region.astype(bool)
    if reach <= 0 or region.all() or not region.any():
        return region

    def sure(part: np.ndarray) -> np.ndarray:
        core = erode(part, reach)
        return core | (part & ~dilate(core, reach + 1))

    flooded = watershed(picture, sure(region), sure(~region))
    # (a boundary pixel goes with the region where the region had it)
    return (flooded == 1) | ((flooded == -1) & region)


def watershed(picture: np.ndarray, inside: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """Meyer's flooding (OpenCV's watershed) of the picture's edges (RGB or RGBA, 8 or 16
    bits, softened by a pixel) from two markers: the labels 1 (flooded from `inside`), 2
    (from `outside`, which wins where both are marked) and -1 (between them)."""
    markers = np.zeros(inside.shape, np.int32)
    markers[inside] = 1
    markers[outside] = 2
    eight = picture if picture.dtype == np.uint8 else (picture // 257).astype(np.uint8)
    soft = cv2.GaussianBlur(np.ascontiguousarray(rgb(eight)), (0, 0), 0.8)
    return cv2.watershed(np.ascontiguousarray(soft), markers)


def ring(mask: np.ndarray, width: int) -> np.ndarray:
    """The band of pixels just outside the mask."""
    return dilate(mask, width) & ~mask


def mask_box(mask: np.ndarray, pad: int = 0) -> Box | None:
    """The bounding box of the mask, padded and clipped to the image; None if empty."""
    rows = np.flatnonzero(mask.any(axis=1))  # projections: no index arrays per pixel
    if len(rows) == 0:
        return None
    columns = np.flatnonzero(mask[rows[0] : rows[-1] + 1].any(axis=0))
    h, w = mask.shape
    return Box(
        max(0, int(columns[0]) - pad),
        max(0, int(rows[0]) - pad),
        min(w, int(columns[-1]) + 1 + pad),
        min(h, int(rows[-1]) + 1 + pad),
    )


def component_boxes(mask: np.ndarray, label: str, min_area: int = 16) -> tuple[Box, ...]:
    """One box per connected region of the mask (an instance per region)."""
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    boxes = []
    for i in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[i])
        if area >= min_area:
            boxes.append(Box(x, y, x + w, y + h, label=label))
    return tuple(boxes)


def boxes_mask(shape: tuple[int, int], boxes: tuple[Box, ...] | list[Box]) -> np.ndarray:
    mask = np.zeros(shape, dtype=bool)
    for b in boxes:
        mask[b.y0 : b.y1, b.x0 : b.x1] = True
    return mask


def model_size(image_shape: tuple[int, ...], resolution: int) -> tuple[int, int]:
    """(width, height) with the long side `resolution` (never larger than the photo),
    both multiples of 8 as Stable Diffusion's VAE and LaMa need."""
    h, w = image_shape[:2]
    scale = min(1.0, resolution / max(h, w))
    return max(8, int(round(w * scale / 8)) * 8), max(8, int(round(h * scale / 8)) * 8)


def drop_rules(ink: np.ndarray) -> np.ndarray:
    """The ink of a text box without the straight rules running across it: a sign's frame
    or a table's lines (a component nearly as tall as the box and thin, or nearly as wide
    and flat). Letters are shorter than their box."""
    h, w = ink.shape
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    keep = np.ones(count, bool)
    keep[0] = False
    for part in range(1, count):
        bw, bh = int(stats[part, cv2.CC_STAT_WIDTH]), int(stats[part, cv2.CC_STAT_HEIGHT])
        vertical = bh >= 0.85 * h and bw <= max(2, 0.2 * h)
        horizontal = bw >= 0.85 * w and bh <= max(2, 0.2 * h)
        keep[part] = not (vertical or horizontal)
    return keep[labels]


def angular_sectors(
    region: np.ndarray, sectors: int = 8
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The region's pixels (rows, columns) and the angular sector around the region's
    centre each lies in (0 .. sectors - 1)."""
    ys, xs = np.nonzero(region)
    angle = np.arctan2(ys - ys.mean(), xs - xs.mean())
    sector = ((angle + np.pi) / (2 * np.pi) * sectors).astype(int) % sectors
    return ys, xs, sector


def sector_energy(
    values: np.ndarray, region: np.ndarray, sectors: int = 8, statistic: float | None = None
) -> np.ndarray:
    """The mean (or the `statistic` percentile) of `values` in each angular sector of
    `region` around its centre (sectors with too few pixels left out)."""
    ys, xs, sector = angular_sectors(region, sectors)
    found = []
    for k in range(sectors):
        chosen = values[ys[sector == k], xs[sector == k]]
        if len(chosen) >= 8:
            found.append(chosen.mean() if statistic is None else np.percentile(chosen, statistic))
    return np.array(found or [0.0], np.float32)


def mean_near(values: np.ndarray, where: np.ndarray, sigma: float) -> np.ndarray:
    """`values` (H x W x C) averaged over the nearby pixels of `where`, carried across
    the pixels between them (normalised convolution, float32)."""
    return mean_and_reach_near(values, where, sigma)[0]


def mean_and_reach_near(
    values: np.ndarray, where: np.ndarray, sigma: float
) -> tuple[np.ndarray, np.ndarray]:
    """mean_near's average, and where it averages pixels of `where` at all: within about
    2.3 sigma of them (a weight of 1 %); past that it is an average of nothing."""
    weight = cv2.GaussianBlur(where.astype(np.float32), (0, 0), sigma)
    spread = cv2.GaussianBlur((values * where[..., None]).astype(np.float32), (0, 0), sigma)
    return spread / np.maximum(weight, 1e-4)[..., None], weight > 0.01


def rgb_contiguous(image: np.ndarray) -> np.ndarray:
    """A picture's colours (RGB of RGB or RGBA, any depth), contiguous (OpenCV's RGBA to
    RGB: a twentieth of numpy's strided copy)."""
    if image.shape[2] == 4:
        return cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGBA2RGB)
    return np.ascontiguousarray(image)


#: the most points one cv2.remap call is given along a side (OpenCV refuses a map with a
#: side of SHRT_MAX, 32767, or more)
_REMAP_SIDE = 16384


def sample_at(
    picture: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
    interpolation: int = cv2.INTER_LINEAR,
    border: int = cv2.BORDER_REPLICATE,
) -> np.ndarray:
    """The picture's values at the points (xs, ys), between pixels as `interpolation`
    says and past its edge as `border` says: (number of points, channels). Any number
    of points: they are laid out in rows of _REMAP_SIDE for OpenCV, which samples each
    point alone, so the layout changes no value."""
    count = len(xs)
    channels = picture.shape[2] if picture.ndim == 3 else 1
    if count == 0:
        return np.zeros((0, channels), picture.dtype)
    rows, side = -(-count // _REMAP_SIDE), min(count, _REMAP_SIDE)
    pad = rows * side - count
    map_x = np.pad(np.asarray(xs, np.float32), (0, pad)).reshape(rows, side)
    map_y = np.pad(np.asarray(ys, np.float32), (0, pad)).reshape(rows, side)
    found = cv2.remap(picture, map_x, map_y, interpolation, borderMode=border)
    return found.reshape(rows * side, channels)[:count]


def guided_filter(guide: np.ndarray, values: np.ndarray, radius: int, eps: float) -> np.ndarray:
    """He, Sun and Tang's guided filter: `values` (float32, H x W) smoothed where the
    grey `guide` (float32 0..1, same size) is smooth and kept sharp along its edges."""
    size = (2 * radius + 1, 2 * radius + 1)
    box = lambda a: cv2.boxFilter(a, cv2.CV_32F, size, borderType=cv2.BORDER_REFLECT)  # noqa: E731
    mean_guide, mean_values = box(guide), box(values)
    variance = box(guide * guide) - mean_guide * mean_guide
    slope = (box(guide * values) - mean_guide * mean_values) / (variance + eps)
    offset = mean_values - slope * mean_guide
    return box(slope) * guide + box(offset)


def guided_mask(mask: np.ndarray, picture: np.ndarray) -> np.ndarray:
    """A mask found on a small copy (bool), at the picture's size with its outline moved
    onto the picture's own edges: scaled up smoothly, then snapped by a guided filter on
    the picture's grey values within a few small-copy pixels of the outline (a sky's
    edge along a ridge, not a band of the old sky above it; no stair steps). Only the
    band around the outline is worked on, so a camera file costs what its outline does."""
    h, w = picture.shape[:2]
    if mask.shape == (h, w):
        return mask.astype(bool)
    scale = max(h / mask.shape[0], w / mask.shape[1])
    soft = cv2.resize(mask.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    radius = max(2, round(1.5 * scale))
    unsure = (soft > 0.02) & (soft < 0.98)
    band = mask_box(unsure, pad=3 * radius)
    if band is None:
        return soft > 0.5
    y0, y1, x0, x1 = band.y0, min(h, band.y1), band.x0, min(w, band.x1)
    part = np.ascontiguousarray(rgb(picture[y0:y1, x0:x1]))
    top = 65535.0 if part.dtype == np.uint16 else 255.0
    grey = (part.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)) / top
    snapped = guided_filter(grey, soft[y0:y1, x0:x1], radius, 1e-3)
    near = cv2.dilate(unsure[y0:y1, x0:x1].astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    out = soft > 0.5
    out[y0:y1, x0:x1] = np.where(near, snapped > 0.5, out[y0:y1, x0:x1])
    return out


#: Rec. 709's luma weights, as OpenCV's channel transform takes them
LUMA_WEIGHTS = np.array([[0.2126, 0.7152, 0.0722]], np.float32)


def luma(v: np.ndarray) -> np.ndarray:
    """Rec. 709 weights on the given values (float RGB): float32. A picture's is
    OpenCV's channel transform, one pass (numpy's five passes over strided channels
    took eight times as long)."""
    if v.ndim == 3 and v.shape[2] == 3 and v.dtype == np.float32 and v.size:
        grey = cv2.transform(np.ascontiguousarray(v), LUMA_WEIGHTS)
        return grey.reshape(v.shape[:2])
    return (v[..., 0] * 0.2126 + v[..., 1] * 0.7152 + v[..., 2] * 0.0722).astype(np.float32)


def smoothstep(lo: float, hi: float, x: np.ndarray) -> np.ndarray:
    """0 below `lo`, 1 above `hi`, a smooth S between (worked in place: one new array
    for an array's, not six)."""
    if hi == lo:  # (a hard step)
        return np.asarray(np.greater_equal(x, lo), np.float32)
    if np.ndim(x) == 0:
        s = min(max((float(x) - lo) / (hi - lo), 0.0), 1.0)
        return np.asarray(s * s * (3 - 2 * s))
    t = np.subtract(x, lo, dtype=np.result_type(x, np.float32))
    t *= 1.0 / (hi - lo)
    np.clip(t, 0.0, 1.0, out=t)
    s = t * t
    t *= -2.0
    t += 3.0
    s *= t
    return s


def wide_blur(v: np.ndarray, sigma: float) -> np.ndarray:
    """A Gaussian blur of any width at a small blur's cost: a wide one is made on a copy
    scaled down so that it is 8 pixels wide there, then scaled back up."""
    if sigma <= 8:
        return cv2.GaussianBlur(v, (0, 0), sigma)
    h, w = v.shape[:2]
    scale = 8.0 / sigma
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.GaussianBlur(cv2.resize(v, size, interpolation=cv2.INTER_AREA), (0, 0), 8.0)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def noise_sigma(grey: np.ndarray) -> float:
    """The picture's noise level in grey levels (the median absolute deviation of the
    finest detail, Donoho's estimator on a Laplacian-like residual)."""
    residual = grey - cv2.blur(grey, (3, 3))
    return float(np.median(np.abs(residual)) * 1.4826 * 1.125)


def small_copy(image: np.ndarray, resolution: int) -> np.ndarray:
    """The picture's colours (an RGB picture's, or an RGBA one's RGB) at most
    `resolution` pixels on its long side, area-averaged. (An RGBA picture is scaled
    whole and its colours taken from the copy: its RGB view, not contiguous, was copied
    whole first: 0.2 s of a 20 MP photo.)"""
    h, w = image.shape[:2]
    scale = min(1.0, resolution / max(h, w))
    if scale == 1.0:
        return rgb(image) if image.ndim == 3 and image.shape[2] == 4 else image
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return rgb_contiguous(small) if small.ndim == 3 else small
