"""The LLM planner against servers that behave as the local ones photographers run do
(LM Studio, llama.cpp's server, Ollama, vLLM): the real `openai` client against an
OpenAI-compatible server this test runs on 127.0.0.1, scripted to refuse what each of
those refuses, with the same status and words. And where the endpoint and its key come
from: presets, --endpoint/--model, OPENAI_BASE_URL/OPENAI_API_KEY, `layerpath config`."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from layerpath.engine.plan.llm_planner import LlmPlanner, llm_planner_with_fallback
from layerpath.engine.types import EditRequest, SubtaskKind
from layerpath.plugin.cli import main
from layerpath.settings import LlmSettings, Settings, load_settings, save_settings
from layerpath.settings.endpoints import PRESETS, chosen, endpoint_url, recalled
from tests.conftest import Scene
from tests.openai_server import ScriptedServer

PLAN = json.dumps({"subtasks": [{"kind": "object_removal", "target": "ball"}]})
#: LM Studio's answer to response_format json_object (its words, status 400)
LM_STUDIO_400 = "'response_format.type' must be 'json_schema' or 'text'"
#: llama.cpp's server without a vision projector, sent a picture (status 500)
LLAMA_CPP_NO_IMAGES = (
    "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
)


def _format(body: dict[str, Any]) -> str:
    return str((body.get("response_format") or {}).get("type", "text"))


def _has_picture(body: dict[str, Any]) -> bool:
    return any(
        isinstance(m["content"], list) and any(p["type"] == "image_url" for p in m["content"])
        for m in body["messages"]
    )


def _planner(server: ScriptedServer, **settings: Any) -> LlmPlanner:
    llm = LlmSettings(base_url=server.url, model=settings.pop("model", "test-model"), timeout_s=5)
    return LlmPlanner(llm.model_copy(update=settings), None)


def _plan(planner: LlmPlanner, scene: Scene) -> Any:
    return llm_planner_with_fallback(planner)(
        EditRequest("remove the ball", scene.snapshot()), lambda e: None
    )


def test_lm_studio_refusing_json_object_plans_with_the_schema(
    server: ScriptedServer, scene: Scene
) -> None:
    """LM Studio answers 400 to a JSON-object answer: the plan's JSON schema is asked
    for, which it takes; the plan is the model's, with no fallback."""
    server.refuses = lambda body: (400, LM_STUDIO_400) if _format(body) == "json_object" else None
    server.script = [(200, PLAN)]
    plan = _plan(_planner(server), scene)
    assert plan.planner == "llm" and not plan.warnings
    assert [_format(b) for b in server.requests] == ["json_schema"]


@pytest.mark.parametrize(
    "refused,used",
    [({"json_schema"}, "json_object"), ({"json_schema", "json_object"}, "text")],
)
def test_a_server_refusing_a_format_is_asked_the_next_way_and_it_is_remembered(
    server: ScriptedServer, scene: Scene, refused: set[str], used: str
) -> None:
    """An older server refuses the schema (or any JSON format): the next way is asked,
    the plan is still the model's, and the next run asks that way first."""
    server.refuses = lambda body: (
        (400, f"Unknown response_format type: {_format(body)}")
        if _format(body) in refused
        else None
    )
    server.script = [(200, PLAN), (200, PLAN)]
    assert _plan(_planner(server), scene).planner == "llm"
    tried = [_format(b) for b in server.requests]
    assert tried[-1] == used and tried[:-1] == [
        f for f in ("json_schema", "json_object") if f in refused
    ]
    assert recalled(server.url, "test-model")["format"] == used
    server.requests.clear()
    assert _plan(_planner(server), scene).planner == "llm"  # another run: asked once
    assert [_format(b) for b in server.requests] == [used]


