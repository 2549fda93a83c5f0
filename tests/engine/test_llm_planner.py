"""The LLM planner through the real `openai` client against an OpenAI-compatible
server this test runs on 127.0.0.1 with scripted answers."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from layerpath.engine.llm_planner import LlmPlanner, llm_planner_with_fallback
from layerpath.engine.types import EditRequest, SubtaskKind
from layerpath.settings import LlmSettings
from tests.conftest import Scene
from tests.openai_server import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer()
    yield s
    s.close()


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
    assert sent["model"] == "test-model" and sent["response_format"] == {"type": "json_object"}
    parts = sent["messages"][1]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert server.headers[0]["authorization"] == "Bearer sk-test-123"


def test_garbage_then_valid_answer_is_repaired_once(server: ScriptedServer, scene: Scene) -> None:
    server.script = [(200, "Sure! Here is your plan: remove ball"), (200, GOOD)]
    plan = planner_for(server).plan(EditRequest("x", scene.snapshot()))
    assert len(plan.subtasks) == 2
    repair = server.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "not valid" in repair[-1]["content"]


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
