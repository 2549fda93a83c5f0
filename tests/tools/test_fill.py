"""Exemplar-based removal (patch_fill) copies real texture into the hole where OpenCV's
diffusion fills smear; on photos: scikit-image's grass and gravel (they ship inside the
scikit-image package), at their size and tiled to a larger picture (the completion then
runs on a scaled-down copy and adds the photo's own detail back)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from layerpath.kit.imaging import ring
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.registry import Registry

data = pytest.importorskip("skimage.data")


def photo(name: str, tiles: int = 1) -> np.ndarray:
    grey = np.tile(getattr(data, name)(), (tiles, tiles))
    return np.dstack([grey, grey, grey, np.full(grey.shape, 255, np.uint8)])


def hole(shape: tuple[int, ...], scale: int = 1) -> np.ndarray:
    mask = np.zeros(shape[:2], np.uint8)
    h, w = shape[:2]
    cv2.ellipse(mask, (w // 2, h // 2), (60 * scale, 40 * scale), 20, 0, 360, 1, -1)
    return mask > 0


def texture_kept(image: np.ndarray, after: np.ndarray, mask: np.ndarray) -> float:
    """Gradient energy inside the filled hole relative to the ring around it."""
    grey = cv2.cvtColor(np.ascontiguousarray(after[..., :3]), cv2.COLOR_RGB2GRAY).astype(np.float32)
    energy = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))
    return float(energy[mask].mean() / energy[ring(mask, 20)].mean())


def remove(tool: str, image: np.ndarray, mask: np.ndarray, **params: object) -> np.ndarray:
    chosen = Registry.from_catalogue().get(tool)
    result = chosen.run(
        ToolContext(SubtaskKind.OBJECT_REMOVAL, "stone"),
        {ArtifactKind.IMAGE: image, ArtifactKind.MASK: mask},
        {**chosen.spec.param_schedule()[0], **params},
    )
    out = result.outputs[ArtifactKind.IMAGE]
    assert np.array_equal(out[~mask], image[~mask]) or result.window is not None
    return out


@pytest.mark.parametrize("name", ["grass", "gravel"])
def test_patch_fill_keeps_the_texture_that_telea_smears(name: str) -> None:
    image = photo(name)
    mask = hole(image.shape)
    smeared = texture_kept(image, remove("opencv_telea", image, mask), mask)
    filled = remove("patch_fill", image, mask)
    assert smeared < 0.3 and texture_kept(image, filled, mask) > 0.6, name
    grown = cv2.dilate(mask.astype(np.uint8), np.ones((11, 11), np.uint8)) > 0
    assert np.array_equal(filled[~grown], image[~grown])  # nothing changes away from the hole


def test_patch_fill_is_repeatable_and_its_seed_matters() -> None:
    image = photo("gravel")
    mask = hole(image.shape)
    first = remove("patch_fill", image, mask)
    assert np.array_equal(first, remove("patch_fill", image, mask))
    assert not np.array_equal(first, remove("patch_fill", image, mask, seed=5))


@pytest.mark.slow
def test_patch_fill_on_a_large_picture_keeps_its_own_grain() -> None:
    """A window too large to complete at full size: completed on a smaller copy, with the
    photo's detail carried back by the matches (a plain enlargement would be soft)."""
    image = photo("gravel", tiles=3)
    mask = hole(image.shape, scale=4)
    filled = remove("patch_fill", image, mask)
    assert texture_kept(image, filled, mask) > 0.6
    assert texture_kept(image, remove("opencv_telea", image, mask), mask) < 0.2


def test_patch_fill_carries_an_edge_straight_through_the_hole() -> None:
    """A ball in front of where a wall meets the floor (a generated picture: noisy purple
    over noisy grey): the line runs on straight where the ball was, with no mound of
    floor rising into the wall and no tint (the fill was once rebuilt as a grey mound
    under a paler disc)."""
    rng = np.random.default_rng(0)
    h, w, line = 240, 320, 170
    image = np.zeros((h, w, 4), np.uint8)
    image[..., 3] = 255
    image[:line, :, :3] = (98, 68, 204)
    image[line:, :, :3] = (128, 128, 128)
    image[..., :3] = np.clip(image[..., :3] + rng.normal(0, 4, (h, w, 1)), 0, 255)
    mask = np.zeros((h, w), np.uint8)
    cv2.circle(mask, (90, 150), 28, 1, -1)  # reaches 8 px below the line
    image[mask > 0, :3] = (200, 30, 30)
    filled = remove("patch_fill", image, mask > 0)[..., :3].astype(int)
    columns = slice(70, 111)  # the middle of the hole
    wall, floor = filled[128 : line - 2, columns], filled[line + 2 : 178, columns]
    assert np.abs(wall - (98, 68, 204)).max(axis=2).mean() < 14  # wall, untinted
    assert np.abs(floor - (128, 128, 128)).max(axis=2).mean() < 14  # floor