def test_a_text_only_model_is_asked_without_the_picture_and_it_is_remembered(
    server: ScriptedServer, scene: Scene
) -> None:
    """llama.cpp's server with no vision projector refuses a picture: the same question
    goes again as words alone (plain text content), and later runs send no picture."""
    server.refuses = lambda body: (500, LLAMA_CPP_NO_IMAGES) if _has_picture(body) else None
    server.script = [(200, PLAN), (200, PLAN)]
    assert _plan(_planner(server), scene).planner == "llm"
    first, second = server.requests
    assert _has_picture(first) and not _has_picture(second)
    assert all(isinstance(m["content"], str) for m in second["messages"])
    assert "remove the ball" in second["messages"][1]["content"]
    assert recalled(server.url, "test-model")["images"] is False
    server.requests.clear()
    assert _plan(_planner(server), scene).planner == "llm"
    assert len(server.requests) == 1 and not _has_picture(server.requests[0])


def test_a_model_that_takes_pictures_is_shown_one_and_vision_no_shows_none(
    server: ScriptedServer, scene: Scene
) -> None:
    server.script = [(200, PLAN), (200, PLAN)]
    assert _plan(_planner(server), scene).planner == "llm"
    assert _has_picture(server.requests[0])
    assert recalled(server.url, "test-model") == {"format": "json_schema", "images": True}
    assert _plan(_planner(server, vision="no"), scene).planner == "llm"
    assert not _has_picture(server.requests[1])


def test_model_auto_asks_the_server_which_model_it_serves(
    server: ScriptedServer, scene: Scene
) -> None:
    """LM Studio, llama.cpp and vLLM serve what was loaded: 'auto' takes the first
    model the server lists."""
    server.models = ["qwen2.5-7b-instruct", "other"]
    server.script = [(200, PLAN)]
    assert _plan(_planner(server, model="auto"), scene).planner == "llm"
    chat = [b for b in server.requests if "GET" not in b]
    assert chat[0]["model"] == "qwen2.5-7b-instruct"


def test_presets_name_the_servers_where_they_listen() -> None:
    assert endpoint_url("LM Studio") == ("http://127.0.0.1:1234/v1", "auto")
    assert endpoint_url("ollama")[0] == "http://127.0.0.1:11434/v1"
    assert endpoint_url("llama.cpp")[0] == "http://127.0.0.1:8080/v1"
    assert endpoint_url("vllm")[0] == "http://127.0.0.1:8000/v1"
    assert endpoint_url("http://box:9000/v1/") == ("http://box:9000/v1", "auto")
    assert {p.key for p in PRESETS.values()} == {True, False}
    # the default is one server's own model: OpenAI's API with an OpenAI model
    assert LlmSettings().base_url == PRESETS["openai"].base_url
    assert LlmSettings().model == PRESETS["openai"].model


