"""Rules learnt from traces and verified before use (FaSTA*'s induction), with the real
engine, a real SQLite trace store and the generated scenes suite as the replay set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from layerpath.benchmarks.replay import suite_replay
from layerpath.benchmarks.suite import make_suite
from layerpath.engine.execute.executor import Engine
from layerpath.engine.execute.subroutines import Rule, RuleTable
from layerpath.engine.learn.induction import Evidence, evidence, induce_offline, verify
from layerpath.engine.learn.knowledge import BenchmarkTable
from layerpath.engine.learn.rulebook import RuleBook
from layerpath.engine.learn.traces import TraceStore
from layerpath.engine.types import EditRequest, SubtaskKind
from layerpath.plugin.cli import main
from layerpath.tools.registry import Registry
from tests.conftest import Scene

REGISTRY = Registry.from_catalogue()


@pytest.mark.slow
def test_verification_accepts_a_good_rule_and_rejects_a_bad_one() -> None:
    """Without the text rules (SR9, SR10) the search finds text replacements by trying
    tools; the rule erase-by-fill-then-write costs less at the same accuracy: B < 0,
    accepted. hsv_recolor for every recolour is cheap by the table, so the fast path
    takes it, but it fails the checks on dark targets and the search runs after it:
    B > 0, rejected."""
    shipped = RuleTable.load(REGISTRY)
    # (five of each: on the first four recolours the shipped HSV rule serves, or the checks
    # refuse HSV's pink, so the bad rule solves none)
    replay = suite_replay(REGISTRY, BenchmarkTable.from_tools(REGISTRY), per_kind=5)
    without_text = RuleTable([r for r in shipped.rules if r.id not in ("SR9", "SR10")], REGISTRY)
    good = Rule(
        id="M-good",
        subtask=SubtaskKind.TEXT_REPLACEMENT,
        tools=["rapidocr", "text_fill_erase", "pillow_text_write"],
        source="mined",
    )
    accepted = verify(good, without_text, replay)
    assert accepted.accepted and accepted.benefit is not None and accepted.benefit < 0
    bad = Rule(
        id="M-bad",
        subtask=SubtaskKind.OBJECT_RECOLORATION,
        tools=["named_masks", "hsv_recolor"],
        source="mined",
    )
    rejected = verify(bad, shipped, replay)
    assert not rejected.accepted and rejected.benefit is not None and rejected.benefit > 0


def _evidence(tools: tuple[str, ...], ok: bool, **features: object) -> Evidence:
    return Evidence(
        SubtaskKind.OBJECT_REMOVAL, "search", tools, features, ok, 1.0, 0.9 if ok else 0.2
    )


def test_the_offline_inducer_finds_the_condition_that_separates_a_path() -> None:
    """patch_fill worked on busy ground, Telea on flat ground: each path's rule gets the
    background condition; a path with too little support gets none; attempts the checks
    could not judge (route 'failed') are not evidence."""
    fill, telea = ("named_masks", "patch_fill"), ("named_masks", "opencv_telea")
    found = [
        *[_evidence(fill, True, background="busy", size=s) for s in ("small", "medium", "small")],
        *[_evidence(telea, True, background="flat", size=s) for s in ("small", "medium", "tiny")],
        _evidence(("named_masks", "opencv_ns"), True, background="flat", size="tiny"),
    ]
    proposals = {c.rule.tools[1]: c.rule for c in induce_offline(found, RuleTable([], REGISTRY))}
    assert set(proposals) == {"patch_fill", "opencv_telea"}  # opencv_ns: support 1
    (condition,) = proposals["patch_fill"].conditions
    assert condition.feature == "background" and condition.in_ == ["busy"]
    assert proposals["opencv_telea"].conditions[0].in_ == ["flat"]
    assert proposals["patch_fill"].source == "mined" and proposals["patch_fill"].support == 3
    unjudged = {
        "subtask_kind": "object_removal",
        "route": "failed",
        "tool_path": json.dumps(list(fill)),
        "features": "{}",
        "ok": 0,
    }
    assert evidence([unjudged], RuleTable([], REGISTRY)) == []


@pytest.mark.slow
def test_layerpath_learn_on_a_fresh_profile_learns_a_rule_the_fast_path_then_uses(
    isolated_dirs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A profile whose runs went through the search (upscaling has no shipped rule):
    `layerpath learn --json` proposes the path the search found, verifies it on the
    replay set, keeps it in rules.json with its source, support and decision; a later
    run solves upscaling by that rule."""
    store = TraceStore(isolated_dirs / "data" / "traces.sqlite")
    engine = Engine(REGISTRY, traces=store)
    task = make_suite(11, 1)[0]
    for factor in (2, 2, 3, 2):
        engine.run(EditRequest(f"upscale the image {factor}x", task.snapshot()))
    assert main(["learn", "--json", "--replay-tasks", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    upscaling = [d for d in out["decisions"] if d["rule"]["subtask"] == "image_upscaling"]
    assert upscaling and upscaling[0]["rule"]["source"] == "mined"
    assert upscaling[0]["accepted"], upscaling
    book = RuleBook(REGISTRY)
    (mined,) = [r for r in book.mined() if r.subtask == SubtaskKind.IMAGE_UPSCALING]
    assert mined.id in out["accepted"] and mined.support == 4 and mined.accepted
    learnt = json.loads((isolated_dirs / "data" / "learning.json").read_text())["decisions"]
    assert any(d["rule"]["id"] == mined.id and d["accepted"] for d in learnt)
    assert main(["rules", "show", mined.id]) == 0 and "mined" in capsys.readouterr().out
    again = Engine(REGISTRY, rules=book.table()).run(
        EditRequest("upscale the image 2x", task.snapshot())
    )
    assert again.outcomes[0].solved_by == f"rule:{mined.id}"


def test_after_every_n_runs_learning_starts_in_a_process_of_its_own(
    scene: Scene, isolated_dirs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With learn_every 2, the second recorded run starts `layerpath learn` in the
    background (the edit does not wait for it); it records how many runs it learnt
    from, so the third run starts none; a second learner at once is refused."""
    import time

    from layerpath.engine.learn.learning import LOCK, learning_lock
    from layerpath.errors import BadInput
    from layerpath.settings import Settings, save_settings

    save_settings(Settings(learn_every=2))
    image, masks = scene.save(isolated_dirs / "in")
    out = isolated_dirs / "out.png"
    edit = ["edit", str(image), "recolor the wall to navy", f"--mask=wall={masks['wall']}", "-o", str(out)]  # fmt: skip
    assert main(edit) == 0 and "in the background" not in capsys.readouterr().err
    assert (
        main(edit) == 0
        and "learning new rules from your runs in the background" in capsys.readouterr().err
    )
    data = isolated_dirs / "data"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (data / "learning.json").exists():
        time.sleep(0.5)
    while time.monotonic() < deadline and (data / LOCK).exists():
        time.sleep(0.5)
    assert json.loads((data / "rules.json").read_text())["learned_at_runs"] == 2
    assert "learning from" in (data / "learning.log").read_text()
    assert main(edit) == 0 and "in the background" not in capsys.readouterr().err
    with learning_lock(data), pytest.raises(BadInput, match="already learning"):
        with learning_lock(data):
            pass


@pytest.mark.slow
def test_the_llm_inducer_proposes_through_the_endpoint_and_bad_rules_are_dropped(
    isolated_dirs: Path, scene: Scene
) -> None:
    """The real openai client against a scripted OpenAI-compatible server on 127.0.0.1:
    the prompt carries the traces summarised and the current rules; of the model's
    answer, a rule naming a tool that does not exist and one conditioned on a feature the
    traces lack are dropped with their reasons; the valid one is verified on the replay
    set and accepted. A rule verification rejects goes back to the model, whose
    corrected rule is verified in turn."""
    from layerpath.engine.learn.induction import learn
    from layerpath.engine.learn.llm_induction import LlmInducer
    from layerpath.engine.plan.llm_planner import LlmPlanner
    from layerpath.settings import LlmSettings
    from tests.openai_server import ScriptedServer

    store = TraceStore(isolated_dirs / "traces.sqlite")
    engine = Engine(REGISTRY, traces=store)
    task = make_suite(11, 1)[0]
    for text in ("upscale the image 2x", "upscale the image 2x"):
        engine.run(EditRequest(text, task.snapshot()))
    engine.run(EditRequest("recolor the wall to navy", scene.snapshot()))
    answer = {
        "rules": [
            {
                "subtask": "image_upscaling",
                "tools": ["lanczos_upscale"],
                "conditions": [],
                "why": "always worked",
            },  # fmt: skip
            {"subtask": "image_upscaling", "tools": ["rm_rf"], "conditions": []},
            {
                "subtask": "object_recoloration",
                "tools": ["named_masks", "hsv_recolor"],
                "conditions": [{"feature": "mood", "eq": "sunny"}],
            },  # fmt: skip
            {
                "subtask": "object_recoloration",
                "tools": ["named_masks", "hsv_recolor"],
                "conditions": [],
            },  # fmt: skip
        ]
    }
    corrected = {"rules": [{"subtask": "object_recoloration", "tools": ["named_masks", "hsv_recolor"], "conditions": [{"feature": "size", "in": ["tiny"]}]}]}  # fmt: skip
    server = ScriptedServer()
    try:
        server.script = [(200, json.dumps(answer)), (200, json.dumps(corrected)), (200, '{"rules": []}'), (200, '{"rules": []}')]  # fmt: skip
        planner = LlmPlanner(
            LlmSettings(base_url=server.url, model="test-model", timeout_s=5), "sk-test"
        )
        inducer = LlmInducer(planner, REGISTRY)
        shipped = RuleTable.load(REGISTRY)
        replay = suite_replay(REGISTRY, BenchmarkTable.from_tools(REGISTRY), per_kind=2)
        accepted, decisions = learn(store.attempts(), shipped, replay, [inducer])
        prompt = server.requests[0]["messages"][1]["content"]
    finally:
        server.close()
    assert "image_upscaling | lanczos_upscale" in prompt and '"SR1"' in prompt
    assert [r.tools for r in accepted] == [["lanczos_upscale"]]
    assert accepted[0].source == "mined" and "always worked" in accepted[0].note
    reasons = [d.reason for d in inducer.rejected]
    assert any("unknown tools: rm_rf" in r for r in reasons)
    assert any("'mood'" in r for r in reasons)
    hsv = [d for d in decisions if d.rule["tools"] == ["named_masks", "hsv_recolor"]]
    assert not hsv[0].accepted and hsv[0].inducer == "llm"
    assert len(hsv) >= 2 and hsv[1].attempt == 1  # the model's correction, verified too
    assert "was rejected on the replay set" in server.requests[1]["messages"][-1]["content"]
