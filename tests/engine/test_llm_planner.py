"""The LLM planner through the real `openai` client against an OpenAI-compatible
server this test runs on 127.0.0.1 with scripted answers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from layerpath.engine.plan.llm_planner import LlmPlanner, llm_planner_with_fallback
from layerpath.engine.types import EditRequest, SubtaskKind
from layerpath.plugin.cli import main
from layerpath.settings import LlmSettings, Settings, save_settings
from layerpath.settings.secrets import set_api_key
from tests.conftest import Scene
from tests.openai_server import ScriptedServer, Trickle


def planner_for(server: ScriptedServer, key: str | None = "sk-test-123") -> LlmPlanner:
    return LlmPlanner(LlmSettings(base_url=server.url, model="test-model", timeout_s=5), key)


GOOD = json.dumps(
    {
        "subtasks": [
            {"kind": "object_recoloration", "target": "wall", "to": "yellow"},
            {"kind": "Object Removal", "target": "ball"},
        ]
    }
)


def test_valid_answer_becomes_the_plan_and_the_image_is_attached(
    server: ScriptedServer, scene: Scene
) -> None:
    server.script = [(200, GOOD)]
    plan = planner_for(server).plan(
        EditRequest("make the wall yellow and lose the ball", scene.snapshot())
    )
    assert [(s.kind, s.target, s.to) for s in plan.subtasks] == [
        (SubtaskKind.OBJECT_RECOLORATION, "wall", "yellow"),
        (SubtaskKind.OBJECT_REMOVAL, "ball", None),
    ]
    assert plan.planner == "llm"
    sent = server.requests[0]
    assert sent["model"] == "test-model"
    # the answer held to the plan's schema (every kind named), not just any JSON object
    assert sent["response_format"]["type"] == "json_schema"
    schema = json.dumps(sent["response_format"]["json_schema"]["schema"])
    assert "subtasks" in schema and all(k.value in schema for k in SubtaskKind)
    parts = sent["messages"][1]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert server.headers[0]["authorization"] == "Bearer sk-test-123"


def test_garbage_then_valid_answer_is_repaired_once(server: ScriptedServer, scene: Scene) -> None:
    server.script = [(200, "Sure! Here is your plan: remove ball"), (200, GOOD)]
    plan = planner_for(server).plan(EditRequest("x", scene.snapshot()))
    assert len(plan.subtasks) == 2
    repair = server.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "not valid" in repair[-1]["content"]


def test_the_llm_is_told_the_looks_and_its_look_is_validated(
    server: ScriptedServer, scene: Scene
) -> None:
    """The prompt names the looks and the modifiers; a look with a kept region is taken,
    a look layerpath has not got is sent back for repair."""
    look = {"op": "look", "look": "moody", "amount": 0.6, "outside": True}
    good = json.dumps(
        {"subtasks": [{"kind": "region_adjustment", "target": "face", "params": look}]}
    )
    unknown = json.dumps(
        {"subtasks": [{"kind": "photo_adjustment", "params": {"op": "look", "look": "steampunk"}}]}
    )
    server.script = [(200, unknown), (200, good)]
    plan = planner_for(server).plan(EditRequest("moody, but not her face", scene.snapshot()))
    (subtask,) = plan.subtasks
    assert subtask.kind == SubtaskKind.REGION_ADJUSTMENT and dict(subtask.params) == look
    prompt = server.requests[0]["messages"][0]["content"]
    assert "teal_orange" in prompt and '"outside": true' in prompt and "graduated" in prompt
    assert "not a look layerpath knows" in server.requests[1]["messages"][-1]["content"]


def test_unknown_kind_is_rejected_by_validation(server: ScriptedServer, scene: Scene) -> None:
    server.script = [(200, json.dumps({"subtasks": [{"kind": "make_it_pop"}]}))] * 2
    plan = llm_planner_with_fallback(planner_for(server))(
        EditRequest("recolor the wall to yellow", scene.snapshot()), lambda e: None
    )
    assert plan.planner == "offline (LLM fallback)"
    assert [s.kind for s in plan.subtasks] == [SubtaskKind.OBJECT_RECOLORATION]
    assert "LLM planner failed" in plan.warnings[0]
    assert len(server.requests) == 2  # one answer, one repair, then no more asking


def test_server_errors_fall_back_to_offline_with_a_visible_warning(
    server: ScriptedServer, scene: Scene
) -> None:
    server.script = [(500, "model overloaded")]
    plan = llm_planner_with_fallback(planner_for(server))(
        EditRequest("remove the ball", scene.snapshot()), lambda e: None
    )
    assert [s.kind for s in plan.subtasks] == [SubtaskKind.OBJECT_REMOVAL]
    assert "planned offline" in plan.warnings[0]


def test_unreachable_endpoint_falls_back(scene: Scene) -> None:
    dead = LlmPlanner(LlmSettings(base_url="http://127.0.0.1:9/v1", model="m", timeout_s=2), None)
    plan = llm_planner_with_fallback(dead)(
        EditRequest("remove the ball", scene.snapshot()), lambda e: None
    )
    assert plan.planner == "offline (LLM fallback)" and plan.subtasks[0].target == "ball"


def test_llm_plan_is_put_in_dependency_order(server: ScriptedServer, scene: Scene) -> None:
    server.script = [
        (
            200,
            json.dumps(
                {
                    "subtasks": [
                        {"kind": "text_detection", "target": "text"},
                        {"kind": "text_replacement", "target": "text", "to": "OPEN"},
                    ]
                }
            ),
        )
    ]
    plan = planner_for(server).plan(EditRequest("x", scene.snapshot()))
    assert [s.kind for s in plan.subtasks] == [
        SubtaskKind.TEXT_REPLACEMENT,
        SubtaskKind.TEXT_DETECTION,
    ]


@pytest.mark.parametrize(
    "body", [b"<html><body>502 Bad Gateway</body></html>", bytes(range(256)) * 4]
)
def test_an_answer_that_is_not_json_falls_back_with_a_warning(
    server: ScriptedServer, scene: Scene, body: bytes
) -> None:
    server.script = [(200, body)]
    plan = llm_planner_with_fallback(planner_for(server))(
        EditRequest("remove the ball", scene.snapshot()), lambda e: None
    )
    assert plan.planner == "offline (LLM fallback)" and plan.subtasks[0].target == "ball"
    assert "planned offline" in plan.warnings[0]


def test_a_server_trickling_its_answer_is_given_up_at_the_deadline(
    server: ScriptedServer, scene: Scene
) -> None:
    """timeout_s is the whole answer's deadline, not each read's: a byte every half
    second would otherwise hold the run as long as the server likes."""
    server.script = [(200, Trickle(seconds=30))]
    slow = LlmPlanner(LlmSettings(base_url=server.url, model="test-model", timeout_s=2), None)
    started = time.monotonic()
    plan = llm_planner_with_fallback(slow)(
        EditRequest("remove the ball", scene.snapshot()), lambda e: None
    )
    assert time.monotonic() - started < 8
    assert plan.planner == "offline (LLM fallback)" and "no answer within 2 s" in plan.warnings[0]


def test_a_key_the_server_echoes_reaches_no_message_report_or_log(
    server: ScriptedServer,
    scene: Scene,
    tmp_path: Path,
    file_keyring: object,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = "sk-very-secret-4242"
    set_api_key(server.url, key)
    save_settings(Settings(planner="llm", llm=LlmSettings(base_url=server.url, timeout_s=5)))
    server.script = [(401, f"Incorrect API key provided: {key}. Find your key at ...")]
    image, masks = scene.save(tmp_path / "in")
    report = tmp_path / "run.json"
    code = main(
        ["-v", "edit", str(image), "remove the ball", f"--mask=ball={masks['ball']}",
         "-o", str(tmp_path / "out.ora"), "--report", str(report)]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert server.headers[0]["authorization"] == f"Bearer {key}"  # it was sent, to the server
    assert "Incorrect API key provided: [API key]" in captured.err
    assert key not in captured.err + captured.out and key not in report.read_text()


def test_an_adjustment_from_the_llm_is_checked_before_anything_runs(
    server: ScriptedServer, scene: Scene
) -> None:
    """The prompt lists the adjustment ops and their ranges; an answer with an op that
    does not exist or an amount out of range goes back for repair, with the reason."""
    bad = {
        "subtasks": [
            {
                "kind": "region_adjustment",
                "target": "sky",
                "params": {"op": "posterize", "amount": 0.5},
            }
        ]
    }
    good = {
        "subtasks": [
            {
                "kind": "region_adjustment",
                "target": "sky",
                "params": {"op": "exposure", "amount": -0.5},
            }
        ]
    }
    server.script = [(200, json.dumps(bad)), (200, json.dumps(good))]
    plan = planner_for(server).plan(EditRequest("darken the sky", scene.snapshot()))
    (darken,) = plan.subtasks
    assert (darken.kind, darken.target, dict(darken.params)) == (
        SubtaskKind.REGION_ADJUSTMENT,
        "sky",
        {"op": "exposure", "amount": -0.5},
    )
    system = server.requests[0]["messages"][0]["content"]
    assert "exposure (-3..3 stops)" in system and "region_adjustment" in system
    assert "'posterize' is not an adjustment" in server.requests[1]["messages"][-1]["content"]
    server.script = [
        (
            200,
            json.dumps(
                {
                    "subtasks": [
                        {"kind": "photo_adjustment", "params": {"op": "exposure", "amount": 9}}
                    ]
                }
            ),
        )
    ] * 2
    fallback = llm_planner_with_fallback(planner_for(server))(
        EditRequest("brighten the photo", scene.snapshot()), lambda e: None
    )
    assert fallback.planner == "offline (LLM fallback)"
    assert dict(fallback.subtasks[0].params) == {"op": "exposure", "amount": 0.5}
