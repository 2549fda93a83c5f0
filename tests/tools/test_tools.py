"""Each offline tool on a synthetic scene: right result inside, nothing touched outside.
OCR runs the real PP-OCR models that the rapidocr package ships."""

from __future__ import annotations

import numpy as np
import pytest

from layerpath.engine.types import ArtifactKind as A
from layerpath.engine.types import SubtaskKind as K
from layerpath.engine.types import ToolContext
from layerpath.errors import BadInput, TargetNotFound
from layerpath.kit.colours import parse_color, to_lab
from layerpath.kit.imaging import dilate
from layerpath.kit.names import resolve_mask, text_matches
from layerpath.tools.ocr import read_text
from layerpath.tools.registry import Registry
from tests.conftest import Scene

REGISTRY = Registry.from_catalogue()


def run_tool(name: str, ctx: ToolContext, **inputs: object) -> dict[A, object]:
    tool = REGISTRY.get(name)
    values = {A(k): v for k, v in inputs.items()}
    return dict(tool.run(ctx, values, tool.spec.params).outputs)


def reads(image: object, text: str) -> bool:
    """OCR finds the text (small spurious reads such as '.-' do not count)."""
    return any(text_matches(t.text, text) for t in read_text(image))  # type: ignore[arg-type]


def changed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.any(a != b, axis=2)


def test_catalogue_builds_every_tool_with_priors_for_its_subtasks() -> None:
    assert len(REGISTRY) >= 14
    for tool in REGISTRY:
        # model tools wait for weights, the cloud tool is off by default, a GPU tool
        # waits for a GPU
        if tool.spec.model is None and tool.name != "cloud_inpaint" and not tool.spec.needs_gpu:
            assert tool.available() is None, tool.name
        assert set(tool.spec.subtasks) <= set(tool.spec.priors), tool.name


@pytest.mark.parametrize(
    ("target", "expected"),
    [("the ball", "ball"), ("balls", "ball"), ("red ball", "ball"), ("Wall", "wall")],
)
def test_target_resolves_to_named_mask(scene: Scene, target: str, expected: str) -> None:
    name, mask = resolve_mask(target, scene.masks, None)
    assert name == expected and np.array_equal(mask, scene.masks[expected])


def test_unknown_target_and_missing_selection_are_typed_errors(scene: Scene) -> None:
    with pytest.raises(TargetNotFound, match="Masks in this request: ball, sign, wall"):
        resolve_mask("giraffe", scene.masks, None)
    with pytest.raises(TargetNotFound, match="nothing is selected"):
        resolve_mask("this", scene.masks, None)
    # a mask given as the selection (--mask this=FILE, as the failure above advises)
    given = {**scene.masks, "this": scene.masks["ball"]}
    assert resolve_mask("this", given, None)[0] == "this"
    assert resolve_mask("the selection", given, scene.masks["wall"])[0] == "selection"


def test_mask_source_gives_mask_and_one_box_per_instance(scene: Scene) -> None:
    out = run_tool(
        "named_masks", ToolContext(K.OBJECT_DETECTION, "ball", masks=scene.masks), image=scene.image
    )
    (box,) = out[A.BOXES]  # type: ignore[misc]
    assert (box.x0, box.y0, box.x1, box.y1) == (63, 123, 118, 178)
    assert np.array_equal(out[A.MASK], scene.masks["ball"])  # type: ignore[arg-type]


@pytest.mark.parametrize("tool", ["opencv_telea", "opencv_ns"])
def test_inpainting_removes_the_object_and_stays_near_the_mask(scene: Scene, tool: str) -> None:
    ball = scene.masks["ball"]
    out = run_tool(tool, ToolContext(K.OBJECT_REMOVAL, "ball"), image=scene.image, mask=ball)[
        A.IMAGE
    ]
    assert isinstance(out, np.ndarray)
    assert not changed(scene.image, out)[~dilate(ball, 20)].any()
    assert out[ball][:, 0].mean() - out[ball][:, 2].mean() < 60  # no longer red
    assert np.array_equal(out[..., 3], scene.image[..., 3])


@pytest.mark.parametrize(
    ("tool", "color"), [("lab_recolor", "navy"), ("lab_recolor", "white"), ("hsv_recolor", "green")]
)
def test_recolour_reaches_the_colour_inside_only_and_keeps_texture(
    scene: Scene, tool: str, color: str
) -> None:
    wall = scene.masks["wall"]
    out = run_tool(
        tool, ToolContext(K.OBJECT_RECOLORATION, "wall", to=color), image=scene.image, mask=wall
    )[A.IMAGE]
    assert isinstance(out, np.ndarray)
    assert not changed(scene.image, out)[~wall].any()
    target = to_lab(np.array([[parse_color(color)]], np.uint8))[0, 0]
    mean = to_lab(out[..., :3])[wall].mean(axis=0)
    assert np.linalg.norm(mean[1:] - target[1:]) < 35
    assert out[..., :3][wall].std() > 1.0  # noise texture survives


