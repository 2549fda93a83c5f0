"""Steps held as only their own change (engine/files/blends.py): which changes a layer
of gains in multiply or colour dodge can hold, the blend as hosts compute it (and as
OpenRaster reads it back), and which steps of a run the command line writes so."""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
from PIL import Image
from skimage import data

from layerpath.engine.files.blends import blended, own_change
from layerpath.engine.files.io import LayeredImage, PixelLayer, composite, read_layered, write_ora
from layerpath.plugin.cli import main

KRITA = "{http://www.calligra.org/DTD/krita}"


def _kra_nodes(
    tmp_path: Path, words: str, picture: np.ndarray | None = None
) -> dict[str, ElementTree.Element]:
    """`layerpath edit` of the astronaut (or `picture`) to a .kra: its layers as the
    file lists them, by the first word of their names."""
    photo = tmp_path / "photo.png"
    Image.fromarray(data.astronaut() if picture is None else picture).save(photo)
    out = tmp_path / "out.kra"
    assert main(["edit", str(photo), words, "-o", str(out), "--no-traces"]) == 0
    with zipfile.ZipFile(out) as archive:
        tree = ElementTree.fromstring(archive.read("maindoc.xml"))
    return {n.get("name", "").split(" ")[0]: n for n in tree.iter(f"{KRITA}layer")}


def _photo() -> np.ndarray:
    return np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])


def _with(photo: np.ndarray, rgb: np.ndarray) -> np.ndarray:
    return np.dstack([np.clip(np.rint(rgb), 0, 255).astype(np.uint8), photo[..., 3]])


def _field() -> np.ndarray:
    """A gain by where a pixel lies: 1 in the middle, less towards the corners."""
    yy, xx = np.mgrid[0:512, 0:512] / 511.0 - 0.5
    return 1.0 - 0.8 * (xx**2 + yy**2)


def test_a_darkening_by_position_is_a_multiply_layer_that_makes_it_again() -> None:
    photo = _photo()
    darker = _with(photo, photo[..., :3] * _field()[..., None])
    change = own_change(photo, darker)
    assert change is not None and change.mode == "multiply"
    made = blended("multiply", photo[..., :3], change.pixels[..., :3])
    assert np.abs(made.astype(int) - darker[..., :3].astype(int)).max() <= 1
    # over another picture beneath, the same layer darkens it by the same field
    other = np.asarray(Image.fromarray(data.coffee()).resize((512, 512)))
    again = blended("multiply", other, change.pixels[..., :3]).astype(float)
    want = other * _field()[..., None]
    assert np.abs(again - want).mean() < 1.0


def test_a_brightening_is_a_colour_dodge_layer_that_makes_it_again() -> None:
    photo = _photo()
    lighter = _with(photo, photo[..., :3] / _field()[..., None])
    change = own_change(photo, lighter)
    assert change is not None and change.mode == "dodge"
    made = blended("dodge", photo[..., :3], change.pixels[..., :3])
    diff = np.abs(made.astype(int) - lighter[..., :3].astype(int))
    assert diff.mean() < 0.5 and np.percentile(diff, 99) <= 2


def test_a_change_that_lightens_and_darkens_or_moves_transparency_is_none() -> None:
    photo = _photo()
    grey = photo[..., :3].astype(np.float32).mean(axis=2, keepdims=True)
    sharper = _with(photo, photo[..., :3] + 1.5 * (photo[..., :3] - grey))  # more saturated
    assert own_change(photo, sharper) is None
    cut = photo.copy()
    cut[:100, :, 3] = 0
    assert own_change(photo, cut) is None


def test_blend_modes_composite_as_the_w3c_spec_and_openraster_keep_them(
    tmp_path: Path,
) -> None:
    """Opaque: multiply and dodge by their formulas; half transparent: half the blend
    (the W3C spec's source-over with a blend); over nothing: the layer's own colour.
    An ORA says svg:multiply and svg:color-dodge and reads back the same picture."""
    below = np.zeros((16, 16, 4), np.uint8)
    below[..., :3], below[..., 3] = 200, 255
    below[3] = 0  # a transparent row
    gain = np.zeros((16, 16, 4), np.uint8)
    gain[..., :3], gain[..., 3] = 128, 255
    gain[2, :, 3] = 128  # a half-transparent row
    out = composite(
        LayeredImage(16, 16, [PixelLayer("b", below), PixelLayer("g", gain, blend="multiply")])
    )
    assert (out[0, 0, :3] == round(200 * 128 / 255)).all()
    assert abs(int(out[2, 0, 0]) - round(0.5 * 200 + 0.5 * 200 * 128 / 255)) <= 1
    assert (out[3, 0] == [128, 128, 128, 255]).all()
    dodged = composite(
        LayeredImage(16, 16, [PixelLayer("b", below), PixelLayer("g", gain, blend="dodge")])
    )
    assert (dodged[0, 0, :3] == 255).all()  # 200 / (1 - 128/255) is past white
    dim = below.copy()
    dim[..., :3] = 60
    dodged = composite(
        LayeredImage(16, 16, [PixelLayer("b", dim), PixelLayer("g", gain, blend="dodge")])
    )
    assert (dodged[0, 0, :3] == round(60 * 255 / 127)).all()
    doc = LayeredImage(16, 16, [PixelLayer("b", below), PixelLayer("g", gain, blend="multiply")])
    write_ora(doc, tmp_path / "out.ora")
    with zipfile.ZipFile(tmp_path / "out.ora") as archive:
        assert b'composite-op="svg:multiply"' in archive.read("stack.xml")
    back = read_layered(tmp_path / "out.ora")
    assert [layer.blend for layer, _ in back.pixel_layers()] == ["normal", "multiply"]
    assert np.array_equal(composite(back), out)


