"""Reflection with several experts (IMAGAgent): each step is judged by the meaning,
quality, aesthetics and consistency experts, the lowest opinion counts, and a try they
turn down is tried again with parameters that answer what they found. The real engine,
checkers and offline tools, on the generated scene and on scikit-image's astronaut
(which ships in its package); the one faulty tool is a real Tool subclass registered
beside the catalogue's, as in test_faults."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from layerpath.engine.execute.executor import Engine
from layerpath.engine.judge.checks.recolour import check_recolour
from layerpath.engine.judge.checks.verdict import Expert, Opinion
from layerpath.engine.judge.experts import _senses, checker_opinions, clipped_shares
from layerpath.engine.judge.reflection import reflect
from layerpath.engine.types import EditRequest, Snapshot, Subtask, SubtaskKind
from layerpath.kit.imaging import dilate
from layerpath.kit.types import ArtifactKind, Prior, ToolContext, ToolResult
from layerpath.tools.base import Tool
from layerpath.tools.registry import Registry
from tests.conftest import Scene

K = SubtaskKind
ENGINE = Path(__file__).parents[2] / "engine"


def test_every_defect_the_experts_know_is_one_a_checker_writes() -> None:
    """defects.json says which expert each defect belongs to: a name no checker writes
    (renamed in the code, not in the data) would leave a defect to the default."""
    sources = "".join(p.read_text() for p in (ENGINE / "judge" / "checks").glob("*.py"))
    sources += (ENGINE / "judge" / "quality.py").read_text()
    sources += (ENGINE / "judge" / "experts.py").read_text()
    sources += (
        ENGINE.parent / "layerpath" / "kit" / "sky.py"
    ).read_text()  # (a found sky's doubts)
    for name, _ in _senses():
        if "*" in name:  # a pattern: 'the warmth hardly changed' is written as a format
            fixed = max(name.split("*"), key=len).strip()
            assert fixed in sources, name
        else:
            assert f'"{name}"' in sources or f"'{name}'" in sources, name


def test_a_checkers_verdict_is_its_experts_opinions_and_the_lowest_is_its_score(
    scene: Scene,
) -> None:
    """A recolour that leaks onto the floor: the meaning expert agrees (the wall is
    navy), the consistency expert does not (the floor changed), and the verdict is the
    checker's own score."""
    wall = scene.masks["wall"]
    after = scene.image.copy()
    leaked = dilate(wall, 12)
    after[leaked, :3] = (25, 35, 95)
    found = check_recolour(scene.image, after, wall, "navy")
    opinions = checker_opinions(found, Subtask(K.OBJECT_RECOLORATION, "wall", "navy"))
    by = {o.expert: o for o in opinions}
    assert by[Expert.MEANING].score >= 0.5
    assert by[Expert.CONSISTENCY].score < 0.5
    assert "pixels changed outside the region" in by[Expert.CONSISTENCY].reason
    assert min(o.score for o in opinions) == pytest.approx(found.score)


def recolour_spec() -> Any:
    return Registry.from_catalogue().get("lab_recolor").spec


def test_reflection_answers_what_the_experts_found_and_never_repeats_a_try() -> None:
    spec = recolour_spec()
    weak = Opinion(
        Expert.MEANING, "checks", 0.2, "not the asked colour", {"not the asked colour": 2.0}
    )
    answer = reflect(spec, {"lightness": 0.6}, [weak], [{"lightness": 0.6}])
    assert answer is not None
    assert answer.params["lightness"] == pytest.approx(0.85)
    assert "brightness" in answer.why and "lightness 0.6 -> 0.85" in answer.why
    # the opposite complaint turns the other way; a try made already is not made again
    flat = Opinion(Expert.QUALITY, "checks", 0.3, "texture lost", {"texture lost": 1.5})
    assert reflect(spec, {"lightness": 0.6}, [flat], [])
    assert reflect(spec, {"lightness": 0.6}, [flat], []).params["lightness"] == pytest.approx(0.35)  # type: ignore[union-attr]
    assert reflect(spec, {"lightness": 0.6}, [weak], [{"lightness": 0.85}]) is None
    # at its limit there is nothing left to answer with
    assert reflect(spec, {"lightness": 1.0}, [weak], []) is None