@pytest.mark.parametrize(("ground", "seed"), [("gravel", 0), ("grass", 1), ("coffee", 2)])
def test_a_loose_mask_around_a_small_thing_recolours_the_thing_not_the_ground(
    ground: str, seed: int
) -> None:
    """A furry thing of a hundred pixels put with a soft edge on scikit-image's photos
    and recoloured through a mask drawn 2 px loose: the ring of ground the mask took in
    keeps its colour. GrabCut's trim kept a third to two thirds of it (a green halo
    round a toilet on gravel); the closed-form matte (pymatting, the `matting` extra)
    solves the band."""
    pytest.importorskip("skimage")
    pytest.importorskip("pymatting")
    from layerpath.benchmarks.photos import make_subject, skimage_photos, texture_sources
    from layerpath.benchmarks.region_tasks import ground_recoloured, loose_mask, pasted
    from layerpath.benchmarks.sources import Cutout

    rng = np.random.default_rng(seed)
    photo = next(p for p in skimage_photos() if p.name == ground)
    thing = make_subject(rng, texture_sources()[seed], (110, 90))
    picture, alpha = pasted(rng, photo.rgb, Cutout("thing", thing.rgb, thing.alpha), (0.2, 0.2))
    image = np.dstack([picture, np.full(picture.shape[:2], 255, np.uint8)])
    mask = loose_mask(alpha)
    out = run_tool(
        "lab_recolor",
        ToolContext(K.OBJECT_RECOLORATION, "thing", to="green"),
        image=image,
        mask=mask,
    )[A.IMAGE]
    assert isinstance(out, np.ndarray)
    assert ground_recoloured(alpha, mask, image, out) < 0.1
    lab = to_lab(out[..., :3])[alpha > 0.98]
    assert float((lab[:, 1] < -10).mean()) > 0.9  # the thing itself is green
    assert not changed(image, out)[~mask].any()


def test_recolour_without_a_colour_is_a_clear_error(scene: Scene) -> None:
    with pytest.raises(BadInput, match="not a colour"):
        run_tool(
            "lab_recolor",
            ToolContext(K.OBJECT_RECOLORATION, "wall", to="sparkly"),
            image=scene.image,
            mask=scene.masks["wall"],
        )


def test_ocr_reads_the_sign(scene: Scene) -> None:
    out = run_tool("rapidocr", ToolContext(K.TEXT_EXTRACTION), image=scene.image)
    (line,) = out[A.TEXT_BOXES]  # type: ignore[misc]
    assert line.text == "CLOSED" and line.score > 0.8
    assert line.ink is not None and 160 <= line.ink.x0 < line.ink.x1 <= 300  # inside the sign
    assert max(line.color) < 80 and min(line.background) > 200


def test_text_replacement_chain_reads_back_the_new_text(scene: Scene) -> None:
    boxes = read_text(scene.image)
    ctx = ToolContext(K.TEXT_REPLACEMENT, "text", to="OPEN")
    erased = run_tool("text_fill_erase", ctx, image=scene.image, text_boxes=boxes)[A.IMAGE]
    assert not reads(erased, "CLOSED")
    written = run_tool("pillow_text_write", ctx, image=erased, text_boxes=boxes)[A.IMAGE]
    assert [t.text for t in read_text(written)] == ["OPEN"]  # type: ignore[arg-type]
    assert not changed(scene.image, written)[~scene.masks["sign"]].any()  # type: ignore[arg-type]


def test_inpaint_erase_touches_glyphs_only(scene: Scene) -> None:
    boxes = read_text(scene.image)
    out = run_tool(
        "text_inpaint_erase", ToolContext(K.TEXT_REMOVAL), image=scene.image, text_boxes=boxes
    )[A.IMAGE]
    assert not reads(out, "CLOSED")
    assert not changed(scene.image, out)[~scene.masks["sign"]].any()  # type: ignore[arg-type]


def test_redaction_hides_matching_text(scene: Scene) -> None:
    boxes = read_text(scene.image)
    ctx = ToolContext(K.TEXT_REDACTION, subtask_params={"match": "CLOSED"})
    out = run_tool("box_redact", ctx, image=scene.image, text_boxes=boxes)[A.IMAGE]
    assert not reads(out, "CLOSED")
    box = boxes[0].box
    assert (out[box.y0 + 2 : box.y1 - 2, box.x0 + 2 : box.x1 - 2, :3] == 0).all()  # type: ignore[index]


def test_highlight_marks_the_keyword_and_keeps_it_readable(scene: Scene) -> None:
    boxes = read_text(scene.image)
    ctx = ToolContext(K.KEYWORD_HIGHLIGHTING, "CLOSED", subtask_params={"match": "CLOSED"})
    out = run_tool("keyword_highlight", ctx, image=scene.image, text_boxes=boxes)[A.IMAGE]
    assert [t.text for t in read_text(out)] == ["CLOSED"]  # type: ignore[arg-type]
    region = out[boxes[0].box.y0 : boxes[0].box.y1, boxes[0].box.x0 : boxes[0].box.x1].astype(float)  # type: ignore[index]
    assert region[..., 2].mean() < region[..., 0].mean() - 40  # yellow: blue channel pulled down


def test_text_addition_is_readable(scene: Scene) -> None:
    ctx = ToolContext(K.TEXT_ADDITION, to="SALE", subtask_params={"position": "bottom"})
    out = run_tool("pillow_text_add", ctx, image=scene.image)[A.IMAGE]
    assert "SALE" in [t.text for t in read_text(out)]  # type: ignore[arg-type]
