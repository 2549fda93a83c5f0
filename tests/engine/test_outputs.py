"""Where results go is checked before any tool runs, files are written whole or not at
all, and a stopped run keeps its finished steps: the real CLI on the generated scene,
its files read back."""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.files.io import (
    GroupLayer,
    LayeredImage,
    PixelLayer,
    read_layered,
    write_atomically,
    write_layered,
)
from layerpath.plugin.cli import main
from tests.conftest import Scene, made_by

EDIT = "remove the ball and recolor the wall to yellow"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def edit(image: Path, masks: dict[str, Path], *more: str, instruction: str = EDIT) -> int:
    named = [f"--mask={name}={path}" for name, path in masks.items()]
    return main(["edit", str(image), instruction, *named, *more])


def ran_no_tool(err: str) -> bool:
    return "layer '" not in err and not re.search(r"^plan\b", err, re.MULTILINE)


@pytest.mark.parametrize("clash", ["image", "mask", "output"])
def test_a_report_named_like_an_input_or_the_output_is_refused_before_any_tool_runs(
    clash: str, scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, masks = scene.save(tmp_path / "in")
    out = tmp_path / "out.ora"
    report = {"image": image, "mask": masks["ball"], "output": out}[clash]
    before = {p: digest(p) for p in [image, *masks.values()]}
    assert edit(image, masks, "-o", str(out), "--report", str(report)) == 2
    err = capsys.readouterr().err
    said = "would be one file" if clash == "output" else "is one of this command's inputs"
    assert said in err and ran_no_tool(err), err
    assert before == {p: digest(p) for p in before} and not out.exists()


def test_outputs_that_cannot_be_written_are_refused_before_any_tool_runs(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, masks = scene.save(tmp_path / "in")
    (tmp_path / "afile").write_text("x")
    cases = {
        tmp_path / "out.gif": "use .ora, .psd or .kra",
        tmp_path: "is a folder",
        tmp_path / ("n" * 300 + ".ora"): "cannot write into",
        tmp_path / "afile" / "out.ora": "is a file, not a folder",
        Path("/proc/layerpath-out.ora"): "cannot write into",  # no one may write there
    }
    for out, said in cases.items():
        assert edit(image, masks, "-o", str(out)) == 2, out
        err = capsys.readouterr().err
        assert said in err.lower() and ran_no_tool(err) and "Traceback" not in err, err


def test_a_cut_out_into_a_psd_is_refused_once_planned_before_any_tool_runs(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, masks = scene.save(tmp_path / "in")
    out = tmp_path / "out.psd"
    code = edit(image, masks, "-o", str(out), instruction="remove the background")
    err = capsys.readouterr().err
    assert code == 2 and "save as .ora" in err and "layer '" not in err, err
    assert not out.exists()


@pytest.mark.parametrize("suffix", [".jpg", ".tif"])
def test_flattened_jpeg_and_tiff_outputs(
    suffix: str, scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, masks = scene.save(tmp_path / "in")
    out = tmp_path / f"out{suffix}"
    assert edit(image, masks, "-o", str(out)) == 0, capsys.readouterr().err
    picture = np.asarray(Image.open(out).convert("RGB")).astype(int)
    wall = picture[scene.masks["wall"] & ~scene.masks["ball"]].mean(axis=0)
    assert wall[0] > wall[2] + 40 and wall[1] > wall[2] + 40  # yellow, as the edit made it
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def sample(scene: Scene) -> LayeredImage:
    h, w = scene.image.shape[:2]
    return LayeredImage(w, h, [PixelLayer("Original", scene.image), GroupLayer("run")])


def test_a_link_planted_where_the_old_temporary_file_went_is_not_followed(
    scene: Scene, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out.ora"
    (tmp_path / ".out.partial.ora").symlink_to(victim)
    write_layered(sample(scene), out)
    assert victim.read_text() == "keep me"
    assert isinstance(read_layered(out).layers[0], PixelLayer)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".out.partial.ora",
        "out.ora",
        "victim.txt",
    ]


@pytest.mark.parametrize("stop", [OSError("No space left on device"), KeyboardInterrupt()])
def test_a_write_that_stops_halfway_leaves_the_old_file_and_no_temporary(
    stop: BaseException, tmp_path: Path
) -> None:
    out = tmp_path / "out.ora"
    out.write_bytes(b"the user's earlier result")

    def write(file: object) -> None:
        file.write(b"half a zip")  # type: ignore[attr-defined]
        raise stop

    with pytest.raises(type(stop)):
        write_atomically(out, write)
    assert out.read_bytes() == b"the user's earlier result"
    assert [p.name for p in tmp_path.iterdir()] == ["out.ora"]


def test_a_written_file_gets_the_usual_permissions(scene: Scene, tmp_path: Path) -> None:
    out = write_layered(sample(scene), tmp_path / "out.png")
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_run_that_makes_no_layer_writes_no_file(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, _ = scene.save(tmp_path / "in")
    out = tmp_path / "out.ora"
    assert main(["edit", str(image), "remove the giraffe", "-o", str(out)]) == 1
    assert "no picture was written" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(
    ("signals", "in_place"),
    [([signal.SIGINT], False), ([signal.SIGINT, signal.SIGINT], False),
     ([signal.SIGTERM], False), ([signal.SIGINT], True)],
)  # fmt: skip
def test_stopping_a_run_keeps_its_finished_steps(
    signals: list[int], in_place: bool, scene: Scene, tmp_path: Path
) -> None:
    """Ctrl-C once (the running step given up), twice (at once) or SIGTERM, sent as
    soon as the first step's layer is reported: exit 130, the output holds the finished
    steps and says so, no temporary file is left; with --in-place the image stays as it
    was and the finished steps go beside it. The picture is the scene enlarged to 12 MP
    so the run is still busy when the signal comes."""
    big = np.asarray(Image.fromarray(scene.image).resize((4000, 3000), Image.Resampling.BILINEAR))
    image = tmp_path / "big.png"
    Image.fromarray(big).save(image)
    masks = []
    for name in ("ball", "wall"):
        path = tmp_path / f"{name}.png"
        grown = Image.fromarray(scene.masks[name].astype(np.uint8) * 255).resize((4000, 3000))
        grown.save(path)
        masks += ["--mask", f"{name}={path}"]
    out = tmp_path / "out.ora"
    if in_place:  # (an ORA of the photo, saved over in place)
        image = tmp_path / "big.ora"
        write_layered(LayeredImage(4000, 3000, [PixelLayer("photo", big)]), image)
        out = tmp_path / "big-stopped.ora"
    original = image.read_bytes()
    where = ["--in-place"] if in_place else ["-o", str(out)]
    run = subprocess.Popen(
        [sys.executable, "-m", "layerpath", "edit", str(image),
         "recolor the wall to yellow, remove the ball and replace the sign text with OPEN",
         *masks, *where, "--no-traces"],
        stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert run.stderr is not None
    lines = []
    for line in run.stderr:
        lines.append(line)
        if line.startswith("  done: layer '"):
            break
    for number in signals:
        run.send_signal(number)
    rest = run.stderr.read()
    assert run.wait(timeout=300) == 130, "".join(lines) + rest
    assert "finished steps are saved in" in rest, rest
    done = read_layered(out)
    group = done.layers[-1]
    assert isinstance(group, GroupLayer) and len(group.children) >= 1
    assert len(group.children) < 6  # it stopped: the whole edit makes more layers
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []
    assert image.read_bytes() == original


@pytest.mark.parametrize("suffix", [".png", ".jpg", ".tif", ".ora", ".psd"])
def test_the_photo_s_colour_profile_and_camera_metadata_are_kept(
    suffix: str, scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A camera JPEG with an ICC profile and EXIF (make, model, date): every output
    carries the same profile bytes and the same EXIF fields (in an ORA: the merged
    picture, and the photo's own layer)."""
    import zipfile

    from PIL import ImageCms

    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    exif = Image.Exif()
    exif[0x010F], exif[0x0110], exif[0x0132] = "Fujifilm", "X-T5", "2026:11:24 09:30:00"
    photo = tmp_path / "in.jpg"
    Image.fromarray(scene.image[..., :3]).save(photo, quality=98, icc_profile=icc, exif=exif)
    _, masks = scene.save(tmp_path / "m")
    out = tmp_path / f"out{suffix}"
    assert edit(photo, {"ball": masks["ball"]}, "-o", str(out), instruction="remove the ball") == 0, capsys.readouterr().err  # fmt: skip
    if suffix in (".ora", ".psd"):  # and read back with it, for the next edit
        assert read_layered(out).icc_profile == icc
    if suffix == ".psd":
        from psd_tools import PSDImage
        from psd_tools.constants import Resource

        assert PSDImage.open(out).image_resources.get_data(Resource.ICC_PROFILE) == icc
        kept = Image.Exif()
        kept.load(read_layered(out).exif or b"")
        assert kept.get(0x010F) == "Fujifilm" and kept.get(0x0110) == "X-T5"
        return
    if suffix == ".ora":
        from xml.etree import ElementTree as ET

        with zipfile.ZipFile(out) as archive:
            merged = Image.open(io.BytesIO(archive.read("mergedimage.png")))
            stack = ET.fromstring(archive.read("stack.xml"))
            source = next(e.get("src") for e in stack.iter("layer") if e.get("name") == "Original")
            own = Image.open(io.BytesIO(archive.read(str(source))))
        assert own.info.get("icc_profile") == icc
        written = merged
    else:
        written = Image.open(out)
    assert written.info.get("icc_profile") == icc
    kept = written.getexif()
    assert (kept.get(0x010F), kept.get(0x0110), kept.get(0x0132)) == (
        "Fujifilm",
        "X-T5",
        "2026:11:24 09:30:00",
    )


#: an XMP packet as Lightroom writes one: a rating, a keyword, and the orientation
XMP = (
    b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
    b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about=""'
    b' xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:tiff="http://ns.adobe.com/tiff/1.0/"'
    b' xmlns:dc="http://purl.org/dc/elements/1.1/" xmp:Rating="5" tiff:Orientation="{turn}">'
    b"<dc:subject><rdf:Bag><rdf:li>harbour</rdf:li></rdf:Bag></dc:subject></rdf:Description>"
    b'</rdf:RDF></x:xmpmeta><?xpacket end="w"?>'
)


def _xmp_of(path: Path) -> bytes:
    """The XMP packet a written file holds (in an ORA or a KRA: its merged picture's; in
    a PSD: its XMP resource)."""
    import zipfile

    if path.suffix in (".ora", ".kra"):
        with zipfile.ZipFile(path) as archive:
            picture = Image.open(io.BytesIO(archive.read("mergedimage.png")))
    elif path.suffix == ".psd":
        from psd_tools import PSDImage
        from psd_tools.constants import Resource

        return bytes(PSDImage.open(path).image_resources.get_data(Resource.XMP_METADATA) or b"")
    else:
        picture = Image.open(path)
    packet = picture.info.get("xmp") or picture.info.get("XML:com.adobe.xmp") or b""
    return packet.encode() if isinstance(packet, str) else bytes(packet)


@pytest.mark.parametrize("suffix", [".jpg", ".tif", ".png", ".psd", ".ora", ".kra"])
def test_the_photo_s_xmp_is_kept_and_an_opaque_flat_picture_is_rgb(
    suffix: str, scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JPEG with a rating and keywords in XMP, turned by EXIF (orientation 6): every
    output keeps the packet (in a TIFF beside Make and Model in its own directory) with
    its orientation 1, as the pixels now stand; a flat TIFF or PNG of an opaque photo is
    RGB, not RGBA."""
    exif = Image.Exif()
    exif[0x010F], exif[0x0110], exif[0x0112] = "Fujifilm", "X-T5", 6
    photo = tmp_path / "in.jpg"
    Image.fromarray(scene.image[..., :3]).save(
        photo, quality=95, exif=exif, xmp=XMP.replace(b"{turn}", b"6")
    )
    out = tmp_path / f"out{suffix}"
    assert edit(photo, {}, "-o", str(out), instruction="make it warmer") == 0, (
        capsys.readouterr().err
    )
    packet = _xmp_of(out)
    assert b'xmp:Rating="5"' in packet and b"harbour" in packet
    assert b'tiff:Orientation="1"' in packet and b'tiff:Orientation="6"' not in packet
    if suffix in (".tif", ".png"):
        written = Image.open(out)
        assert written.mode == "RGB" and written.size == (
            scene.image.shape[0],
            scene.image.shape[1],
        )
        tags = written.getexif()
        assert (tags.get(0x010F), tags.get(0x0110)) == ("Fujifilm", "X-T5")


def test_a_16_bit_tiff_keeps_its_camera_tags_and_xmp_and_is_rgb_when_opaque(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raw developer's 16-bit TIFF with Make and Model in its own directory and an
    XMP packet: the 16-bit TIFF written keeps both, as RGB at 16 bits; a 16-bit PNG keeps
    the packet."""
    import cv2
    import tifffile

    xmp = XMP.replace(b"{turn}", b"1")
    deep = scene.image[..., :3].astype(np.uint16) * 257
    photo = tmp_path / "in.tif"
    tags = [
        (271, "s", 0, "Nikon", True),
        (272, "s", 0, "Z 8", True),
        (700, "B", len(xmp), xmp, True),
    ]
    tifffile.imwrite(photo, deep, photometric="rgb", extratags=tags)
    out = tmp_path / "out.tif"
    assert edit(photo, {}, "-o", str(out), instruction="make it warmer") == 0, (
        capsys.readouterr().err
    )
    with tifffile.TiffFile(out) as written:
        page = written.pages[0]
        assert page.dtype == np.uint16 and page.shape == deep.shape
        assert (page.tags[271].value, page.tags[272].value) == ("Nikon", "Z 8")
        assert b'xmp:Rating="5"' in bytes(page.tags[700].value)
    png = tmp_path / "out.png"
    assert edit(photo, {}, "-o", str(png), instruction="make it warmer") == 0
    assert cv2.imread(str(png), cv2.IMREAD_UNCHANGED).dtype == np.uint16
    assert b'xmp:Rating="5"' in _xmp_of(png)


def deep_scene(scene: Scene, tmp_path: Path, suffix: str) -> tuple[Path, np.ndarray]:
    """The scene as a 16-bit file whose low bytes matter (a fine gradation an 8-bit copy
    loses): RGBA uint16, written by OpenCV (PNG) or tifffile (TIFF)."""
    import cv2
    import tifffile

    rng = np.random.default_rng(3)
    deep = scene.image.astype(np.uint16) * 257
    deep[..., :3] = np.clip(deep[..., :3].astype(np.int32) + rng.integers(-120, 120, deep[..., :3].shape), 0, 65535)  # fmt: skip
    path = tmp_path / f"deep{suffix}"
    if suffix == ".png":
        cv2.imwrite(str(path), deep[..., [2, 1, 0, 3]])
    else:
        tifffile.imwrite(path, deep, photometric="rgb", extrasamples=["unassalpha"])
    return path, deep


@pytest.mark.parametrize(("given", "wanted"), [(".png", ".png"), (".tif", ".tif"), (".png", ".tif"), (".tif", ".ora")])  # fmt: skip
def test_a_16_bit_photo_keeps_its_16_bits_outside_the_edit(
    given: str, wanted: str, scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outside what the steps changed every 16-bit value comes back as it was; where the
    ball was removed the fill is there (at 8-bit precision, scaled up)."""
    photo, deep = deep_scene(scene, tmp_path, given)
    _, masks = scene.save(tmp_path / "m")
    out = tmp_path / f"out{wanted}"
    assert edit(photo, {"ball": masks["ball"]}, "-o", str(out), instruction="remove the ball") == 0, capsys.readouterr().err  # fmt: skip
    doc = read_layered(out)
    if wanted == ".ora":
        original = doc.layers[0]
        assert isinstance(original, PixelLayer) and original.deep is not None
        assert np.array_equal(original.deep, deep)
        from layerpath.engine.files.io import composite

        result = composite(doc, deep=True)
    else:
        (only,) = doc.layers
        assert isinstance(only, PixelLayer) and only.deep is not None
        result = only.deep
    changed = np.any(result != deep, axis=2)
    near_ball = np.zeros_like(changed)
    ys, xs = np.nonzero(scene.masks["ball"])
    near_ball[max(0, ys.min() - 40) : ys.max() + 40, max(0, xs.min() - 40) : xs.max() + 40] = True
    assert changed[scene.masks["ball"]].mean() > 0.9  # the ball is gone
    assert not changed[~near_ball].any()  # and nothing else moved by even one level


def test_a_16_bit_photo_into_a_psd_is_refused_before_any_tool_runs(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo, _ = deep_scene(scene, tmp_path, ".png")
    assert edit(photo, {}, "-o", str(tmp_path / "out.psd"), instruction="remove the ball") == 2
    err = capsys.readouterr().err
    assert "16 bits per channel" in err and ran_no_tool(err)


def test_temporaries_a_killed_write_left_are_cleared_by_the_next_write(
    scene: Scene, tmp_path: Path
) -> None:
    """kill -9 runs no handler: its temporary file stays. The next write of the same
    file removes the ones older than a live write's, and nothing else."""
    stale = tmp_path / ".out.ora.k1ll3d.partial"
    fresh = tmp_path / ".out.ora.wr1t1ng.partial"
    other = tmp_path / ".other.ora.k1ll3d.partial"
    for left in (stale, fresh, other):
        left.write_bytes(b"half a zip")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    os.utime(other, (hour_ago, hour_ago))
    write_layered(sample(scene), tmp_path / "out.ora")
    assert not stale.exists() and fresh.exists() and other.exists()


def test_an_output_folder_that_goes_away_during_the_run_loses_nothing(
    scene: Scene, tmp_path: Path
) -> None:
    """The output folder, fine when checked, is replaced by a file while the tools run:
    the result is written to the temporary folder instead, and the message says where."""
    big = np.asarray(Image.fromarray(scene.image).resize((4000, 3000), Image.Resampling.BILINEAR))
    image = tmp_path / "big.png"
    Image.fromarray(big).save(image)
    wall = tmp_path / "wall.png"
    grown = Image.fromarray(scene.masks["wall"].astype(np.uint8) * 255).resize((4000, 3000))
    grown.save(wall)
    folder = tmp_path / "results"
    folder.mkdir()
    name = f"gone-{os.getpid()}.ora"
    run = subprocess.Popen(
        [sys.executable, "-m", "layerpath", "edit", str(image),
         "recolor the wall to yellow and replace the sign text with OPEN",
         "--mask", f"wall={wall}", "-o", str(folder / name), "--no-traces"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert run.stderr is not None
    for line in run.stderr:
        if line.startswith("  done: layer '"):
            break
    folder.rmdir()
    folder.write_text("not a folder any more")
    rest = run.stderr.read()
    assert run.wait(timeout=300) in (0, 1), rest
    rescued = Path(tempfile.gettempdir()) / f"layerpath-rescued-{name}"
    try:
        assert f"saved in {rescued} instead" in rest, rest
        group = read_layered(rescued).layers[-1]
        assert isinstance(group, GroupLayer) and len(group.children) >= 2
    finally:
        rescued.unlink(missing_ok=True)


CLAY_RGB = Path("/usr/share/color/icc/krita/ClayRGB-elle-V2-g22.icc")  # Adobe RGB's primaries


@pytest.mark.skipif(not CLAY_RGB.exists(), reason="Krita's colour profiles are not here")
def test_a_named_colour_is_that_colour_in_a_wide_gamut_photo(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A photo in an Adobe RGB-like space (Elle Stone's ClayRGB, shipped with Debian's
    krita): 'recolor the wall to yellow' makes the wall look the yellow an sRGB photo
    gets, seen through the photo's own profile; the photo's values elsewhere are not
    converted at all."""
    from PIL import ImageCms

    from layerpath.kit.colours import colours_in, parse_color

    clay = CLAY_RGB.read_bytes()
    to_screen = ImageCms.buildTransform(
        ImageCms.ImageCmsProfile(io.BytesIO(clay)), ImageCms.createProfile("sRGB"), "RGB", "RGB"
    )
    yellow = colours_in(clay)("yellow")
    assert yellow != parse_color("yellow")
    seen = ImageCms.applyTransform(Image.new("RGB", (1, 1), yellow), to_screen).getpixel((0, 0))
    assert np.abs(np.subtract(seen, (255, 255, 0))).max() <= 6
    assert (
        colours_in(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())
        is parse_color
    )

    _, masks = scene.save(tmp_path / "m")
    results = {}
    for name, profile in (("clay", clay), ("srgb", None)):
        photo = tmp_path / f"{name}.png"
        Image.fromarray(scene.image[..., :3]).save(photo, icc_profile=profile)
        out = tmp_path / f"{name}-out.png"
        code = edit(photo, {"wall": masks["wall"]}, "-o", str(out), instruction="recolor the wall to yellow")  # fmt: skip
        assert code == 0, capsys.readouterr().err
        results[name] = np.asarray(Image.open(out).convert("RGB"))
    wall = scene.masks["wall"] & ~scene.masks["ball"] & ~scene.masks["sign"]
    untouched = ~dilate_mask(scene.masks["wall"], 4)
    assert np.array_equal(results["clay"][untouched], scene.image[..., :3][untouched])
    on_screen = np.asarray(ImageCms.applyTransform(Image.fromarray(results["clay"]), to_screen))
    assert np.abs(on_screen[wall].mean(axis=0) - results["srgb"][wall].mean(axis=0)).max() < 6
    assert (
        np.abs(results["clay"][wall].mean(axis=0) - results["srgb"][wall].mean(axis=0)).max() > 10
    )


def dilate_mask(mask: np.ndarray, by: int) -> np.ndarray:
    from layerpath.kit.imaging import dilate

    return dilate(mask, by)


@pytest.mark.parametrize(
    ("tool", "how"), [("lab_recolor", []), ("hsv_recolor", ["--mode", "slow", "--alpha", "2"])]
)
def test_a_recolour_of_a_16_bit_gradient_keeps_its_16_bit_gradation(
    tool: str, how: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A smooth 16-bit sky (a gradient finer than 8 bits can hold) with a band recoloured
    teal, by lab_recolor (the rule) or hsv_recolor (the cheapest path the search finds):
    the tool works its accepted step out again at 16 bits, so the band keeps far more
    than 256 levels and agrees with the 8-bit result; the ORA's step layer is a 16-bit
    PNG."""
    import cv2

    h, w = 160, 1024
    ramp = np.linspace(12000, 52000, w)[None, :].repeat(h, axis=0)
    deep = np.stack([ramp * 0.55, ramp * 0.7, ramp, np.full_like(ramp, 65535)], axis=2)
    deep = np.rint(deep).astype(np.uint16)
    photo = tmp_path / "sky.png"
    cv2.imwrite(str(photo), deep[..., [2, 1, 0, 3]])
    band = np.zeros((h, w), np.uint8)
    band[40:120, 100:900] = 255
    mask = tmp_path / "band.png"
    Image.fromarray(band).save(mask)
    out = tmp_path / "out.ora"
    code = main(["edit", str(photo), "recolor the band to teal", f"--mask=band={mask}", "-o", str(out), *how])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    doc = read_layered(out)
    group = doc.layers[-1]
    assert isinstance(group, GroupLayer)
    (step,) = made_by(doc, tool)
    assert isinstance(step, PixelLayer) and step in group.children
    assert step.deep is not None  # read back from a 16-bit PNG
    from layerpath.engine.files.io import composite

    whole = composite(doc, deep=True)
    row = whole[80, 200:800, 1].astype(int)
    assert len(np.unique(row)) > 400 and np.any(row % 257 != 0)  # not 8-bit steps
    eight = composite(doc)[80, 200:800, 1].astype(int)
    assert np.abs(row / 257.0 - eight).max() < 2.5  # the same colour as the 8-bit step
    assert np.array_equal(whole[:30], deep[:30])  # outside the band: the photo's own values


def test_a_removal_from_16_bit_gravel_copies_16_bit_texture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A blot on 16-bit gravel (scikit-image's, its values x 257 plus detail finer than 8
    bits): patch_fill copies texture into the hole, and its step layer holds the copied
    pixels' own 16-bit values, as the gravel around it does."""
    import cv2
    from skimage import data

    grey = data.gravel()
    h, w = grey.shape
    rng = np.random.default_rng(5)
    gravel = grey.astype(np.uint16)[..., None].repeat(3, axis=2) * 257
    gravel += rng.integers(0, 128, gravel.shape, dtype=np.uint16)
    blot = np.zeros((h, w), np.uint8)
    cv2.ellipse(blot, (w // 2, h // 2), (50, 35), 20, 0, 360, 255, -1)
    photo = gravel.copy()
    photo[blot > 0] = (52000, 9000, 7000)  # a red lid lying on the gravel
    path = tmp_path / "gravel.png"
    cv2.imwrite(str(path), photo[..., ::-1])
    mask = tmp_path / "lid.png"
    Image.fromarray(blot).save(mask)
    out = tmp_path / "out.ora"
    report = tmp_path / "run.json"
    code = main(["edit", str(path), "remove the lid", f"--mask=lid={mask}", "-o", str(out), "--report", str(report)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    doc = read_layered(out)
    group = doc.layers[-1]
    assert isinstance(group, GroupLayer)
    (step,) = made_by(doc, "patch_fill")
    assert isinstance(step, PixelLayer) and step.deep is not None and step.visible
    x, y = step.offset
    sh, sw = step.deep.shape[:2]
    inside = step.deep[(blot > 0)[y : y + sh, x : x + sw]][:, :3].astype(int)
    assert (inside % 257 != 0).mean() > 0.5  # 16-bit values, not 8-bit ones scaled
    assert np.abs(inside[:, 0] - inside[:, 1]).max() < 4 * 257  # grey gravel, no red lid


def test_a_removal_from_a_16_bit_sky_is_filled_at_16_bits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dark blot on a smooth 16-bit sky: patch_fill's smooth fill (the soft-ground path)
    is worked out again at 16 bits, so the sky runs on through the hole in levels 8 bits
    cannot hold, close to the sky that was there."""
    import cv2

    h, w = 300, 800
    ramp = np.linspace(9000, 47000, h)[:, None].repeat(w, axis=1)
    sky = np.rint(np.stack([ramp * 0.6, ramp * 0.8, ramp, np.full_like(ramp, 65535)], axis=2))
    sky = sky.astype(np.uint16)
    blot = np.zeros((h, w), np.uint8)
    cv2.circle(blot, (400, 150), 45, 255, -1)
    photo = sky.copy()
    photo[blot > 0, :3] = (6000, 5000, 4000)
    path = tmp_path / "sky.png"
    cv2.imwrite(str(path), photo[..., [2, 1, 0, 3]])
    mask = tmp_path / "blot.png"
    Image.fromarray(blot).save(mask)
    out = tmp_path / "out.png"
    code = main(["edit", str(path), "remove the blot", f"--mask=blot={mask}", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    (layer,) = read_layered(out).layers
    assert isinstance(layer, PixelLayer) and layer.deep is not None
    inside = layer.deep[blot > 0][:, :3].astype(int)
    assert np.any(inside % 257 != 0)  # 16-bit values, not 8-bit ones scaled
    assert np.abs(inside - sky[blot > 0][:, :3]).mean() < 2 * 257  # the sky carries on


def _adobe_rgb_profile() -> bytes:
    """An ICC v2 matrix/TRC profile of Adobe RGB (1998) (primaries adapted to D50, gamma
    563/256), built here byte by byte: a wide-gamut photo's profile with no file needed."""
    import struct

    def xyz(x: float, y: float, z: float) -> bytes:
        return b"XYZ \0\0\0\0" + b"".join(struct.pack(">i", round(v * 65536)) for v in (x, y, z))

    curve = b"curv\0\0\0\0" + struct.pack(">IH", 1, 563) + b"\0\0"
    text = b"Adobe RGB test\0"
    tags = [
        (b"desc", b"desc\0\0\0\0" + struct.pack(">I", len(text)) + text + b"\0" * 79),
        (b"wtpt", xyz(0.9642, 1.0, 0.8249)),
        (b"rXYZ", xyz(0.6097, 0.3111, 0.0195)),
        (b"gXYZ", xyz(0.2052, 0.6257, 0.0609)),
        (b"bXYZ", xyz(0.1492, 0.0632, 0.7446)),
        (b"rTRC", curve), (b"gTRC", curve), (b"bTRC", curve),
    ]  # fmt: skip
    offset, table, body = 128 + 4 + 12 * len(tags), b"", b""
    for signature, data in tags:
        data += b"\0" * (-len(data) % 4)
        table += signature + struct.pack(">II", offset + len(body), len(data))
        body += data
    size = 128 + 4 + len(table) + len(body)
    header = struct.pack(">I", size) + b"lcms" + struct.pack(">I", 0x02100000)
    header += b"mntrRGB XYZ " + b"\0" * 12 + b"acsp" + b"\0" * 24
    header += struct.pack(">I", 0) + struct.pack(">iii", 63190, 65536, 54061)  # intent, D50
    header += b"\0" * (128 - len(header))
    return header + struct.pack(">I", len(tags)) + table + body


def test_export_options_convert_to_srgb_scale_down_and_set_the_jpeg_quality(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--srgb: an Adobe RGB photo's colours become the same colours in sRGB (the same
    CIE XYZ, within what 8 bits hold) with the sRGB profile embedded; --long-edge scales
    down to that side; --quality sets the JPEG's; options a layered file cannot keep
    are refused before any tool runs."""
    from PIL import ImageCms

    patches = np.array([[90, 160, 80], [200, 120, 90], [60, 90, 170], [128, 128, 128]], np.uint8)
    photo_pixels = np.repeat(np.repeat(patches[None], 200, axis=0), 200, axis=1)  # 200 x 800
    photo = tmp_path / "adobe.png"
    Image.fromarray(photo_pixels).save(photo, icc_profile=_adobe_rgb_profile())
    out = tmp_path / "web.png"
    assert main(["edit", str(photo), "make it warmer", "-o", str(out), "--srgb", "--long-edge", "400"]) == 0, capsys.readouterr().err  # fmt: skip
    written = Image.open(out)
    assert written.size == (400, 100)
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    assert written.info["icc_profile"] == srgb
    # the warmer picture layerpath made in Adobe RGB, and the sRGB one it wrote: one XYZ
    warm = tmp_path / "warm.png"
    assert main(["edit", str(photo), "make it warmer", "-o", str(warm)]) == 0
    adobe = np.asarray(Image.open(warm).convert("RGB"), np.float64)[100, 100::200] / 255.0
    shown = np.asarray(written.convert("RGB"), np.float64)[50, 50::100] / 255.0
    adobe_xyz = (adobe ** (563 / 256)) @ np.array(
        [[0.5767, 0.2974, 0.0270], [0.1856, 0.6273, 0.0707], [0.1882, 0.0753, 0.9911]]
    )
    linear = np.where(shown <= 0.04045, shown / 12.92, ((shown + 0.055) / 1.055) ** 2.4)
    srgb_xyz = linear @ np.array(
        [[0.4124, 0.2126, 0.0193], [0.3576, 0.7152, 0.1192], [0.1805, 0.0722, 0.9505]]
    )
    assert np.abs(adobe_xyz - srgb_xyz).max() < 0.01, (adobe_xyz, srgb_xyz)
    assert np.abs(adobe - shown).max() > 0.03  # (the numbers did change: not a no-op)
    small, large = tmp_path / "q60.jpg", tmp_path / "q95.jpg"
    assert main(["edit", str(photo), "make it warmer", "-o", str(small), "--quality", "60"]) == 0
    assert main(["edit", str(photo), "make it warmer", "-o", str(large)]) == 0
    assert small.stat().st_size < large.stat().st_size
    capsys.readouterr()
    for refused in (["-o", str(tmp_path / "x.ora"), "--long-edge", "100"],
                    ["-o", str(tmp_path / "x.png"), "--quality", "80"],
                    ["-o", str(tmp_path / "x.jpg"), "--quality", "0"]):  # fmt: skip
        assert main(["edit", str(photo), "make it warmer", *refused]) == 2
        assert "layer '" not in capsys.readouterr().err


def test_in_place_saves_over_the_image_in_its_format_with_a_backup(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Lightroom's "Edit In" hands over a 16-bit TIFF copy and expects it saved over:
    --in-place writes the result there (16 bits, its camera tags) after keeping the copy
    as it was beside it; a second run keeps a second backup; -o with --in-place, or
    neither, is refused before anything runs."""
    import tifffile

    deep = scene.image[..., :3].astype(np.uint16) * 257
    photo = tmp_path / "IMG_0001-Edit.tif"
    tifffile.imwrite(photo, deep, photometric="rgb", extratags=[(271, "s", 0, "Canon", True)])
    original = photo.read_bytes()
    assert main(["edit", str(photo), "make it warmer", "--in-place"]) == 0, capsys.readouterr().err
    backup = tmp_path / ".IMG_0001-Edit.tif.layerpath-backup"
    assert backup.read_bytes() == original and str(backup) in capsys.readouterr().err
    with tifffile.TiffFile(photo) as written:
        page = written.pages[0]
        made = page.asarray()
        assert page.dtype == np.uint16 and page.tags[271].value == "Canon"
    assert made.shape == deep.shape and not np.array_equal(made, deep)
    assert (made[..., 0].astype(int) - deep[..., 0]).mean() > 0  # warmer: more red
    assert main(["-q", "edit", str(photo), "make it warmer", "--in-place"]) == 0
    assert (tmp_path / ".IMG_0001-Edit.tif.layerpath-backup-2").exists()
    before = photo.read_bytes()
    assert (
        main(["edit", str(photo), "make it warmer", "--in-place", "-o", str(tmp_path / "o.tif")])
        == 2
    )
    assert main(["edit", str(photo), "make it warmer"]) == 2
    assert "--in-place" in capsys.readouterr().err and photo.read_bytes() == before


def test_camera_metadata_that_encoders_balk_at_is_kept_or_said_never_losing_the_edit(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A camera JPEG's EXIF holds its exposure directory: an 8-bit TIFF keeps it (and
    its make); a 16-bit TIFF's copyright '© 2026 Zoë' goes in as the ASCII a TIFF
    holds; an XMP packet larger than a JPEG holds leaves the JPEG without it, said, and
    the edit is written all the same; tifffile's own shape note is not copied."""
    import tifffile

    exif = Image.Exif()
    exif[0x010F] = "Sony"
    exif.get_ifd(0x8769)[0x829A] = 1 / 250  # ExposureTime
    exif.get_ifd(0x8769)[0x8827] = 400  # ISO
    photo = tmp_path / "camera.jpg"
    Image.fromarray(scene.image[..., :3]).save(photo, quality=95, exif=exif)
    out = tmp_path / "out.tif"
    assert edit(photo, {}, "-o", str(out), instruction="make it warmer") == 0, (
        capsys.readouterr().err
    )
    kept = Image.open(out).getexif()
    assert kept.get(0x010F) == "Sony" and kept.get_ifd(0x8769).get(0x8827) == 400

    deep = scene.image[..., :3].astype(np.uint16) * 257
    raw = tmp_path / "deep.tif"  # (tifffile notes the shape itself; the copyright in UTF-8)
    mark = (33432, "s", 0, "© 2026 Zoë".encode(), True)
    tifffile.imwrite(raw, deep, photometric="rgb", extratags=[mark])
    assert edit(raw, {}, "-o", str(tmp_path / "deep-out.tif"), instruction="make it warmer") == 0
    with tifffile.TiffFile(tmp_path / "deep-out.tif") as written:
        tags = written.pages[0].tags
        assert tags[33432].value == "(c) 2026 Zoe"
        assert "shape" not in str(tags[270].value if 270 in tags else "")

    big = XMP.replace(b"{turn}", b"1").replace(b"harbour", b"harbour " * 12_000)
    png = tmp_path / "big-xmp.png"
    Image.fromarray(scene.image[..., :3]).save(png, pnginfo=_xmp_chunk(big))
    capsys.readouterr()
    assert edit(png, {}, "-o", str(tmp_path / "big.jpg"), instruction="make it warmer") == 0
    assert "XMP" in capsys.readouterr().err and (tmp_path / "big.jpg").stat().st_size > 1000
    assert edit(png, {}, "-o", str(tmp_path / "big.tif"), instruction="make it warmer") == 0
    assert len(_xmp_of(tmp_path / "big.tif")) == len(big)


def _xmp_chunk(xmp: bytes) -> object:
    from PIL.PngImagePlugin import PngInfo

    chunks = PngInfo()
    chunks.add_itxt("XML:com.adobe.xmp", xmp.decode())
    return chunks


def test_in_place_follows_a_link_and_refuses_a_format_it_cannot_write(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo = tmp_path / "real.png"
    Image.fromarray(scene.image[..., :3]).save(photo)
    link = tmp_path / "link.png"
    link.symlink_to(photo)
    assert main(["-q", "edit", str(link), "make it warmer", "--in-place"]) == 0
    assert link.is_symlink() and (tmp_path / ".real.png.layerpath-backup").exists()
    assert not np.array_equal(np.asarray(Image.open(photo)), scene.image[..., :3])
    webp = tmp_path / "photo.webp"
    Image.fromarray(scene.image[..., :3]).save(webp)
    before = webp.read_bytes()
    assert main(["edit", str(webp), "make it warmer", "--in-place"]) == 2
    err = capsys.readouterr().err
    assert "cannot write a .webp file" in err and "-o OUT.jpg" in err
    assert webp.read_bytes() == before


def test_metadata_an_encoder_refuses_leaves_the_rest_written_and_said(
    scene: Scene, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """EXIF larger than a JPEG holds (a 70 KB description): the JPEG is written without
    its EXIF, its XMP kept, and a warning says so; the picture is whole."""
    photo = tmp_path / "in.png"
    Image.fromarray(scene.image[..., :3]).save(photo)
    doc = read_layered(photo)
    huge = Image.Exif()
    huge[0x010E] = "x" * 70_000
    doc.exif = b"Exif\0\0" + huge.tobytes()
    doc.xmp = XMP.replace(b"{turn}", b"1")
    with caplog.at_level(logging.WARNING):
        write_layered(doc, tmp_path / "out.jpg")
    written = Image.open(tmp_path / "out.jpg")
    assert written.size == (scene.image.shape[1], scene.image.shape[0])
    assert b'xmp:Rating="5"' in _xmp_of(tmp_path / "out.jpg")
    assert not written.getexif().get(0x010E)
    assert "without its EXIF" in caplog.text