def test_a_generative_tools_next_try_takes_the_experts_words_for_its_prompt() -> None:
    spec = Registry.from_catalogue().get("sd_inpaint").spec
    smear = Opinion(
        Expert.QUALITY,
        "checks",
        0.2,
        "smeared detail",
        {"smeared detail": 2.0},
        avoid=("blurry", "smudged"),
        add=("sharp detail",),
    )
    vlm = Opinion(
        Expert.MEANING, "vlm", 0.3, "the vision model: the cat is still there", avoid=("cat",)
    )
    answer = reflect(spec, spec.param_schedule()[0], [smear, vlm], [])
    assert answer is not None
    assert answer.params["avoid"] == ["blurry", "smudged", "cat"]
    assert answer.params["add"] == ["sharp detail"]
    assert answer.params["seed"] != spec.params["seed"]  # a new start as well


def patch_fills(result: Any) -> list[Any]:
    return [c for c in result.calls if c.tool == "patch_fill"]


def test_a_fill_beside_a_recoloured_wall_is_tried_again_with_why(scene: Scene) -> None:
    """The wall's mask stops 6 px short of the ball, so the old wall colour rings the
    ball on the wall made blue and the first fills are turned down: each retry says
    why its parameters are what they are (reflection's answer to what the experts found,
    or the tool's schedule), and the report keeps it. (Recoloured through its mask's
    coverage, the wall no longer leaves the fringe this test was first made on: there
    the fill passes at once, with or without reflection; and with its edge matted, a
    4 px gap's ring blends enough for the first fill to pass.)"""
    engine = Engine(Registry.from_catalogue())
    words = "recolor the wall to blue and remove the ball"
    at_once = engine.run(EditRequest(words, scene.snapshot()))
    assert at_once.ok and [c.passed for c in patch_fills(at_once)] == [True]
    masks = dict(scene.masks)
    masks["wall"] = masks["wall"] & ~dilate(masks["ball"], 6)
    snapshot = Snapshot(scene.image, masks)
    reflected = engine.run(EditRequest(words, snapshot))
    fixed = engine.run(EditRequest(words, snapshot, reflect=False))
    assert reflected.ok and fixed.ok
    first, *later = patch_fills(reflected)
    assert not first.passed and later[-1].passed and len(later) <= 2
    # (the ring of old colour also makes the ground look varied to the meaning expert)
    assert Expert.QUALITY in {o.expert for o in first.opinions if o.score < 0.5}
    assert all(c.why for c in later)
    assert patch_fills(fixed)[1].why == (
        "the tool's retry 1: guided False, seed 1, smooth_below 0.0"
    )
    from layerpath.engine.files.report import build_report

    report = build_report(reflected)
    calls = [c for c in report["tool_calls"] if c["tool"] == "patch_fill"]
    assert calls[1]["attempt"] == 2 and calls[1]["why"]
    assert {e["expert"] for e in calls[0]["experts"]} >= {"meaning", "quality"}
    _, removal = report["subtasks"]
    assert all(e["score"] >= 0.5 for e in removal["experts"])


class StaleFill(Tool):
    """A removal that fills the hole from what is around it now, and then puts back,
    around the hole, the picture as it was when the run began (a stale copy: the bug of
    a tool that caches its input). Its own check cannot see it: the ring it compares
    against and the fill agree."""

    original: np.ndarray | None = None

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image, hole = inputs[ArtifactKind.IMAGE], inputs[ArtifactKind.MASK]
        assert StaleFill.original is not None
        out = image.copy()
        ring = dilate(hole, 5) & ~hole
        out[hole, :3] = np.median(image[ring, :3], axis=0).astype(np.uint8)
        stale = dilate(hole, 23) & ~dilate(hole, 8)
        out[stale] = StaleFill.original[stale]
        return ToolResult({ArtifactKind.IMAGE: out})