def test_openai_base_url_and_key_from_the_environment(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """OPENAI_BASE_URL moves the planner to that server and OPENAI_API_KEY goes with it;
    --endpoint on the command line wins over the environment."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-7777")
    server.script = [(200, PLAN)]
    assert main(["plan", "remove the ball", "--planner", "llm", "--json"]) == 0
    assert server.headers[0]["authorization"] == "Bearer sk-env-7777"
    captured = capsys.readouterr()
    assert json.loads(captured.out)[0]["target"] == "ball"
    assert "planned offline" not in captured.err
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # (nothing listens)
    server.script = [(200, PLAN)]
    assert main(["plan", "remove the ball", "--endpoint", server.url, "--model", "m2"]) == 0
    assert server.requests[-1]["model"] == "m2"


def test_an_openai_key_in_the_environment_goes_to_no_other_server(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-7777")
    save_settings(Settings(planner="llm", llm=LlmSettings(base_url=server.url, model="m")))
    server.script = [(200, PLAN)]
    assert main(["plan", "remove the ball"]) == 0
    assert "sk-env-7777" not in server.headers[0]["authorization"]
    assert chosen(LlmSettings()).base_url == "https://api.openai.com/v1"


def test_config_stores_the_key_in_the_keyring_and_sets_the_endpoint(
    server: ScriptedServer,
    file_keyring: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["config", "endpoint", server.url, "--model", "local-model"]) == 0
    assert load_settings().planner == "llm" and load_settings().llm.model == "local-model"
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-kept-31337\n"))
    assert main(["config", "set-key", "--stdin"]) == 0
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "stored in the OS keyring" in out and "sk-kept-31337" not in out
    assert "sk-kept-31337" not in (load_settings().model_dump_json())
    server.script = [(200, PLAN)]
    assert main(["plan", "remove the ball"]) == 0
    assert server.headers[0]["authorization"] == "Bearer sk-kept-31337"
    assert server.requests[0]["model"] == "local-model"
    assert main(["config", "delete-key"]) == 0
    assert main(["config", "show"]) == 0
    assert "API key: none stored" in capsys.readouterr().out
    assert main(["config", "endpoint", "lmstudio"]) == 0
    assert load_settings().llm.base_url == "http://127.0.0.1:1234/v1"
    assert load_settings().llm.model == "auto"


def test_an_unknown_endpoint_is_a_clear_error_before_anything_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plan", "remove the ball", "--endpoint", "lmstduio"]) == 2
    err = capsys.readouterr().err
    assert "openai, ollama, lmstudio, llamacpp, vllm" in err
    assert main(["plan", "x", "--endpoint", "ollama", "--planner", "offline"]) == 2
    assert SubtaskKind.OBJECT_REMOVAL  # (the kinds module loads with the planner)


def test_a_server_chosen_in_the_settings_wins_over_openai_base_url(
    server: ScriptedServer,
    file_keyring: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """OPENAI_BASE_URL is for a user who chose no server: one saved with `config
    endpoint` stays (a proxy set for another tool does not get the photo); `config
    show` and `config set-key` name the same server."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # (nothing listens)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["config", "endpoint", server.url, "--model", "m1"]) == 0
    server.script = [(200, PLAN)]
    assert main(["plan", "remove the ball"]) == 0
    assert len(server.requests) == 1 and server.requests[0]["model"] == "m1"
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-local-1\n"))
    assert main(["config", "set-key", "--stdin"]) == 0
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert f"LLM server: {server.url}\n" in out and "stored in the OS keyring" in out


def test_a_url_without_a_model_asks_the_server_which_it_serves(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.models = ["local-7b"]
    server.script = [(200, PLAN)]
    assert main(["plan", "remove the ball", "--endpoint", server.url]) == 0
    chat = [b for b in server.requests if "GET" not in b]
    assert chat[0]["model"] == "local-7b" and "planned offline" not in capsys.readouterr().err


def test_a_server_s_bad_moment_is_not_remembered_and_what_is_expires(
    server: ScriptedServer, scene: Scene, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 500 that mentions a picture ('failed to process image: out of memory') is asked
    again with words for this run only; a 400 refusing pictures is remembered, for a day
    (a llama.cpp restarted with --mmproj is asked again), and `config forget` clears it."""
    from layerpath.settings.endpoints import _memory_path

    busy = {"count": 0}

    def once(body: dict[str, Any]) -> tuple[int, str] | None:
        if _has_picture(body) and busy["count"] == 0:
            busy["count"] += 1
            return 500, "failed to process image: CUDA out of memory"
        return None

    server.refuses = once
    server.script = [(200, PLAN)] * 3
    assert _plan(_planner(server), scene).planner == "llm"
    assert "images" not in recalled(server.url, "test-model")
    server.refuses = lambda body: (
        (400, "this model does not support images") if _has_picture(body) else None
    )
    assert _plan(_planner(server), scene).planner == "llm"
    assert recalled(server.url, "test-model")["images"] is False
    memory = json.loads(_memory_path().read_text(encoding="utf-8"))
    for facts in memory.values():
        facts["at"] -= 2 * 24 * 3600  # two days ago
    _memory_path().write_text(json.dumps(memory), encoding="utf-8")
    assert recalled(server.url, "test-model") == {}
    assert main(["config", "forget"]) == 0 and not _memory_path().exists()
