"""The scorer against edits whose outcome is known: a perfect edit made by hand from the
ground truth scores 1, a broken one (nothing done, the wrong colour, the wrong place,
pixels changed elsewhere, a subtask left out) scores 0 or partial."""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image, ImageDraw

from layerpath.benchmarks.score import score_task
from layerpath.benchmarks.suite import Task, Truth, font, make_suite_scene
from layerpath.engine.types import (
    EditRequest,
    LayerKind,
    RunResult,
    StepLayer,
    Subtask,
    SubtaskOutcome,
)
from layerpath.kit.colours import from_lab, parse_color, to_lab
from layerpath.kit.imaging import mask_box
from layerpath.kit.types import SubtaskKind

K = SubtaskKind


def scene_with(background: str, thing: str) -> int:
    """The first seed whose scene has this background and object (deterministic)."""
    return next(
        s
        for s in range(500)
        if (sc := make_suite_scene(s)).background == background and thing in sc.things
    )


def task_of(seed: int, *truths: Truth) -> Task:
    return Task("t", make_suite_scene(seed), "", truths, blurred=False)


def outcome(kind: SubtaskKind, target: str | None, *steps: StepLayer) -> SubtaskOutcome:
    return SubtaskOutcome(Subtask(kind, target), "rule:test", (), steps, 0.0, 1.0)


def result(task: Task, image: np.ndarray, *outcomes: SubtaskOutcome) -> RunResult:
    request = EditRequest("", task.snapshot())
    plan = tuple(o.subtask for o in outcomes)
    return RunResult(request, plan, outcomes, (), image, 0.0)


def step(kind: LayerKind, **fields: object) -> StepLayer:
    return StepLayer("step", kind, "tool", "s1", 0.0, 1.0, {}, **fields)  # type: ignore[arg-type]


def recoloured(image: np.ndarray, mask: np.ndarray, colour: str) -> np.ndarray:
    """The object in the new hue with its own shading (what a good recolour does)."""
    lab = to_lab(image[..., :3]).astype(np.float32)
    goal = to_lab(np.array([[parse_color(colour)]], np.uint8))[0, 0].astype(np.float32)
    lab[mask, 1:] = goal[1:]
    out = image.copy()
    out[..., :3] = from_lab(lab)
    return out


def scores(task: Task, run: RunResult) -> list[float]:
    return [s.score for s in score_task(task, run).scores]


def test_recolouring_right_wrong_and_with_damage_elsewhere() -> None:
    seed = scene_with("flat wall", "ball")
    scene = make_suite_scene(seed)
    ball = scene.things["ball"]
    colour = "blue" if ball.colour != "blue" else "green"
    truth = Truth(K.OBJECT_RECOLORATION, "", "ball", ball.mask, colour=colour)
    task = task_of(seed, truth)
    done = outcome(K.OBJECT_RECOLORATION, "ball")
    perfect = recoloured(scene.image, ball.mask, colour)
    assert scores(task, result(task, perfect, done)) == [1.0]
    assert scores(task, result(task, scene.image, done)) == [0.0]  # nothing done
    opposite = "orange" if colour == "blue" else "purple"
    assert scores(task, result(task, recoloured(scene.image, ball.mask, opposite), done)) == [0.0]
    damaged = perfect.copy()
    damaged[:, :40, :3] = 0  # a black band far from the ball
    assert scores(task, result(task, damaged, done)) == [0.5]
    assert scores(task, result(task, perfect)) == [0.0]  # the subtask was never planned


def test_removal_filled_like_the_wall_scores_1_and_a_smear_of_the_object_0() -> None:
    seed = scene_with("flat wall", "box")
    scene = make_suite_scene(seed)
    box = scene.things["box"]
    task = task_of(seed, Truth(K.OBJECT_REMOVAL, "", "box", box.mask))
    ring = cv2.dilate(box.mask.astype(np.uint8), np.ones((31, 31), np.uint8)) > 0
    wall = np.median(scene.image[ring & ~scene.foreground][:, :3], axis=0)
    perfect = scene.image.copy()
    perfect[box.mask, :3] = wall
    done = outcome(K.OBJECT_REMOVAL, "box")
    assert scores(task, result(task, perfect, done)) == [1.0]
    assert scores(task, result(task, scene.image, done)) == [0.0]
    failed = SubtaskOutcome(Subtask(K.OBJECT_REMOVAL, "box"), "failed", (), (), 0.0, 0.0)
    assert scores(task, result(task, perfect, failed)) == [0.0]


