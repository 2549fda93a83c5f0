"""ORA/PSD files written by layerpath reopen with the same layers, offsets and pixels."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageOps

from layerpath.engine.files.io import (
    GroupLayer,
    LayeredImage,
    PixelLayer,
    composite,
    load_snapshot,
    read_layered,
    read_mask,
    write_layered,
    write_ora,
)
from layerpath.errors import BadInput
from layerpath.prefetch import decode_jpeg
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
    with pytest.raises(BadInput, match="use .ora, .psd or .kra"):
        write_layered(sample_doc(scene), tmp_path / "out.gif")


def test_sixteen_bit_png_is_read_as_eight_bit(tmp_path: Path) -> None:
    ramp = (np.arange(256, dtype=np.uint16).reshape(16, 16) * 250).astype(np.uint16)
    Image.fromarray(ramp).save(tmp_path / "deep.png")
    snapshot, _ = load_snapshot(tmp_path / "deep.png", {})
    assert snapshot.image.dtype == np.uint8 and snapshot.image[..., 0].max() > 200


def test_ora_stores_the_merged_picture_cropped_layers_and_the_input_png_as_read(
    scene: Scene, tmp_path: Path
) -> None:
    """The ORA has its mimetype first and uncompressed, a merged picture equal to the
    composite, step layers at their own size and place, and the user's PNG as the very
    bytes of the file it came from (same pixels, depth and metadata, no re-encoding)."""
    import zipfile
    from xml.etree import ElementTree as ET

    source = tmp_path / "photo.png"
    Image.fromarray(scene.image).save(source, pnginfo=_text_chunk("Author", "a photographer"))
    doc = read_layered(source)
    original = doc.layers[0]
    assert isinstance(original, PixelLayer) and original.encoded == source.read_bytes()
    assert not original.pixels.flags.writeable  # the layer must stay what the file holds
    doc.layers.append(sample_doc(scene).layers[1])
    written = write_layered(doc, tmp_path / "out.ora")
    with zipfile.ZipFile(written) as archive:
        first = archive.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert archive.read("mimetype") == b"image/openraster"
        assert not any(name.startswith("/") for name in archive.namelist())  # relative members
        stack = ET.fromstring(archive.read("stack.xml"))
        layers = {e.get("name"): e for e in stack.iter("layer")}
        assert archive.read(str(layers["Original"].get("src"))) == source.read_bytes()
        step = layers["1. step"]
        assert (step.get("x"), step.get("y")) == ("30", "40")
        with archive.open(str(step.get("src"))) as png:
            assert Image.open(png).size == (12, 10)  # cropped to the step's pixels
        with archive.open("mergedimage.png") as png:
            merged = np.asarray(Image.open(png).convert("RGBA"))
        with archive.open("Thumbnails/thumbnail.png") as png:
            assert max(Image.open(png).size) <= 256
    assert np.array_equal(merged, composite(doc))
    back = read_layered(written)
    assert [layer.name for layer in back.layers] == ["Original", "remove the ball / recolor"]
    assert np.array_equal(composite(back), composite(doc))
    from pyora import Project  # and another program's reader takes it too

    project = Project.load(str(written))
    assert tuple(project.dimensions) == (doc.width, doc.height)
    assert [child.name for child in project.children] == ["remove the ball / recolor", "Original"]


def _text_chunk(key: str, value: str) -> object:
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text(key, value)
    return info


def test_composite_blends_soft_pixels_and_copies_opaque_ones() -> None:
    base = np.zeros((4, 4, 4), np.uint8)
    base[..., 0], base[..., 3] = 200, 255
    top = np.zeros((2, 2, 4), np.uint8)
    top[..., 2] = 100
    top[0, 0, 3], top[0, 1, 3] = 255, 128  # opaque, half, and two transparent pixels
    doc = LayeredImage(4, 4, [PixelLayer("base", base), PixelLayer("top", top, (1, 1))])
    out = composite(doc).astype(int)
    assert out[1, 1].tolist() == [0, 0, 100, 255]  # copied
    assert abs(out[1, 2, 0] - 100) <= 1 and abs(out[1, 2, 2] - 50) <= 1  # blended half
    assert out[2, 2].tolist() == [200, 0, 0, 255] and out[0, 0].tolist() == [200, 0, 0, 255]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_composite_of_a_camera_sized_layer_matches_blending_each_pixel(dtype: type) -> None:
    """The compositor's shortcuts (opaque bands copied, clear ones skipped, opaque pixels
    copied whole, a layer over part of the canvas) give the picture that blending every
    pixel one by one gives, at 8 and 16 bits."""
    from layerpath.engine.execute.deep import eight_bit, over

    top = np.iinfo(dtype).max
    rng = np.random.default_rng(3)
    base = rng.integers(0, top + 1, (700, 900, 4)).astype(dtype)
    base[..., 3] = top
    layer = rng.integers(0, top + 1, (650, 700, 4)).astype(dtype)
    layer[..., 3] = rng.choice([0, top, top // 3], size=(650, 700))
    layer[:300, :, 3], layer[300:400, :, 3] = top, 0  # an opaque band, a clear one
    if dtype == np.uint8:
        layers = [PixelLayer("base", base), PixelLayer("step", layer, (120, 30))]
    else:  # (a 16-bit layer: its 8-bit pixels and the 16 bits it was made at)
        layers = [
            PixelLayer("base", eight_bit(base), deep=base),
            PixelLayer("step", eight_bit(layer), (120, 30), deep=layer),
        ]
    got = composite(LayeredImage(900, 700, layers), deep=dtype == np.uint16)
    want = base.copy()
    part = want[30:680, 120:820]
    alpha = layer[..., 3]
    part[alpha == top] = layer[alpha == top]
    soft = (alpha > 0) & (alpha < top)
    part[soft] = over(layer[soft], part[soft])
    assert np.array_equal(got, want)


def test_an_opaque_picture_is_written_to_jpeg_without_a_blend(tmp_path: Path) -> None:
    """An opaque picture's JPEG is its colours as they are, encoded with no blend over
    white and no copy: the memory the write takes stays under 1.5 times the picture's
    (the composite; Pillow reads it where it lies: an RGB copy for Pillow took 1.8 times,
    a float blend three float copies more). A picture with see-through parts shows white
    there."""
    import tracemalloc

    from layerpath.engine.files.io import on_white

    rng = np.random.default_rng(5)
    rgba = rng.integers(0, 256, (2000, 2000, 4)).astype(np.uint8)
    rgba[..., 3] = 255
    doc = LayeredImage(2000, 2000, [PixelLayer("photo", rgba)])
    tracemalloc.start()
    write_layered(doc, tmp_path / "out.jpg")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1.5 * rgba.nbytes, peak / rgba.nbytes
    with Image.open(tmp_path / "out.jpg") as written:  # the colours, not the alpha byte
        assert written.mode == "RGB"
        assert np.abs(np.asarray(written).astype(int) - rgba[..., :3]).mean() < 8
    assert np.array_equal(on_white(rgba), rgba[..., :3])
    soft = rgba.copy()
    soft[:10, :, 3] = 0
    soft[10:20, :, 3] = 128
    flat = on_white(soft).astype(int)
    assert (flat[:10] == 255).all()
    want = soft[10:20, :, :3] * (128 / 255) + 255 * (1 - 128 / 255)
    assert np.abs(flat[10:20] - want).max() <= 0.5 + 1e-6
    assert np.array_equal(flat[20:], rgba[20:, :, :3])


@pytest.mark.parametrize(
    "how",
    [dict(subsampling=0), dict(subsampling=2), dict(progressive=True), dict(orientation=6)],
    ids=["4:4:4", "4:2:0", "progressive", "turned"],
)
def test_a_jpeg_is_read_as_pillow_reads_it(tmp_path: Path, how: dict[str, int]) -> None:
    """An RGB JPEG is decoded by libjpeg-turbo straight into RGBA (no three-channel copy
    to widen): level for level what Pillow decodes, turned upright once by its EXIF
    orientation; a JPEG cut short is still refused with the file named, and one whose
    data ends early (which libjpeg-turbo refuses) is read as Pillow reads it."""
    rng = np.random.default_rng(9)
    smooth = cv2.resize(rng.integers(0, 256, (30, 40, 3), dtype=np.uint8), (400, 300))
    path = tmp_path / "photo.jpg"
    options = {k: v for k, v in how.items() if k != "orientation"}
    exif = Image.Exif()
    exif[0x0112] = how.get("orientation", 1)
    Image.fromarray(smooth).save(path, quality=90, exif=exif.tobytes(), **options)
    with Image.open(path) as opened:
        want = np.asarray(ImageOps.exif_transpose(opened).convert("RGBA"))
    got = read_layered(path).layers[0].pixels
    assert got.shape == want.shape and np.array_equal(got, want)
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(BadInput, match="cut.jpg"):
        read_layered(cut)
    stray = tmp_path / "stray.jpg"  # cut short, then given an end: Pillow reads it
    stray.write_bytes(path.read_bytes()[: path.stat().st_size // 2] + b"\xff\xd9")
    assert decode_jpeg(stray.read_bytes()) is None
    with Image.open(stray) as opened:
        want = np.asarray(ImageOps.exif_transpose(opened).convert("RGBA"))
    assert np.array_equal(read_layered(stray).layers[0].pixels, want)


def test_psd_layer_names_keep_every_character(tmp_path: Path) -> None:
    """Step and group names with an em dash, a check mark, Japanese, or longer than a
    PSD name may be: written (the whole write failed on a character Mac Roman lacks),
    and read back in full from the Unicode name block Photoshop and Krita read."""
    from psd_tools import PSDImage

    pixels = np.full((20, 20, 4), 200, np.uint8)
    group = "recolor the cup — teal ✓ 写真 " + "and more " * 40
    step = "1. patch_fill — Object Removal 'spoon'"
    doc = LayeredImage(20, 20, [PixelLayer("Original", pixels), GroupLayer(group, [PixelLayer(step, pixels)])])  # fmt: skip
    path = write_layered(doc, tmp_path / "names.psd")
    names = [layer.name for layer in PSDImage.open(path).descendants()]
    assert names == ["Original", group[:255], step]


def test_an_oras_record_of_its_runs_is_data_that_cannot_break_opening(tmp_path: Path) -> None:
    """layerpath/runs.json comes from a file: nested past any parser's depth, not JSON,
    or with values of the wrong kinds, the ORA still opens as its layers; a step whose
    record is wrong is not listed; the layers are never touched."""
    import json
    import zipfile

    from layerpath.engine.hosts.document import LayeredDocument

    pixels = np.zeros((32, 32, 4), np.uint8)
    pixels[..., 3] = 255
    step = PixelLayer("a step", pixels.copy())
    doc = LayeredImage(32, 32, [PixelLayer("photo", pixels), GroupLayer("run", [step])])
    good = {
        "group": 1,
        "run": {"prompt": "x", "plan": []},
        "steps": [{"subtask": "s1", "cost": "x"}],
    }
    for body in ("[" * 100_000 + "]" * 100_000, "{not json", json.dumps({"runs": [good]})):
        path = tmp_path / "f.ora"
        write_ora(doc, path)
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr("layerpath/runs.json", body)
        opened = LayeredDocument.open(path, {})
        assert [layer.name for layer in opened.image.layers] == ["photo", "run"]
        for group_id, _, _ in opened.reopened:
            assert opened.reopened_steps(group_id) == []  # ('cost': 'x' is no number)


def _tiff_header(width: int, height: int) -> bytes:
    """A grey 8-bit TIFF's header and directory claiming width x height, with no pixels."""
    import struct

    entries = [(256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, 1), (262, 3, 1),
               (273, 4, 8 + 2 + 12 * 9 + 4), (277, 3, 1), (278, 4, height),
               (279, 4, width * height)]  # fmt: skip
    body = struct.pack("<2sHI", b"II", 42, 8) + struct.pack("<H", len(entries))
    for tag, kind, value in entries:
        body += struct.pack("<HHII", tag, kind, 1, value)
    return body + struct.pack("<I", 0) + bytes(64)


