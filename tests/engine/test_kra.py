"""The .kra the command line writes without Krita, read back here as Krita's format
lays it out (tests/plugin/test_krita.py opens it in real Krita): which steps become live
curves layers, the user's layers at their own depth, and the curves' fit; and the PSD's
Curves adjustment layers, flattened by psd-tools."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image
from psd_tools.constants import BlendMode

from layerpath.engine.files.curves import FIT, fitted, spline
from layerpath.engine.files.kra import MIME, NAME
from layerpath.plugin.cli import main
from layerpath.tools.adjust import to_display, to_linear
from tests.overlapping import OTHERS, THREE_STEPS, others_alone

KRITA = "{http://www.calligra.org/DTD/krita}"


def _layers(archive: zipfile.ZipFile) -> dict[str, ElementTree.Element]:
    tree = ElementTree.fromstring(archive.read("maindoc.xml"))
    return {node.get("name", ""): node for node in tree.iter(f"{KRITA}layer")}


def _pixels(archive: zipfile.ZipFile, node: ElementTree.Element, w: int, h: int) -> np.ndarray:
    """A paint layer's tiles back to RGBA (raw tiles, as the writer stores them)."""
    data = archive.read(f"{NAME}/layers/{node.get('filename')}")
    header, _, body = data.partition(b"DATA ")
    count_line, _, body = body.partition(b"\n")
    size = int(header.split(b"PIXELSIZE ")[1].split(b"\n")[0])
    dtype = np.dtype("<u2") if size == 8 else np.dtype(np.uint8)
    out = np.zeros((h + 64, w + 64, 4), dtype)
    for _ in range(int(count_line)):
        line, _, body = body.partition(b"\n")
        x, y, _, length = line.split(b",")
        tile, body = body[: int(length)], body[int(length) :]
        assert tile[0] == 0  # stored raw
        bgra = np.frombuffer(tile[1:], dtype).reshape(64, 64, 4)
        out[int(y) : int(y) + 64, int(x) : int(x) + 64] = bgra[..., [2, 1, 0, 3]]
    return out[:h, :w]


