"""Crops for model tools: a window around the target at model resolution, pasted back
with a feathered edge; nothing outside changes, and a large photo is never resized."""

from __future__ import annotations

import numpy as np

from layerpath.kit.types import Box
from layerpath.tools.crops import crop_for_model, crop_window, paste_back


def photo(h: int, w: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    image[..., 3] = 255
    return image


def test_the_window_is_padded_at_least_min_side_and_inside_the_photo() -> None:
    window = crop_window((1000, 1000), Box(400, 400, 500, 450), padding=0.5, min_side=256)
    assert window.x0 <= 350 and window.x1 >= 550 and window.y0 <= 350 and window.y1 >= 500
    assert window.width >= 256 and window.height >= 256
    corner = crop_window((300, 400), Box(0, 0, 20, 20), padding=0.5, min_side=256)
    assert corner.x0 == 0 and corner.y0 == 0 and corner.x1 <= 400 and corner.y1 <= 300
    assert corner.width >= 256 and corner.height >= 256
    small = crop_window((100, 120), Box(10, 10, 30, 30), min_side=256)
    assert small == Box(0, 0, 120, 100)  # the whole (small) photo


def test_a_24_megapixel_photo_is_cropped_not_resized() -> None:
    image = photo(4000, 6000)
    mask = np.zeros((4000, 6000), dtype=bool)
    mask[2100:2400, 3000:3300] = True
    crop = crop_for_model(image, mask, 512)
    assert max(crop.pixels.shape[:2]) == 512 and crop.pixels.shape[0] % 8 == 0
    assert crop.window.width < 1000 and crop.window.height < 1000
    assert crop.window.x0 <= 3000 and crop.window.x1 >= 3300
    assert crop.mask is not None and crop.mask.shape == crop.pixels.shape[:2]
    fraction = crop.mask.mean()
    assert 0.1 < fraction < 0.3  # the object, with its surroundings for context

    filled = np.zeros_like(crop.pixels)
    filled[...] = (10, 200, 30, 255)
    out = paste_back(image, crop, filled, mask, feather=6)
    changed = np.any(out != image, axis=2)
    grown = np.zeros_like(mask)
    grown[2100 - 6 : 2400 + 6, 3000 - 6 : 3300 + 6] = True
    assert not changed[~grown].any()  # nothing outside the grown mask
    assert np.all(out[2110:2390, 3010:3290, :3] == (10, 200, 30))  # inside: the output
    assert np.array_equal(out[..., 3], image[..., 3])  # alpha kept


def test_pasting_the_crop_itself_back_changes_almost_nothing() -> None:
    image = photo(600, 800, seed=1)
    image[..., :3] = np.clip(image[..., :3] // 4 + 100, 0, 255)  # smooth-ish
    box = Box(300, 200, 420, 300)
    crop = crop_for_model(image, box, 256)
    out = paste_back(image, crop, crop.pixels)
    window = crop.window
    outside = np.ones(image.shape[:2], dtype=bool)
    outside[window.y0 : window.y1, window.x0 : window.x1] = False
    assert np.array_equal(out[outside], image[outside])
    # resampling noise only (down then up), never a shift or a colour change
    diff = np.abs(out.astype(int) - image.astype(int))[~outside]
    assert diff.mean() < 12


def test_a_window_at_the_photo_border_is_not_feathered_there() -> None:
    image = photo(300, 300, seed=2)
    crop = crop_for_model(image, Box(0, 0, 60, 60), 128)
    assert crop.window.x0 == 0 and crop.window.y0 == 0
    white = np.full_like(crop.pixels, 255)
    out = paste_back(image, crop, white, feather=8)
    assert np.all(out[0, 0, :3] == 255)  # the photo's own edge gets the full output
    inner = crop.window.x1 - 1
    assert np.any(out[0, inner, :3] != 255)  # the inner border is blended