def test_a_picture_within_layerpaths_limit_is_never_refused_by_pillows(tmp_path: Path) -> None:
    """A 196 MP TIFF is within layerpath's limit (200 MP), past Pillow's own (179 MP):
    Pillow's check is lifted while it decodes too, so a file cut short says so plainly
    (a BadInput naming it), not as Pillow's decompression-bomb error."""
    path = tmp_path / "huge.tif"
    path.write_bytes(_tiff_header(14000, 14000))
    with pytest.raises(BadInput, match="huge.tif"):
        read_layered(path)


def test_a_pngs_transparent_colour_is_read_as_transparent(tmp_path: Path) -> None:
    """An RGB PNG whose tRNS chunk names a transparent colour: that colour reads as
    transparent (Pillow's conversion), not opaque."""
    picture = Image.new("RGB", (20, 16), (10, 20, 30))
    picture.paste((200, 100, 50), (0, 0, 10, 16))
    path = tmp_path / "keyed.png"
    picture.save(path, transparency=(10, 20, 30))
    pixels = read_layered(path).layers[0].pixels
    assert (pixels[:, 10:, 3] == 0).all() and (pixels[:, :10, 3] == 255).all()


def test_a_one_layer_documents_composite_is_its_opaque_layer_or_the_blend() -> None:
    """An opaque one-layer document composites to its layer itself (read only, no copy);
    one with clear pixels composites as always (clear pixels are clear black)."""
    opaque = np.full((8, 9, 4), 200, np.uint8)
    opaque[..., 3] = 255
    merged = composite(LayeredImage(9, 8, [PixelLayer("photo", opaque)]))
    assert np.shares_memory(merged, opaque) and not merged.flags.writeable
    holed = opaque.copy()
    holed[2:4, 3:5, 3] = 0
    merged = composite(LayeredImage(9, 8, [PixelLayer("photo", holed)]))
    assert not np.shares_memory(merged, holed)
    assert (merged[2:4, 3:5] == 0).all() and np.array_equal(merged[5:], holed[5:])