def test_only_the_steps_that_are_tone_curves_become_live(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Warmer is a curve per channel; saturation mixes the channels and a vignette
    depends on where a pixel lies: those two stay paint layers, the vignette as only
    its own change (multiply), saturation as the picture it made."""
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    out = tmp_path / "out.kra"
    words = "make it warmer, boost the saturation and add a vignette"
    assert main(["edit", str(photo), words, "-o", str(out), "--no-traces"]) == 0
    said = capsys.readouterr().err  # (which steps stay live, and which do not)
    assert "live in Krita as curves layers: Temperature" in said
    assert "kept as pictures: Saturation +0.3 (in Krita, hiding a step beneath" in said
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist()[0] == "mimetype" and archive.read("mimetype") == MIME.encode()
        assert archive.getinfo("mimetype").compress_type == zipfile.ZIP_STORED
        layers = _layers(archive)
        kinds = {name.split(" ")[0]: node.get("nodetype") for name, node in layers.items()}
        assert kinds["Temperature"] == "adjustmentlayer"
        assert kinds["Saturation"] == "paintlayer" and kinds["Vignette"] == "paintlayer"
        modes = {name.split(" ")[0]: node.get("compositeop") for name, node in layers.items()}
        assert modes["Saturation"] == "normal" and modes["Vignette"] == "multiply"
        group = next(n for n in layers.values() if n.get("nodetype") == "grouplayer")
        assert group.get("passthrough") == "1"  # the curves reach the photo beneath
        original = layers["Original"]  # (the user's own layer, as the photo was read)
        photo_pixels = np.asarray(Image.open(photo).convert("RGBA"))
        assert np.array_equal(_pixels(archive, original, 512, 512), photo_pixels)
        record = json.loads(archive.read(f"{NAME}/annotations/layerpath"))
    # what each step layer is, by its node's uuid (for the docker to list the steps)
    uuids = {node.get("uuid"): name for name, node in layers.items()}
    named = sorted(uuids[step["uuid"]].split(" ")[0] for step in record["steps"])
    assert named == ["Saturation", "Temperature", "Vignette"]
    assert len(record["runs"]) == 1 and record["runs"][0]["prompt"] == words


def test_a_16_bit_photo_stays_16_bit_in_the_kra(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    deep = rng.integers(0, 65536, (70, 90, 3), dtype=np.uint16)
    photo = tmp_path / "deep.tif"
    import tifffile

    tifffile.imwrite(photo, deep, photometric="rgb")
    out = tmp_path / "out.kra"
    assert main(["edit", str(photo), "make it warmer", "-o", str(out), "--no-traces"]) == 0
    with zipfile.ZipFile(out) as archive:
        tree = ElementTree.fromstring(archive.read("maindoc.xml"))
        assert tree.find(f"{KRITA}IMAGE").get("colorspacename") == "RGBA16"  # type: ignore[union-attr]
        layers = _layers(archive)
        own = next(n for n in layers.values() if n.get("colorspacename") == "RGBA16")
        back = _pixels(archive, own, 90, 70)
    assert np.array_equal(back[..., :3], deep) and (back[..., 3] == 65535).all()


CURVES = {
    "exposure +1 (sRGB)": lambda v: to_display(to_linear(v) * 2.0),
    "exposure -1 (sRGB)": lambda v: to_display(to_linear(v) * 0.5),
    "smoothstep": lambda v: v * v * (3 - 2 * v),
    "gamma 2.2": lambda v: v**2.2,
}


@pytest.mark.parametrize("name", CURVES)
def test_a_tone_curve_takes_few_points_and_fits_within_a_level(name: str) -> None:
    x = np.linspace(0, 1, 256, dtype=np.float32)
    samples = np.rint(255.0 * np.clip(CURVES[name](x), 0, 1)) / 255.0  # (whole levels)
    points = fitted(samples.astype(np.float64))
    assert len(points) <= 17
    error = np.abs(spline(points, x.astype(np.float64)) - samples) * 255.0
    assert error.max() <= FIT


def test_a_cut_out_stays_a_cut_out_layer_not_a_curves_layer(tmp_path: Path) -> None:
    """A background removal leaves the colours as they were and changes only the
    transparency: no curve can do that, so its layer stays the cut-out it is."""
    from tests.tools.test_background import portrait

    image, _ = portrait()
    photo = tmp_path / "portrait.png"
    Image.fromarray(image).save(photo)
    out = tmp_path / "out.kra"
    assert main(["edit", str(photo), "remove the background", "-o", str(out), "--no-traces"]) == 0
    with zipfile.ZipFile(out) as archive:
        layers = _layers(archive)
    assert not [n for n in layers.values() if n.get("nodetype") == "adjustmentlayer"]
    assert [n.get("compositeop") for n in layers.values()].count("destination-in") == 1


def test_the_psd_keeps_each_of_three_overlapping_steps_live(tmp_path: Path) -> None:
    """ "lift the shadows, make it warmer and add a vignette" as a PSD, flattened by
    psd-tools (a reader that applies adjustment layers and blend modes, as Photoshop
    does). Asked for, warmer is a Curves adjustment layer, and the shadow lift and the
    vignette are layers of their own change (colour dodge, multiply): hiding any one
    gives what the other two make alone (issue 29's bound). Without the option the
    PSD holds pixel layers only (Krita and GIMP show them), and the vignette on top
    still hides alone. The file's merged picture is the run's; layerpath reads it back."""
    from psd_tools import PSDImage
    from skimage import data

    from layerpath.engine.files.io import composite, read_layered

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    out, flat, plain = tmp_path / "out.psd", tmp_path / "flat.png", tmp_path / "plain.psd"
    for target in (flat, plain):
        assert main(["edit", str(photo), THREE_STEPS, "-o", str(target), "--no-traces"]) == 0
    asked = ["-o", str(out), "--adjustment-layers", "--no-traces"]
    assert main(["edit", str(photo), THREE_STEPS, *asked]) == 0
    alone = others_alone(photo, tmp_path)
    ours = np.asarray(Image.open(flat).convert("RGBA"))

    def off(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
        diff = np.abs(a[..., :3].astype(int) - b[..., :3].astype(int))
        return float(diff.mean()), float(np.percentile(diff, 99))

    def hidden(psd: PSDImage, layer: Any) -> np.ndarray:
        layer.visible = False
        seen = np.asarray(psd.composite(force=True).convert("RGBA"))
        layer.visible = True
        return seen

    psd = PSDImage.open(out)
    steps = {layer.name.split(" ")[0]: layer for layer in psd.descendants()}
    assert steps["Temperature"].kind == "curves"
    assert steps["Shadows"].blend_mode == BlendMode.COLOR_DODGE
    assert steps["Vignette"].blend_mode == BlendMode.MULTIPLY
    assert off(np.asarray(psd.composite().convert("RGBA")), ours) == (0.0, 0.0)
    mean, p99 = off(np.asarray(psd.composite(force=True).convert("RGBA")), ours)
    assert mean <= 1.0 and p99 <= 3
    for step in OTHERS:
        seen = hidden(psd, steps[step])
        mean, p99 = off(seen, alone[step])
        assert mean <= 2.0 and p99 <= 6, (step, mean, p99)
        assert off(seen, ours)[0] > 1  # hiding it changed the picture: the step was live
    back = read_layered(out)
    mean, p99 = off(composite(back), ours)
    assert mean <= 1.0 and p99 <= 3
    kept = [(layer.blend, layer.curves is not None) for layer, _ in back.pixel_layers()]
    assert kept == [("normal", False), ("dodge", False), ("normal", True), ("multiply", False)]
    # without the option: pixel layers only, which Krita and GIMP show as they are
    psd = PSDImage.open(plain)
    assert {layer.kind for layer in psd.descendants()} == {"pixel", "group"}
    steps = {layer.name.split(" ")[0]: layer for layer in psd.descendants()}
    mean, p99 = off(hidden(psd, steps["Vignette"]), alone["Vignette"])
    assert mean <= 2.0 and p99 <= 6


def test_a_contrast_turned_around_a_dark_photos_middle_stays_a_live_curve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'add contrast' turns around the photo's own middle tone, chosen from the photo
    (the tool's settled pivot): made again on a ramp of levels for its curves, and on a
    lattice of colours for a .cube, it turns around the same tone, so it is still a
    curves layer in Krita and a step of the LUT (a pivot chosen afresh from the ramp
    would make another curve, and the step a paint layer)."""
    from skimage import data

    dark = np.rint(255 * (data.astronaut() / 255.0) ** 2.6).astype(np.uint8)
    photo, out, cube = tmp_path / "dark.png", tmp_path / "out.kra", tmp_path / "c.cube"
    Image.fromarray(dark).save(photo)
    args = ["edit", str(photo), "add contrast", "-o", str(out), "--no-traces", "--cube", str(cube)]
    assert main(args) == 0
    said = capsys.readouterr()
    assert "live in Krita as curves layers: Contrast" in said.err
    assert "LUT of: Contrast" in said.out
    with zipfile.ZipFile(out) as archive:
        kinds = {
            name.split(" ")[0]: node.get("nodetype") for name, node in _layers(archive).items()
        }
    assert kinds["Contrast"] == "adjustmentlayer"
