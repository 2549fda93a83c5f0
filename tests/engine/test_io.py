"""ORA/PSD files written by layerpath reopen with the same layers, offsets and pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.io import (
    GroupLayer,
    LayeredImage,
    PixelLayer,
    composite,
    load_snapshot,
    read_layered,
    read_mask,
    write_layered,
)
from layerpath.errors import BadInput
from tests.conftest import Scene


def sample_doc(scene: Scene) -> LayeredImage:
    patch = np.zeros((10, 12, 4), np.uint8)
    patch[..., 1], patch[..., 3] = 200, 255
    patch[:3, :3, 3] = 0
    return LayeredImage(
        320,
        240,
        [
            PixelLayer("Original", scene.image),
            GroupLayer(
                "remove the ball / recolor",
                [
                    PixelLayer("1. step", patch, (30, 40)),
                    PixelLayer("2. hidden step", patch, (100, 7), visible=False),
                ],
            ),
        ],
    )


@pytest.mark.parametrize("suffix", [".ora", ".psd"])
def test_roundtrip_keeps_layers_offsets_visibility_and_pixels(
    scene: Scene, tmp_path: Path, suffix: str
) -> None:
    doc = sample_doc(scene)
    back = read_layered(write_layered(doc, tmp_path / f"out{suffix}"))
    assert (back.width, back.height) == (320, 240)
    original, group = back.layers
    assert isinstance(original, PixelLayer) and np.array_equal(original.pixels, scene.image)
    assert isinstance(group, GroupLayer) and group.name.startswith("remove the ball")
    assert [(c.name, c.offset, c.visible) for c in group.children] == [
        ("1. step", (30, 40), True),
        ("2. hidden step", (100, 7), False),
    ]
    assert np.array_equal(group.children[0].pixels, doc.layers[1].children[0].pixels)  # type: ignore[union-attr]
    assert np.array_equal(composite(back), composite(doc))


def test_layered_input_gives_named_masks_and_keeps_user_layers(
    scene: Scene, tmp_path: Path
) -> None:
    ball = np.zeros((240, 320, 4), np.uint8)
    ball[scene.masks["ball"]] = (255, 255, 255, 255)
    doc = LayeredImage(320, 240, [PixelLayer("photo", scene.image), PixelLayer("mask:ball", ball)])
    path = write_layered(doc, tmp_path / "in.ora")
    snapshot, user_doc = load_snapshot(path, {})
    assert np.array_equal(snapshot.masks["ball"], scene.masks["ball"])
    assert [layer.name for layer in user_doc.layers] == ["photo", "mask:ball"]  # nothing dropped
    assert np.array_equal(snapshot.image, scene.image)


def test_mask_of_another_size_is_rejected(scene: Scene, tmp_path: Path) -> None:
    Image.new("L", (10, 10), 255).save(tmp_path / "small.png")
    with pytest.raises(BadInput, match="is 10x10 but the image is 320x240"):
        read_mask(tmp_path / "small.png", (320, 240), "ball")


def test_empty_mask_and_unreadable_image_are_rejected(tmp_path: Path) -> None:
    Image.new("L", (8, 8), 0).save(tmp_path / "empty.png")
    with pytest.raises(BadInput, match="empty"):
        read_mask(tmp_path / "empty.png", (8, 8), "cat")
    (tmp_path / "junk.png").write_bytes(b"not an image")
    with pytest.raises(BadInput, match="not an image"):
        load_snapshot(tmp_path / "junk.png", {})
    with pytest.raises(BadInput, match="does not exist"):
        load_snapshot(tmp_path / "missing.png", {})


def test_unknown_output_format_is_rejected(scene: Scene, tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="use .ora or .psd"):
        write_layered(sample_doc(scene), tmp_path / "out.gif")


def test_sixteen_bit_png_is_read_as_eight_bit(tmp_path: Path) -> None:
    ramp = (np.arange(64, dtype=np.uint16).reshape(8, 8) * 1000).astype(np.uint16)
    Image.fromarray(ramp).save(tmp_path / "deep.png")
    snapshot, _ = load_snapshot(tmp_path / "deep.png", {})
    assert snapshot.image.dtype == np.uint8 and snapshot.image[..., 0].max() > 200
