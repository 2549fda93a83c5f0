"""Background removal: GrabCut (OpenCV, no weights) and IS-Net through ONNX Runtime
with a tiny ONNX model this test builds (the export's input and output layout; its
output a constant matte the test writes, plus the input times zero so the graph reads
the photo). The step is a cut-out (destination-in) layer: composited over the user's
untouched layer it gives the engine's picture, in memory and read back from ORA."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.files.io import GroupLayer, PixelLayer, composite, read_layered
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.plugin.cli import main
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry
from tests.conftest import made_by
from tests.tools.installed import install_built

A = ArtifactKind
SIDE = 32


def portrait(width: int = 360, height: int = 270) -> tuple[np.ndarray, np.ndarray]:
    """A red disk (the subject) on a noisy grey-green background; RGBA and the disk."""
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[:height, :width]
    disk = (xx - width / 2) ** 2 + (yy - height / 2) ** 2 < (height * 0.3) ** 2
    rgb = np.empty((height, width, 3), np.float32)
    rgb[:] = (110, 130, 115)
    rgb += rng.normal(0, 6, rgb.shape)
    rgb[disk] = (205, 40, 35)
    pixels = np.clip(rgb, 0, 255).astype(np.uint8)
    return np.dstack([pixels, np.full((height, width), 255, np.uint8)]), disk


def test_grabcut_keeps_the_subject_and_clears_the_background() -> None:
    image, disk = portrait()
    tool = Registry.from_catalogue().get("grabcut_background")
    assert tool.availability().ok  # offline, no weights
    out = tool.run(
        ToolContext(SubtaskKind.BACKGROUND_REMOVAL, target="background"),
        {A.IMAGE: image},
        tool.spec.param_schedule()[0],
    ).outputs[A.IMAGE]
    assert np.array_equal(out[..., :3], image[..., :3])  # colours untouched
    alpha = out[..., 3]
    from layerpath.kit.imaging import dilate, erode

    assert alpha[erode(disk, 8)].min() == 255 and alpha[~dilate(disk, 8)].max() == 0  # soft edge


def test_remove_the_background_is_a_cut_out_layer_in_the_ora(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, disk = portrait()
    photo = tmp_path / "photo.png"
    Image.fromarray(image).save(photo)
    out, psd = tmp_path / "out.ora", tmp_path / "out.psd"
    assert main(["edit", str(photo), "remove the background", "-o", str(out)]) == 0
    shown = [line.strip() for line in capsys.readouterr().err.splitlines() if "%" in line]
    # progress shown each quarter, in words (the tool's name only with -v); the first
    # choice on the photos suite (made_by, below)
    assert shown == [f"working: {p}%" for p in (25, 50, 75, 100)]
    doc = read_layered(out)
    original, group = doc.layers
    assert isinstance(original, PixelLayer) and np.array_equal(original.pixels, image)
    assert isinstance(group, GroupLayer)
    (step,) = group.children
    assert step.blend == "destination-in" and made_by(doc, "salient_cutout") == [step]
    picture = composite(doc)
    assert np.array_equal(picture[..., :3][disk], image[..., :3][disk])
    assert picture[..., 3][disk].mean() > 245 and picture[0, :, 3].max() == 0
    group.visible = False  # hiding the step brings the background back
    assert np.array_equal(composite(doc), image)
    # PSD has no such layer mode: a clear error, nothing written
    assert main(["edit", str(photo), "remove the background", "-o", str(psd)]) == 2
    assert not psd.exists()


def tiny_isnet(path: Path, matte: np.ndarray) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("ReduceMean", ["input"], ["mean"], keepdims=0),
        helper.make_node("Mul", ["mean", "zero"], ["nothing"]),
        helper.make_node("Add", ["matte", "nothing"], ["output"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-isnet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, SIDE, SIDE])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1, SIDE, SIDE])],
        [
            numpy_helper.from_array(matte[None, None].astype(np.float32), "matte"),
            numpy_helper.from_array(np.float32(0), "zero"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


@pytest.fixture
def isnet(tmp_path: Path) -> ModelManager:
    pytest.importorskip("onnx")
    matte = np.full((SIDE, SIDE), -3.0, np.float32)  # logits: the model's raw scale
    matte[8:24, 8:24] = 4.0  # a square in the middle is the subject
    tiny_isnet(tmp_path / "models" / "isnet-general" / "isnet-general-use.onnx", matte)
    return install_built(tmp_path / "models", "isnet-general")


def test_isnet_matte_is_scaled_to_the_photo(isnet: ModelManager) -> None:
    image, _ = portrait(400, 300)
    tool = Registry.from_catalogue(models=isnet).get("isnet_background")
    assert tool.availability().ok
    out = tool.run(
        ToolContext(SubtaskKind.BACKGROUND_REMOVAL, target="background"),
        {A.IMAGE: image},
        tool.spec.param_schedule()[0],
    ).outputs[A.IMAGE]
    alpha = out[..., 3]
    assert np.array_equal(out[..., :3], image[..., :3])
    # the square's quarter-to-three-quarters of the model's input is rows 75..225 and
    # columns 100..300 of the photo; the matte is scaled up smoothly (one model pixel:
    # about 9 photo pixels)
    assert alpha[87:213, 112:288].min() == 255
    assert alpha[:63].max() == 0 and alpha[237:].max() == 0 and alpha[:, :88].max() == 0


def test_grabcut_cutouts_report_progress_through_the_engine_and_stop_when_cancelled() -> None:
    from layerpath.engine import events
    from layerpath.engine.execute.executor import Engine
    from layerpath.engine.types import EditRequest, Snapshot

    image, _ = portrait()
    seen: list[object] = []
    result = Engine(Registry.from_catalogue()).run(
        EditRequest("remove the background", Snapshot(image, {})), on_event=seen.append
    )
    assert result.ok
    shares = [e.share for e in seen if isinstance(e, events.ToolProgress)]
    # salient_cutout, the first choice: one per GrabCut iteration, then the edge
    assert shares == pytest.approx([1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 1.0])
    assert all(e.tool == "salient_cutout" for e in seen if isinstance(e, events.ToolProgress))

    from layerpath.errors import Cancelled

    for name in ("salient_cutout", "grabcut_background"):
        tool = Registry.from_catalogue().get(name)
        stop = ToolContext(SubtaskKind.BACKGROUND_REMOVAL, cancelled=lambda: True)
        with pytest.raises(Cancelled):
            tool.run(stop, {A.IMAGE: image}, tool.spec.param_schedule()[0])


def test_salient_cutout_keeps_ears_and_a_tail_that_a_frame_guess_cuts() -> None:
    """A subject with ears, a thin tail and a furry edge composited into scikit-image's
    grass photo (its alpha is the truth): the saliency-started GrabCut with a guided edge
    finds it closely; GrabCut from a frame inside the border does worse."""
    pytest.importorskip("skimage")
    from layerpath.benchmarks.photos import make_subject, place, skimage_photos, texture_sources

    grass = next(p for p in skimage_photos() if p.name == "grass")
    rng = np.random.default_rng(1)
    subject = make_subject(rng, texture_sources()[0], (240, 260))
    placed = place(grass.rgb, subject, (140, 130))
    image = np.dstack([placed.image, np.full(placed.image.shape[:2], 255, np.uint8)])
    truth = placed.alpha > 0.5
    registry = Registry.from_catalogue()

    def overlap(name: str) -> float:
        tool = registry.get(name)
        out = tool.run(
            ToolContext(SubtaskKind.BACKGROUND_REMOVAL), {A.IMAGE: image}, tool.spec.params
        ).outputs[A.IMAGE]
        assert np.array_equal(out[..., :3], image[..., :3])
        kept = out[..., 3] > 127
        return float((kept & truth).sum() / (kept | truth).sum())

    salient = overlap("salient_cutout")
    assert salient > 0.9 and salient > overlap("grabcut_background")


def test_matting_follows_a_soft_outline_closer_than_the_guided_filter() -> None:
    """The same subject with a furry edge in scikit-image's grass photo, cut exactly at
    half its alpha: the closed-form matte (pymatting, the `matting` extra) along the
    outline is nearer the true soft alpha than the guided filter's, and stays solid
    inside and clear outside."""
    pytest.importorskip("skimage")
    pytest.importorskip("pymatting")
    from layerpath.benchmarks.photos import make_subject, place, skimage_photos, texture_sources
    from layerpath.kit.imaging import dilate, erode
    from layerpath.tools.background import edge_matte, guided_matte

    grass = next(p for p in skimage_photos() if p.name == "grass")
    subject = make_subject(np.random.default_rng(1), texture_sources()[0], (240, 260))
    placed = place(grass.rgb, subject, (140, 130))
    truth = placed.alpha.astype(np.float32) / float(placed.alpha.max())
    cut = truth > 0.5
    outline = dilate(cut, 7) & ~erode(cut, 7)
    matted = edge_matte(placed.image, cut, 3)
    guided = guided_matte(placed.image, cut.astype(np.float32), 3)
    error = lambda matte: float(np.abs(matte - truth)[outline].mean())  # noqa: E731
    assert error(matted) < 0.8 * error(guided), (error(matted), error(guided))
    assert matted[erode(cut, 12)].min() > 0.99 and matted[~dilate(cut, 12)].max() < 0.01


@pytest.mark.parametrize("name", ["salient_cutout", "grabcut_background"])
def test_the_same_photo_gets_the_same_cut_whatever_ran_before(name: str) -> None:
    """GrabCut starts its colour models from OpenCV's random generator: without a seed
    of its own, the cut of the same photo changed from call to call (scikit-image's
    grass with a subject put in; the generator is stirred between the calls)."""
    pytest.importorskip("skimage")
    import cv2

    from layerpath.benchmarks.photos import make_subject, place, skimage_photos, texture_sources

    grass = next(p for p in skimage_photos() if p.name == "grass")
    subject = make_subject(np.random.default_rng(3), texture_sources()[1], (240, 260))
    placed = place(grass.rgb, subject, (140, 130))
    image = np.dstack([placed.image, np.full(placed.image.shape[:2], 255, np.uint8)])
    tool = Registry.from_catalogue().get(name)
    cuts = []
    for stir in (1, 2, 3):
        cv2.setRNGSeed(stir)
        cv2.randu(np.zeros((64, 64), np.float32), 0.0, 1.0)
        out = tool.run(
            ToolContext(SubtaskKind.BACKGROUND_REMOVAL), {A.IMAGE: image}, tool.spec.params
        )
        cuts.append(out.outputs[A.IMAGE][..., 3])
    assert all(np.array_equal(cuts[0], cut) for cut in cuts[1:])


def test_the_distance_to_the_nearest_border_colour_is_the_same_as_pixel_by_pixel() -> None:
    """border_saliency's distances from each pixel of a photo (scikit-image's coffee, in
    Lab) to the nearest of 12 colours, found in one pass of OpenCV's, are the distances
    worked out centre by centre."""
    from skimage import data

    from layerpath.kit.colours import to_lab
    from layerpath.kit.segments import nearest_distance

    lab = to_lab(data.coffee()).reshape(-1, 3)
    centres = lab[np.random.default_rng(0).choice(len(lab), 12, replace=False)] + 0.5
    by_centre = np.min([np.linalg.norm(lab - c, axis=1) for c in centres], axis=0)
    found = nearest_distance(lab, centres).ravel()
    assert found.shape == by_centre.shape
    np.testing.assert_allclose(found, by_centre, rtol=1e-6, atol=1e-4)
