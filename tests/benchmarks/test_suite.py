"""The scene suite's generator: the ground truth matches the scene it was drawn from,
the instructions mean the subtasks they are scored as, and a seed gives the same suite."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from layerpath.benchmarks.suite import (
    BUCKETS,
    Task,
    make_suite,
    make_suite_scene,
)
from layerpath.engine.plan.planner import plan_offline
from layerpath.kit.colours import color_lab, parse_color, to_lab
from layerpath.kit.types import SubtaskKind
from layerpath.tools.ocr import read_text

K = SubtaskKind
TEXT_READS = {K.TEXT_DETECTION, K.TEXT_EXTRACTION, K.KEYWORD_HIGHLIGHTING}


@pytest.fixture(scope="module")
def suite() -> list[Task]:
    return make_suite(seed=0, tasks=120)


def test_the_suite_has_120_tasks_in_the_costa_mix_and_is_the_same_for_a_seed(
    suite: list[Task],
) -> None:
    buckets = Counter(t.bucket for t in suite)
    assert buckets == {f"{lo}-{hi}": 30 for lo, hi in BUCKETS}
    assert all(1 <= t.size <= 8 for t in suite)
    kinds = Counter(truth.kind for t in suite for truth in t.truths)
    assert len(kinds) >= 15  # every kind the offline tools can do
    assert {t.scene.background for t in suite} == {
        "flat wall",
        "gradient sky",
        "grass",
        "busy pattern",
    }
    again = make_suite(seed=0, tasks=120)
    assert [t.instruction for t in again] == [t.instruction for t in suite]
    assert all(
        np.array_equal(a.photo(), b.photo()) for a, b in zip(again[:10], suite[:10], strict=True)
    )
    other = make_suite(seed=1, tasks=8)
    assert [t.instruction for t in other] != [t.instruction for t in suite[:8]]


def test_each_instruction_plans_into_the_subtasks_it_is_scored_as(suite: list[Task]) -> None:
    for task in suite:
        planned = Counter((s.kind, s.target) for s in plan_offline(task.instruction).subtasks)
        truths = Counter(t.kind for t in task.truths)
        assert Counter(kind for kind, _ in planned.elements()) == truths, task.instruction
        for truth in task.truths:
            if truth.kind in (K.OBJECT_REMOVAL, K.OBJECT_RECOLORATION, K.OBJECT_DETECTION):
                assert (truth.kind, truth.target) in planned, task.instruction


def test_object_truths_are_the_objects_in_the_picture(suite: list[Task]) -> None:
    for task in suite:
        scene = task.scene
        for truth in task.truths:
            if truth.kind not in (K.OBJECT_REMOVAL, K.OBJECT_RECOLORATION):
                continue
            thing = scene.things[str(truth.target)]
            assert truth.region is not None
            assert np.array_equal(truth.region, thing.mask)
            assert np.array_equal(scene.masks[thing.name], thing.mask)
            # the region really holds an object of the colour the scene says it has
            lab = to_lab(scene.image[..., :3][thing.mask][None])[0].mean(axis=0)
            goal = color_lab(parse_color(thing.colour))
            hue = np.degrees(np.arctan2(lab[2], lab[1]) - np.arctan2(goal[2], goal[1]))
            assert abs((hue + 180) % 360 - 180) < 25, (task.id, thing.colour)
            if truth.kind == K.OBJECT_RECOLORATION:
                assert truth.colour != thing.colour
        # objects do not touch each other or the sign
        masks = list(scene.masks.values())
        assert sum(m.sum() for m in masks) == np.logical_or.reduce(masks).sum()


def test_the_sign_reads_as_its_truth_and_reads_expect_the_edited_text(
    suite: list[Task],
) -> None:
    for task in suite[:120:15]:  # OCR is slow: every 15th scene, each font appears
        scene = task.scene
        lines = " ".join(t.text for t in read_text(scene.image))
        assert scene.sign_text.replace(" ", "") in lines.replace(" ", ""), task.id
        t = scene.text_box
        ink = scene.image[t.y0 : t.y1, t.x0 : t.x1, :3].min(axis=2) < 80
        assert ink.mean() > 0.05  # the text box holds the dark text
        s = scene.sign_box
        assert s.x0 <= t.x0 and s.y0 <= t.y0 and t.x1 <= s.x1 and t.y1 <= s.y1
    for task in suite:
        kinds = {t.kind for t in task.truths}
        if kinds & {K.TEXT_REMOVAL, K.TEXT_REDACTION}:
            assert not kinds & TEXT_READS  # nothing left to read
        if K.BACKGROUND_REMOVAL in kinds:  # every object stays in front of it
            assert K.OBJECT_REMOVAL not in kinds
        replaced = next((t.text for t in task.truths if t.kind == K.TEXT_REPLACEMENT), None)
        final = replaced or task.scene.sign_text
        for truth in task.truths:
            if truth.kind == K.KEYWORD_HIGHLIGHTING:
                assert truth.text in final.split()
            if truth.kind in (K.TEXT_DETECTION, K.TEXT_EXTRACTION):
                assert str(truth.text).startswith(final)


def test_a_deblurring_task_gets_the_blurred_photo_and_others_the_scene() -> None:
    for task in make_suite(seed=0, tasks=40):
        photo = task.photo()
        if task.blurred:
            assert any(t.kind == K.IMAGE_DEBLURRING for t in task.truths)
            assert not np.array_equal(photo, task.scene.image)
        else:
            assert np.array_equal(photo, task.scene.image)
        assert np.array_equal(task.snapshot().image, photo)


def test_scenes_differ_by_seed_and_repeat_for_the_same_seed() -> None:
    a, b = make_suite_scene(3), make_suite_scene(3)
    assert np.array_equal(a.image, b.image) and a.sign_text == b.sign_text
    assert not np.array_equal(make_suite_scene(4).image, a.image)