def test_a_step_that_remade_every_pixel_is_the_composite_itself() -> None:
    """A run's step layer that covers the canvas opaquely is what the picture shows: the
    composite is that layer (no copy, no blend); hidden, offset, blended or holed, it is
    laid over what is beneath as always."""
    base = np.zeros((8, 9, 4), np.uint8)
    base[..., 0], base[..., 3] = 90, 255
    step = np.full((8, 9, 4), 200, np.uint8)
    step[..., 3] = 255

    def merged(**how: object) -> np.ndarray:
        layer = PixelLayer("step", step, **how)  # type: ignore[arg-type]
        group = GroupLayer("run", [layer])
        return composite(LayeredImage(9, 8, [PixelLayer("photo", base), group]))

    shown = merged()
    assert np.shares_memory(shown, step) and not shown.flags.writeable
    hidden = merged(visible=False)
    assert np.array_equal(hidden, base) and not np.shares_memory(hidden, step)
    moved = merged(offset=(3, 0))
    assert np.array_equal(moved[:, :3], base[:, :3]) and np.array_equal(moved[:, 3:], step[:, 3:])
    multiplied = merged(blend="multiply")
    assert not np.shares_memory(multiplied, step) and multiplied[0, 0, 0] == round(90 * 200 / 255)
    step[2, 2, 3] = 0  # one clear pixel: the photo shows through it
    holed = merged()
    assert not np.shares_memory(holed, step) and np.array_equal(holed[2, 2], base[2, 2])