@pytest.mark.parametrize("ground", ["soft", "gravel"])
def test_a_line_entering_the_hole_continues_through_it(ground: str) -> None:
    """A bright wire (5 px, slanted) crosses an object on soft dark ground and on
    scikit-image's gravel: the fill carries it straight across, as bright as outside
    and where it was, and the ground either side is ground again (a patch fill left
    it broken in two, a smooth fill blurred it into a disc)."""
    rng = np.random.default_rng(0)
    h, w = 300, 400
    if ground == "soft":
        base = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 3)
        grey = np.clip(60 + base * 8, 0, 255)
    else:
        grey = cv2.resize(data.gravel(), (w, h)).astype(np.float32) * 0.5
    image = np.dstack([grey, grey, grey, np.full((h, w), 255.0)]).astype(np.uint8)
    cv2.line(image, (0, 80), (399, 230), (230, 225, 210, 255), 5, cv2.LINE_AA)
    truth = image.copy()
    mask = np.zeros((h, w), np.uint8)
    cv2.circle(mask, (200, 155), 45, 1, -1)
    image[mask > 0, :3] = (200, 30, 30)
    filled = remove("patch_fill", image, mask > 0)[..., :3].astype(float)
    wire = np.zeros((h, w), np.uint8)
    cv2.line(wire, (0, 80), (399, 230), 1, 3)
    on = (wire > 0) & (mask > 0)
    off = (mask > 0) & ~(cv2.dilate(wire, np.ones((11, 11), np.uint8)) > 0)
    assert np.abs(filled[on] - truth[on, :3]).mean() < 25  # the wire, where it was
    assert filled[off].mean() < truth[off, :3].mean() + 25  # no glow or wire elsewhere


def test_no_line_is_carried_across_grass() -> None:
    """Grass is edges every which way: nothing there is a line to carry."""
    from layerpath.tools.lines import carry_lines

    grass = np.asarray(data.grass())
    picture = np.dstack([grass, grass, grass])
    mask = hole(picture.shape)
    _, rest, _ = carry_lines(picture, mask)
    assert (mask & ~rest).sum() < 0.05 * mask.sum()