def test_a_shadow_lift_after_a_darkening_stays_the_picture_it_made(tmp_path: Path) -> None:
    """A shadow lift after the exposure went down lifts the shadows that darkening made:
    on the photo as it was (the exposure hidden) the same gains would lift the wrong
    tones, so the lift is not written as a change, nor after one region was brightened
    (the whole picture would pass, the region not); alone it is."""
    modes = {}
    words_tried = (
        "lower the exposure a lot and lift the shadows",
        "brighten the face a lot and lift the shadows",  # (one region: judged tile by tile)
        "lift the shadows",
    )
    for words in words_tried:
        shadows = _kra_nodes(tmp_path, words)["Shadows"]
        modes[words] = (shadows.get("nodetype"), shadows.get("compositeop"))
    assert modes["lower the exposure a lot and lift the shadows"] == ("paintlayer", "normal")
    assert modes["brighten the face a lot and lift the shadows"] == ("paintlayer", "normal")
    assert modes["lift the shadows"] == ("paintlayer", "dodge")


def test_a_multiply_layer_in_a_users_isolated_group_multiplies_only_the_group(
    tmp_path: Path,
) -> None:
    """A user's ORA: a photo, and over it an isolated group (as Krita writes a normal
    group) holding a grey multiply layer: the group is worked out on its own, so the
    grey shows as grey, as Krita shows it; written back as ORA, .kra and PSD the group
    stays isolated and the picture the same."""
    from psd_tools import PSDImage

    from layerpath.engine.files.io import GroupLayer, read_psd, write_psd
    from layerpath.engine.files.kra import write_kra

    photo = np.zeros((16, 16, 4), np.uint8)
    photo[...] = (200, 100, 50, 255)
    grey = np.full((16, 16, 4), 128, np.uint8)
    grey[..., 3] = 255
    shading = GroupLayer("shading", [PixelLayer("grey", grey, blend="multiply")], isolated=True)
    source = tmp_path / "own.ora"
    write_ora(LayeredImage(16, 16, [PixelLayer("photo", photo), shading]), source)
    with zipfile.ZipFile(source) as archive:
        assert b'isolation="isolate"' in archive.read("stack.xml")
    doc = read_layered(source)
    group = doc.layers[1]
    assert isinstance(group, GroupLayer) and group.isolated
    assert (composite(doc)[0, 0] == [128, 128, 128, 255]).all()
    open_group = GroupLayer("open", [PixelLayer("grey", grey, blend="multiply")])
    passing = composite(LayeredImage(16, 16, [PixelLayer("photo", photo), open_group]))
    assert (passing[0, 0, :3] == [100, 50, 25]).all()  # (a pass-through group multiplies)
    write_kra(doc, tmp_path / "out.kra")
    with zipfile.ZipFile(tmp_path / "out.kra") as archive:
        tree = ElementTree.fromstring(archive.read("maindoc.xml"))
    groups = [n for n in tree.iter(f"{KRITA}layer") if n.get("nodetype") == "grouplayer"]
    assert [g.get("passthrough") for g in groups] == ["0"]
    write_psd(doc, tmp_path / "out.psd")
    assert (composite(read_psd(tmp_path / "out.psd"))[0, 0] == [128, 128, 128, 255]).all()
    flat = PSDImage.open(tmp_path / "out.psd").composite(force=True).convert("RGB")
    assert flat.getpixel((0, 0)) == (128, 128, 128)


def test_a_change_that_leaves_the_top_of_the_picture_alone_is_still_a_change(
    tmp_path: Path,
) -> None:
    """A shadow lift that changes nothing in a white band at the top: its step layer
    holds only the rows it changed, and its change layer still covers the picture (the
    band: no change), so it is written as a change (it was once refused)."""
    picture = data.astronaut().copy()
    picture[:64] = 255
    nodes = _kra_nodes(tmp_path, "lift the shadows", picture)
    assert nodes["Shadows"].get("compositeop") == "dodge"


def test_no_step_is_kept_as_its_change_in_a_run_that_grows_the_canvas(tmp_path: Path) -> None:
    """ "add a vignette and extend the canvas to the left": the canvas grows after the
    vignette and moves what lies beneath it, so the vignette's change, worked out in the
    frame it had, would land in the wrong place: it stays the picture it made."""
    nodes = _kra_nodes(tmp_path, "add a vignette and extend the canvas to the left")
    assert nodes["Vignette"].get("compositeop") == "normal"
