"""Bad input gets a clear error before anything is decoded or any tool runs: files whose
headers claim huge canvases (decompression bombs), broken ORA stacks, pictures too
small to work on, terminal escape codes and huge instructions echoed back, a closed
pipe. The real CLI and readers on files the tests build byte by byte."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, PngImagePlugin

from layerpath.engine.files.io import GroupLayer, PixelLayer, read_layered
from layerpath.errors import BadInput, shown
from layerpath.plugin.cli import main
from layerpath.settings import Settings, save_settings
from tests.conftest import Scene


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_claiming(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height, with a few bytes of picture."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )


def jpeg_claiming(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32)).save(buffer, "JPEG")
    data = bytearray(buffer.getvalue())
    frame = data.find(b"\xff\xc0")
    data[frame + 5 : frame + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def ora(stack: str, layers: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "image/openraster")
        archive.writestr("stack.xml", stack)
        for name, data in layers.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def small_png(size: tuple[int, int] = (32, 32)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGBA", size, (200, 10, 10, 255)).save(buffer, "PNG")
    return buffer.getvalue()


def psd_claiming(width: int, height: int) -> bytes:
    header = struct.pack(">4sH6xHIIHH", b"8BPS", 2, 3, height, width, 8, 3)
    return header + b"\0" * 64


def ztxt_bomb() -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_text("comment", "0" * 50_000_000, zip=True)  # 50 MB of text in 50 kB
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32)).save(buffer, "PNG", pnginfo=info)
    return buffer.getvalue()


LAYER = '<layer name="base" src="data/a.png" x="0" y="0"/>'
CASES = {
    "png-100000.png": (png_claiming(100_000, 100_000), "100000x100000 pixels (10000 MP)"),
    "png-20000.png": (png_claiming(20_000, 20_000), "up to 200 MP"),
    "jpeg-60000.jpg": (jpeg_claiming(60_000, 60_000), "60000x60000 pixels"),
    "ztxt.png": (ztxt_bomb(), "not an image layerpath can read"),
    "one-pixel.png": (small_png((1, 1)), "at least 16x16"),
    "krita.kra": (ora("", {"mergedimage.png": small_png()}), "save it from Krita as .ora"),
    "ora-300000.ora": (
        ora(f'<image w="300000" h="300000"><stack>{LAYER}</stack></image>', {}),
        "300000x300000 pixels",
    ),
    "ora-abc.ora": (
        ora(f'<image w="abc" h="32"><stack>{LAYER}</stack></image>', {"data/a.png": small_png()}),
        "w='abc', which is not a number",
    ),
    "ora-inf.ora": (
        ora(f'<image w="inf" h="nan"><stack>{LAYER}</stack></image>', {"data/a.png": small_png()}),
        "w='inf', which is not a number",
    ),
    "ora-zero.ora": (
        ora(f'<image w="0" h="0"><stack>{LAYER}</stack></image>', {"data/a.png": small_png()}),
        "0x0 pixels, which is no picture",
    ),
    "ora-negative.ora": (
        ora(f'<image w="-5" h="32"><stack>{LAYER}</stack></image>', {"data/a.png": small_png()}),
        "-5x32 pixels, which is no picture",
    ),
    "ora-layer-bomb.ora": (
        ora(
            f'<image w="32" h="32"><stack>{LAYER}</stack></image>',
            {"data/a.png": png_claiming(50_000, 50_000)},
        ),
        "50000x50000 pixels",
    ),
    "ora-no-src.ora": (
        ora('<image w="32" h="32"><stack><layer name="x"/></stack></image>', {}),
        "names no picture file",
    ),
    "ora-missing.ora": (
        ora(f'<image w="32" h="32"><stack>{LAYER}</stack></image>', {}),
        "not a readable OpenRaster file",
    ),
    "psd-300000.psd": (psd_claiming(300_000, 300_000), "300000x300000 pixels"),
    "psd-junk.psd": (b"8BPS" + b"\xff" * 100, "not a readable Photoshop file"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_file_claiming_an_impossible_picture_gets_a_clear_error(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, said = CASES[name]
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out.ora"
    assert main(["edit", str(path), "remove the ball", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err
    assert path.read_bytes() == data and not out.exists()


def test_the_pixel_limit_is_a_setting(scene: Scene, tmp_path: Path) -> None:
    image, masks = scene.save(tmp_path / "in")  # 320 x 240: 0.08 MP
    save_settings(Settings(max_megapixels=0.05))
    out = tmp_path / "out.ora"
    assert main(["edit", str(image), "remove the ball", f"--mask=ball={masks['ball']}", "-o", str(out)]) == 2  # fmt: skip
    save_settings(Settings(max_megapixels=0.1))
    assert main(["edit", str(image), "remove the ball", f"--mask=ball={masks['ball']}", "-o", str(out)]) == 0  # fmt: skip


def test_a_nameless_layer_and_nested_stacks_are_read_not_lost(tmp_path: Path) -> None:
    stack = (
        '<image w="32" h="32"><stack>'
        '<stack name="outer"><stack name="inner" visibility="hidden">'
        '<layer src="data/b.png" x="3" y="4"/></stack>'
        '<layer name="top" src="/data/a.png"/></stack>'
        '<layer src="data/a.png"/>'
        "</stack></image>"
    )
    path = tmp_path / "nested.ora"
    path.write_bytes(ora(stack, {"data/a.png": small_png(), "data/b.png": small_png((8, 8))}))
    doc = read_layered(path)
    base, group = doc.layers
    assert isinstance(base, PixelLayer) and base.name == "layer 1"
    assert isinstance(group, GroupLayer) and group.name == "outer"
    assert [(c.name, c.offset, c.visible) for c in group.children] == [  # bottom to top
        ("top", (0, 0), True),
        ("layer 2", (3, 4), False),  # inside a hidden stack
    ]


def test_escape_codes_and_huge_instructions_are_not_echoed_raw(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, _ = scene.save(tmp_path / "in")
    out = tmp_path / "out.ora"
    sneaky = "remove the \x1b[2J\x1b[31mcat"
    assert main(["edit", str(image), sneaky, "--mask", "\x1b]0;pwned\x07=x.png", "-o", str(out)]) == 2  # fmt: skip
    assert main(["edit", str(image), sneaky, "-o", str(out)]) == 1
    huge = "paint " + "very " * 20_000 + "nicely"  # 100 kB
    assert main(["edit", str(image), huge, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b[31mcat" in err, err
    assert max(len(line) for line in err.splitlines()) < 2000


def test_shown_escapes_and_shortens() -> None:
    assert shown("a\x1b[0mb\nc") == "a\\x1b[0mb\\nc"
    assert shown("x" * 500, 10) == "x" * 9 + "…"
    assert shown("Größe 写真") == "Größe 写真"


def test_a_closed_pipe_ends_quietly() -> None:
    listing = subprocess.run(
        f"{sys.executable} -m layerpath tools | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listing.stdout.count("\n") == 1
    assert "BrokenPipeError" not in listing.stderr and "Traceback" not in listing.stderr


def test_a_real_picture_near_the_limit_still_opens(tmp_path: Path) -> None:
    """Pillow alone refuses pictures past 179 MP and names no setting; layerpath's limit
    is its own (here lowered to show both sides of it)."""
    path = tmp_path / "wide.png"
    Image.fromarray(np.zeros((20, 3000, 3), np.uint8)).save(path)
    assert read_layered(path, max_pixels=60_000).width == 3000
    with pytest.raises(BadInput, match="up to 0 MP"):
        read_layered(path, max_pixels=59_999)


def linear_dng(path: Path) -> np.ndarray:
    """A tiny linear DNG (the TIFF tags LibRaw needs, written by tifffile): a horizontal
    red ramp on a fixed blue, 16 bits; its pixels."""
    import tifffile

    h, w = 48, 64
    rgb = np.zeros((h, w, 3), np.uint16)
    rgb[..., 0] = np.linspace(0, 60000, w, dtype=np.uint16)[None, :]
    rgb[..., 2] = 20000
    dng = [
        (50706, "B", 4, (1, 4, 0, 0), True),  # DNGVersion
        (50708, "s", 0, "layerpath test", True),  # UniqueCameraModel
        (50717, "I", 1, 65535, True),  # WhiteLevel
        (50721, "d", 9, (1, 0, 0, 0, 1, 0, 0, 0, 1), True),  # ColorMatrix1
        (50778, "H", 1, 21, True),  # CalibrationIlluminant1: D65
    ]
    tifffile.imwrite(path, rgb, photometric=34892, extratags=dng)  # LinearRaw
    return rgb


def test_a_camera_raw_file_opens_developed_at_16_bits(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the photo extra (rawpy, LibRaw), a DNG is developed at 16 bits: its ramp
    rises left to right, and a flattened 16-bit TIFF of an edit keeps it."""
    pytest.importorskip("rawpy")
    path = tmp_path / "shot.dng"
    linear_dng(path)
    doc = read_layered(path)
    (layer,) = doc.layers
    assert isinstance(layer, PixelLayer) and layer.deep is not None
    red = layer.deep[24, :, 0].astype(int)
    assert red[-1] > red[0] + 40000 and np.all(np.diff(red) >= 0)
    assert layer.deep[24, 32, 2] > layer.deep[24, 0, 2]  # (blue: developed, not raw)
    out = tmp_path / "out.tif"
    mask = tmp_path / "box.png"
    box = np.zeros((48, 64), np.uint8)
    box[10:30, 20:40] = 255
    Image.fromarray(box).save(mask)
    code = main(["edit", str(path), "recolor the box to green", f"--mask=box={mask}", "-o", str(out)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    written = read_layered(out).layers[0]
    assert isinstance(written, PixelLayer) and written.deep is not None
    assert np.array_equal(written.deep[40:], layer.deep[40:])  # below the box: as developed


def test_a_heic_photo_opens_with_its_profile(tmp_path: Path) -> None:
    heif = pytest.importorskip("pillow_heif")
    from PIL import ImageCms

    heif.register_heif_opener()
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    path = tmp_path / "phone.heic"
    Image.new("RGB", (64, 48), (200, 40, 30)).save(path, quality=95, icc_profile=icc)
    doc = read_layered(path)
    assert (doc.width, doc.height) == (64, 48) and doc.icc_profile == icc
    pixel = doc.layers[0].pixels[20, 30]  # type: ignore[union-attr]
    assert abs(int(pixel[0]) - 200) < 12 and abs(int(pixel[1]) - 40) < 12


def test_without_the_photo_extra_raw_and_heic_say_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module, name in (("rawpy", "shot.nef"), ("pillow_heif", "phone.heic")):
        monkeypatch.setitem(sys.modules, module, None)  # as if not installed
        path = tmp_path / name
        path.write_bytes(b"\0" * 64)
        with pytest.raises(BadInput, match=r'pip install "layerpath\[photo\]"'):
            read_layered(path)