def test_patch_fill_fills_out_of_focus_ground_smoothly() -> None:
    """On out-of-focus ground (a generated picture: soft blobs of colour, as a wide
    aperture renders what lies behind the subject, with a little sensor noise) copied
    patches pieced the soft gradient together from hard-edged blocks (their sharpest
    edges 5x the ring's here; Telea's streaks 5x too); there the fill is smooth, with the
    photo's grain, and about as close to what was under the object as Telea's."""
    from layerpath.tools.patchmatch import SMOOTH_BELOW, ring_texture

    rng = np.random.default_rng(0)
    field = cv2.GaussianBlur(rng.normal(0, 1, (400, 600, 3)).astype(np.float32), (0, 0), 40)
    field = 128 + field / np.abs(field).max() * 90
    soft = np.clip(field + rng.normal(0, 1.5, field.shape), 0, 255).astype(np.uint8)
    image = np.dstack([soft, np.full(soft.shape[:2], 255, np.uint8)])
    mask = hole(image.shape)
    assert ring_texture(soft, mask) < SMOOTH_BELOW <= ring_texture(photo("gravel")[..., :3], mask)
    before = image.copy()
    before[mask, :3] = (30, 160, 40)  # the object
    filled = remove("patch_fill", before, mask)[..., :3].astype(np.float32)
    grey = cv2.cvtColor(filled.astype(np.uint8), cv2.COLOR_RGB2GRAY).astype(np.float32)
    edges = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))
    inside = cv2.erode(mask.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    assert np.percentile(edges[inside], 99) <= 1.5 * np.percentile(edges[ring(mask, 20)], 99)
    error = np.abs(filled[inside] - field[inside]).mean()  # from what was under it
    telea = remove("opencv_telea", before, mask)[..., :3].astype(np.float32)
    assert error <= 1.3 * np.abs(telea[inside] - field[inside]).mean()


def test_pieces_copied_from_lighter_and_darker_ground_are_fused_without_a_seam() -> None:
    """A hole whose left half is copied from darker ground and its right half from
    lighter ground (as a patch fill of uneven ground may): the fill is made one surface,
    with no step at the seam or at the hole's edge, and keeps the copied grain."""
    from layerpath.tools import patchmatch

    rng = np.random.default_rng(0)
    lab = np.zeros((120, 320, 3), np.float32)
    lab[..., 0] = 50.0
    lab[:, 200:, 0] = 65.0  # lighter ground on the right
    lab[..., 0] += rng.normal(0, 2.0, lab.shape[:2]).astype(np.float32)
    hole = np.zeros(lab.shape[:2], bool)
    hole[40:80, 60:140] = True
    level = patchmatch._level(lab, hole, np.zeros(hole.shape, np.int32))
    source_y, source_x = np.mgrid[0:120, 0:320]
    left, right = hole & (source_x < 100), hole & (source_x >= 100)
    source_x = source_x.copy()
    source_x[left] -= 50  # from x 10..50: dark
    source_x[right] += 110  # from x 210..250: light
    copied = lab[source_y, source_x]
    fused = patchmatch._seamless(level, source_y, source_x)
    columns = lambda picture: picture[40:80, 50:150, 0].mean(axis=0)  # noqa: E731
    assert np.abs(np.diff(columns(copied))).max() > 10  # the seams as copied
    assert np.abs(np.diff(columns(fused))).max() < 2.0
    grain = lambda picture: float(np.diff(picture[40:80, 62:138, 0], axis=1).std())  # noqa: E731
    assert 0.8 < grain(fused) / grain(copied) < 1.2


@pytest.mark.parametrize("tiles, scale", [(1, 1), (2, 3)])
def test_a_patch_fill_is_worked_out_again_at_16_bits(tiles: int, scale: int) -> None:
    """Gravel as a 16-bit photo (its 8-bit values x 257 plus detail finer than 8 bits):
    the accepted fill made again at 16 bits (run_deep, from the picture the step saw) is
    the 8-bit fill within a level or two, its copied pixels carry their sources' 16-bit
    values (not 8-bit ones scaled), and every pixel away from the hole is the photo's own.
    The larger window is completed on a scaled-down copy; its grain comes back at 16 bits."""
    image = photo("gravel", tiles)
    mask = hole(image.shape, scale)
    rng = np.random.default_rng(4)
    deep = image.astype(np.uint16) * 257 + rng.integers(0, 128, image.shape, dtype=np.uint16)
    deep[..., 3] = 65535
    tool = Registry.from_catalogue().get("patch_fill")
    params = tool.spec.param_schedule()[0]
    inputs = {ArtifactKind.IMAGE: image, ArtifactKind.MASK: mask}
    eight = remove("patch_fill", image, mask)
    redo = tool.run_deep(ToolContext(SubtaskKind.OBJECT_REMOVAL, "stone"), inputs, params, deep)
    assert redo.dtype == np.uint16 and redo.shape == deep.shape
    grown = cv2.dilate(mask.astype(np.uint8), np.ones((11, 11), np.uint8)) > 0
    assert np.array_equal(redo[~grown], deep[~grown])
    inside = redo[mask][:, :3].astype(np.float64)
    offset = np.abs(inside / 257.0 - eight[mask][:, :3])
    assert offset.mean() < 1.0 and offset.max() < 3.5
    assert (inside % 257 != 0).mean() > 0.5


def _ground_with_a_wire() -> np.ndarray:
    """Soft noisy dark ground (generated), a bright wire across it, slightly slanted."""
    rng = np.random.default_rng(0)
    base = cv2.GaussianBlur(rng.normal(0, 1, (600, 800)).astype(np.float32), (0, 0), 2)
    grey = np.clip(60 + base * 30, 0, 255).astype(np.uint8)
    picture = np.dstack([grey, grey, grey])
    cv2.line(picture, (0, 280), (799, 320), (235, 230, 220), 5, cv2.LINE_AA)
    return picture


def _green(picture: np.ndarray) -> np.ndarray:
    """How much greener than grey each pixel is."""
    rgb = picture.astype(int)
    return rgb[..., 1] - (rgb[..., 0] + rgb[..., 2]) // 2


def test_a_fill_worked_out_small_takes_no_colour_from_the_object() -> None:
    """A green thing right up to the hole's edge (as where a carried line's band meets
    the rest of the hole), in a window large enough to be completed on a scaled-down
    copy: the fill holds no green. (A scaled-down pixel less than half over the hole once
    counted as known ground, object and all: a green patch left in a 24 MP removal
    reported done; this picture's fill was up to 76 levels green.)"""
    from layerpath.tools.patchmatch import WORK_PIXELS, fill_window

    picture = np.ascontiguousarray(np.tile(_ground_with_a_wire(), (2, 2, 1))[:900, :1300])
    assert picture.shape[0] * picture.shape[1] > 2 * WORK_PIXELS
    mask = np.zeros(picture.shape[:2], np.uint8)
    cv2.ellipse(mask, (650, 450), (260, 200), 10, 0, 360, 1, -1)
    picture[mask > 0] = (40, 210, 40)
    filled = fill_window(picture, mask > 0)
    assert _green(filled)[mask > 0].max() < 20


@pytest.mark.parametrize("sliver", [1, 2, 3])
def test_a_carried_line_reads_no_colour_past_a_sliver_of_ground(sliver: int) -> None:
    """The wire crosses a green thing with a sliver of ground (1-3 px) through it, as
    between a broccoli's stems: the band carried across holds no green (it was up to
    178 levels green, read past the sliver into the object)."""
    from layerpath.tools.lines import carry_lines

    picture = _ground_with_a_wire()
    mask = np.zeros(picture.shape[:2], np.uint8)
    cv2.ellipse(mask, (400, 300), (160, 120), 10, 0, 360, 1, -1)
    mask[:, 330 : 330 + sliver] = 0
    picture[mask > 0] = (40, 210, 40)
    carried, rest, _ = carry_lines(picture, mask > 0)
    band = (mask > 0) & ~rest
    assert band.sum() > 2000  # the wire is carried
    assert _green(carried)[band].max() < 20


def test_a_carried_edge_has_no_bright_rim() -> None:
    """A sharp, slanted edge between a light wall and a dark shadow (generated, with a
    little grain) crosses the hole: the band carried over it stays between the two
    sides' levels. (The photo's grain was once mirrored in a pixel off across the edge,
    adding the edge's own step: a rim brighter than the wall, seen on a held-out photo.)"""
    from layerpath.tools.lines import carry_lines

    rng = np.random.default_rng(0)
    h, w = 300, 400
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    across = (yy - 120) - 0.41 * (xx - 200)  # a 22-degree edge
    grey = np.where(across < 0, 205.0, 30.0 + 0.1 * across)
    grey = cv2.GaussianBlur(grey.astype(np.float32), (0, 0), 0.7) + rng.normal(0, 1.5, (h, w))
    picture = np.dstack([np.clip(grey, 0, 255).astype(np.uint8)] * 3)
    mask = np.zeros((h, w), np.uint8)
    cv2.circle(mask, (200, 130), 40, 1, -1)
    picture[mask > 0] = (200, 30, 30)
    carried, rest, _ = carry_lines(picture, mask > 0)
    band = (mask > 0) & ~rest
    assert band.sum() > 200  # the edge is carried
    assert carried[band].max() <= 205 + 8 and carried[band].min() >= 30 - 8


def test_an_out_of_focus_band_carries_on_through_the_hole() -> None:
    """A blurred dark treeline over lighter water (generated: a soft band, a little
    grain), too soft for a line to be found: the fill carries the band on straight, as
    it runs outside, instead of a disc of the ring's mean colour (a held-out photo's
    treeline got such a disc, 21 dB in the mask)."""
    rng = np.random.default_rng(0)
    h, w = 300, 420
    rows = np.arange(h, dtype=np.float32)[:, None]
    band = 1.0 / (1.0 + np.exp(-(rows - 100) / 14.0)) - 1.0 / (1.0 + np.exp(-(rows - 160) / 14.0))
    grey = 190.0 - 140.0 * band + 0.03 * (rows - 150)
    grey = np.repeat(grey, w, axis=1) + rng.normal(0, 0.8, (h, w))
    truth = np.dstack(
        [np.clip(grey, 0, 255).astype(np.uint8)] * 3 + [np.full((h, w), 255, np.uint8)]
    )
    mask = np.zeros((h, w), np.uint8)
    cv2.circle(mask, (210, 140), 50, 1, -1)
    image = truth.copy()
    image[mask > 0, :3] = (200, 40, 40)
    from layerpath.tools.lines import crossing_lines

    assert not crossing_lines(np.ascontiguousarray(image[..., :3]), mask > 0)  # too soft
    filled = remove("patch_fill", image, mask > 0)[..., :3].astype(float)
    inside = mask > 0
    error = np.abs(filled[inside] - truth[inside, :3].astype(float)).mean()
    assert error < 4.0, error  # (a disc of the ring's mean colour: 36 levels off)


def test_patch_fill_says_which_way_it_filled() -> None:
    """Copied patches on gravel, a smooth fill on soft ground: the result says which
    (settled), so trials of the same fill elsewhere are made the same way."""
    from layerpath.tools.inpaint import ALWAYS_SMOOTH

    chosen = Registry.from_catalogue().get("patch_fill")
    gravel = photo("gravel")
    soft = np.full_like(gravel, 255)
    soft[..., :3] = np.linspace(90, 160, soft.shape[0], dtype=np.uint8)[:, None, None]
    for image, smooth_below in ((gravel, 0.0), (soft, ALWAYS_SMOOTH)):
        made = chosen.run(
            ToolContext(SubtaskKind.OBJECT_REMOVAL, "stone"),
            {ArtifactKind.IMAGE: image, ArtifactKind.MASK: hole(image.shape)},
            chosen.spec.param_schedule()[0],
        )
        assert made.settled == {"smooth_below": smooth_below}


def test_soft_ground_is_filled_along_its_way_through_a_hole_of_any_size() -> None:
    """Soft horizontal bands (out-of-focus ground, generated) with a hole of 300 by 300
    pixels: more hole pixels than OpenCV takes in one sampling map (32767; `layerpath
    bench checks --held-out` stopped on it), and the bands still run on through it."""
    from layerpath.tools.lines import fill_along

    h, w = 600, 800
    rows = np.arange(h, dtype=np.float32)[:, None]
    level = 120 + 60 * np.sin(rows / 40.0)
    rgb = np.clip(np.dstack([level, level * 0.8, level * 0.6]) * np.ones((1, w, 1)), 0, 255)
    rgb = rgb.astype(np.uint8)
    hole = np.zeros((h, w), bool)
    hole[150:450, 250:550] = True
    painted = fill_along(rgb, hole)
    assert painted is not None
    filled = painted[0][hole].reshape(300, 300, 3).astype(np.float32)
    truth = rgb[hole].reshape(300, 300, 3).astype(np.float32)
    assert np.abs(filled - truth).mean() < 6


def test_points_are_sampled_as_opencv_samples_them_however_many() -> None:
    """kit/imaging's sample_at gives what one cv2.remap call gives for the points it can
    take, bit for bit, and takes any number more (OpenCV refuses a map side of 32767)."""
    from layerpath.kit.imaging import sample_at

    rng = np.random.default_rng(2)
    picture = rng.random((300, 400, 3)).astype(np.float32)
    xs, ys = rng.uniform(-5, 405, 30000), rng.uniform(-5, 305, 30000)
    direct = cv2.remap(
        picture,
        xs.astype(np.float32).reshape(1, -1),
        ys.astype(np.float32).reshape(1, -1),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    ).reshape(-1, 3)
    assert np.array_equal(sample_at(picture, xs, ys), direct)
    many_x, many_y = np.concatenate([xs, xs, xs]), np.concatenate([ys, ys, ys])
    assert np.array_equal(sample_at(picture, many_x, many_y), np.concatenate([direct] * 3))
    assert sample_at(picture, xs[:0], ys[:0]).shape == (0, 3)