def tile_scene() -> Snapshot:
    """A plain grey wall with a small tile, and a bead a little left of it."""
    image = np.full((160, 220, 4), 255, np.uint8)
    image[..., :3] = (150, 150, 150)
    tile = np.zeros((160, 220), bool)
    tile[60:92, 104:136] = True
    image[tile, :3] = (200, 190, 60)
    yy, xx = np.mgrid[:160, :220]
    bead = (yy - 76) ** 2 + (xx - 86) ** 2 <= 7**2
    image[bead, :3] = (40, 40, 40)
    return Snapshot(image, {"tile": tile, "bead": bead})


def test_a_step_that_undoes_an_earlier_step_is_turned_down_by_the_consistency_expert() -> None:
    catalogue = Registry.from_catalogue()
    spec = dataclasses.replace(
        catalogue.get("patch_fill").spec,
        name="stale_fill",
        impl="tests.engine.test_reflection:StaleFill",
        params={},
        retry_params=(),
        remedies=(),
        priors={K.OBJECT_REMOVAL: Prior(0.01, 0.99)},
    )
    registry = Registry(
        [catalogue.get("named_masks"), catalogue.get("lab_recolor"), StaleFill(spec)]
    )
    snapshot = tile_scene()
    StaleFill.original = snapshot.image
    engine = Engine(registry)
    result = engine.run(EditRequest("recolor the tile to blue, then remove the bead", snapshot))
    recolour, removal = result.outcomes
    assert recolour.ok and not removal.ok
    (objection,) = [o for o in removal.opinions if o.score < 0.5]
    assert objection.expert == Expert.CONSISTENCY
    assert "it undoes step 1 (Object Recoloration 'tile' -> 'blue')" in objection.reason
    assert "undoes step 1" in str(removal.error)
    assert (result.image[snapshot.masks["tile"], 2] > 150).mean() > 0.95  # the tile stays blue
    # the same fill on a picture whose tile was already blue undoes no step of its run
    StaleFill.original = result.image
    alone = engine.run(EditRequest("remove the bead", Snapshot(result.image, snapshot.masks)))
    assert alone.ok


def test_saturating_a_photo_clipped_by_the_plain_adjustment_is_eased_into_the_gamut(
    tmp_path: Path,
) -> None:
    """'boost the saturation' on the astronaut: the plain step pushes the suit's orange
    and the flag's red into the gamut's edge, which the aesthetics expert turns down;
    reflection eases them into it instead, and the photo is still more colourful.
    (Brightening no longer clips at all: it eases its highlights from the first try.)"""
    pytest.importorskip("skimage")
    from skimage import data

    from layerpath.kit.colours import to_lab

    photo = np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])
    engine = Engine(Registry.from_catalogue())
    result = engine.run(EditRequest("boost the saturation", Snapshot(photo)))
    assert result.ok
    first, second = [c for c in result.calls if c.tool == "photo_adjust"]
    assert not first.passed and second.passed
    turned = [o for o in first.opinions if o.score < 0.5]
    assert [o.expert for o in turned] == [Expert.AESTHETICS]
    assert second.params["protect"] is True and "into the gamut" in second.why
    asked = {"op": "saturation", "amount": result.plan[0].params["amount"]}
    plain = (
        Registry.from_catalogue()
        .get("photo_adjust")
        .run(
            ToolContext(K.PHOTO_ADJUSTMENT, subtask_params=asked),
            {ArtifactKind.IMAGE: photo},
            {"feather": 0},
        )
    )
    spared = np.zeros((2, 3), bool)
    eased = sum(clipped_shares(photo, result.image, spared).values())
    clipped = sum(clipped_shares(photo, plain.outputs[ArtifactKind.IMAGE], spared).values())
    assert eased < clipped / 4
    chroma = lambda a: np.hypot(*to_lab(a[..., :3])[..., 1:].T).mean()  # noqa: E731
    assert chroma(result.image) > chroma(photo) + 2  # more colourful all the same
    step = result.outcomes[0].steps[0]
    assert {o.expert for o in step.opinions} == {Expert.MEANING, Expert.AESTHETICS}
    assert json.dumps([o.to_json() for o in step.opinions])  # the record can hold them