def test_text_replacement_is_read_back() -> None:
    seed = scene_with("gradient sky", "ball")
    scene = make_suite_scene(seed)
    truth = Truth(K.TEXT_REPLACEMENT, "", "sign text", scene.masks["sign"], text="WELCOME")
    task = task_of(seed, truth)
    picture = Image.fromarray(scene.image)
    draw = ImageDraw.Draw(picture)
    s = scene.sign_box
    draw.rectangle((s.x0, s.y0, s.x1 - 1, s.y1 - 1), fill=scene.sign_colour)
    draw.text((s.x0 + 8, s.y0 + 6), "WELCOME", fill=(20, 20, 20), font=font(scene.font, 22))
    done = outcome(K.TEXT_REPLACEMENT, "sign text")
    assert scores(task, result(task, np.asarray(picture), done)) == [1.0]
    assert scores(task, result(task, scene.image, done)) == [0.0]  # still the old text


def test_detection_and_segmentation_against_the_true_object() -> None:
    seed = scene_with("grass", "vase")
    scene = make_suite_scene(seed)
    vase = scene.things["vase"].mask
    box = mask_box(vase)
    assert box is not None
    task = task_of(
        seed,
        Truth(K.OBJECT_DETECTION, "", "vase"),
        Truth(K.OBJECT_SEGMENTATION, "", "vase"),
    )
    rgba = np.zeros((box.height, box.width, 4), np.uint8)
    rgba[..., 3] = vase[box.y0 : box.y1, box.x0 : box.x1] * 255
    found = outcome(K.OBJECT_DETECTION, "vase", step(LayerKind.BOXES, boxes=(box,)))
    cut = outcome(
        K.OBJECT_SEGMENTATION, "vase", step(LayerKind.MASK, pixels=rgba, offset=(box.x0, box.y0))
    )
    assert scores(task, result(task, scene.image, found, cut)) == [1.0, 1.0]
    elsewhere = type(box)(0, 0, 20, 20, "vase")
    wrong = outcome(K.OBJECT_DETECTION, "vase", step(LayerKind.BOXES, boxes=(elsewhere,)))
    shifted = outcome(
        K.OBJECT_SEGMENTATION, "vase", step(LayerKind.MASK, pixels=rgba, offset=(0, 0))
    )
    assert scores(task, result(task, scene.image, wrong, shifted)) == [0.0, 0.0]


def test_upscaling_by_the_asked_factor_and_not_another() -> None:
    seed = scene_with("busy pattern", "kite")
    scene = make_suite_scene(seed)
    task = task_of(seed, Truth(K.IMAGE_UPSCALING, "", factor=2))
    h, w = scene.image.shape[:2]
    for factor, expected in ((2, 1.0), (3, 0.0)):
        big = cv2.resize(scene.image, (w * factor, h * factor), interpolation=cv2.INTER_CUBIC)
        grown = outcome(
            K.IMAGE_UPSCALING, None, step(LayerKind.PIXELS, canvas=(w * factor, h * factor))
        )
        assert scores(task, result(task, big, grown)) == [expected]


def test_outpainting_must_grow_the_asked_side_with_a_continuing_margin() -> None:
    seed = scene_with("flat wall", "ball")
    scene = make_suite_scene(seed)
    task = task_of(seed, Truth(K.OUTPAINTING, "", side="left"))
    h, w = scene.image.shape[:2]
    pad = w // 4
    mirrored = cv2.copyMakeBorder(scene.image, 0, 0, pad, 0, cv2.BORDER_REFLECT_101)
    grew = outcome(K.OUTPAINTING, None, step(LayerKind.PIXELS, canvas=(w + pad, h), shift=(pad, 0)))
    assert scores(task, result(task, mirrored, grew)) == [1.0]
    black = mirrored.copy()
    black[:, :pad, :3] = 0
    assert scores(task, result(task, black, grew)) == [0.0]  # a margin nothing like the edge
    right = cv2.copyMakeBorder(scene.image, 0, 0, 0, pad, cv2.BORDER_REFLECT_101)
    wrong_side = outcome(K.OUTPAINTING, None, step(LayerKind.PIXELS, canvas=(w + pad, h)))
    assert scores(task, result(task, right, wrong_side)) == [0.0]
