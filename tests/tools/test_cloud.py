"""Cloud image edits through the real `openai` client against an OpenAI-compatible server
this test runs on 127.0.0.1 (images.edit, multipart): what is sent (a square window, a
mask transparent where to paint, the instruction's words, the key from the keyring), what
comes back (only the grown mask changes), and when the tool is not offered."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from keyrings.alt.file import PlaintextKeyring
from PIL import Image

from layerpath.engine.execute.executor import Engine
from layerpath.engine.judge.critics import VlmCritic
from layerpath.engine.types import EditRequest
from layerpath.errors import ToolFailed
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.settings import CloudSettings, LlmSettings, Settings, save_settings
from layerpath.settings.secrets import set_api_key
from layerpath.settings.store import settings_path
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.openai_server import ScriptedServer

A = ArtifactKind
K = SubtaskKind
BLUE = (20, 40, 230)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    running = ScriptedServer()

    def paint_blue(fields: dict[str, Any]) -> bytes:  # blue where the mask is transparent
        window = np.asarray(Image.open(io.BytesIO(fields["image"])).convert("RGB")).copy()
        stencil = np.asarray(Image.open(io.BytesIO(fields["mask"])).convert("RGBA"))
        window[stencil[..., 3] == 0] = BLUE
        out = io.BytesIO()
        Image.fromarray(window).save(out, format="PNG")
        return out.getvalue()

    running.painter = paint_blue
    yield running
    running.close()


def turn_on(base_url: str, enabled: bool = True) -> None:
    save_settings(Settings(cloud=CloudSettings(enabled=enabled, base_url=base_url, model="img-1")))


def test_only_the_grown_mask_changes_and_the_request_is_what_it_should_be(
    server: ScriptedServer, scene: Scene, file_keyring: PlaintextKeyring
) -> None:
    base_url = server.url  # on this machine no key is needed; one set is sent
    turn_on(base_url)
    set_api_key(base_url, "sk-cloud-42")
    tool = Registry.from_catalogue().get("cloud_inpaint")
    assert tool.availability().ok
    params = {**tool.spec.param_schedule()[0], "resolution": 256}
    ball = scene.masks["ball"]
    context = ToolContext(K.OBJECT_REPLACEMENT, target="ball", to="cube")
    out = tool.run(context, {A.IMAGE: scene.image, A.MASK: ball}, params).outputs[A.IMAGE]
    assert out.shape == scene.image.shape
    assert np.abs(out[ball][:, :3].astype(int) - BLUE).max() <= 2  # painted where asked
    reach = int(params["grow"]) + 2 * int(params["feather"]) + 2
    from layerpath.kit.imaging import dilate

    outside = ~dilate(ball, reach)
    assert np.array_equal(out[outside], scene.image[outside])
    (fields,) = server.requests
    assert fields["model"] == b"img-1" and fields["size"] == b"256x256"
    assert b"cube" in fields["prompt"]
    window = Image.open(io.BytesIO(fields["image"]))
    stencil = np.asarray(Image.open(io.BytesIO(fields["mask"])).convert("RGBA"))
    assert window.size == (256, 256) and stencil.shape == (256, 256, 4)
    assert 0 < (stencil[..., 3] == 0).mean() < 0.5  # transparent: the grown ball only
    assert server.headers[0]["authorization"] == "Bearer sk-cloud-42"
    assert "sk-cloud-42" not in settings_path().read_text()


def test_not_offered_until_turned_on_with_a_key(
    server: ScriptedServer, file_keyring: PlaintextKeyring
) -> None:
    tool = Registry.from_catalogue().get("cloud_inpaint")
    found = tool.availability()
    assert not found.ok and "off" in (found.reason or "") and "Settings" in (found.fix or "")
    turn_on("https://images.example.com/v1")
    found = tool.availability()
    assert not found.ok and "no API key" in (found.reason or "")
    set_api_key("https://images.example.com/v1", "sk-x")
    assert tool.availability().ok
    save_settings(Settings(offline=True, cloud=CloudSettings(enabled=True, base_url=server.url)))
    assert "offline" in (tool.availability().reason or "")
    turn_on(server.url)  # a server on this machine needs no key
    assert tool.availability().ok


def test_a_refused_key_and_a_failing_service_are_clear_errors(
    server: ScriptedServer, scene: Scene, file_keyring: PlaintextKeyring
) -> None:
    turn_on(server.url)
    tool = Registry.from_catalogue().get("cloud_inpaint")
    params = {**tool.spec.param_schedule()[0], "resolution": 256}
    inputs = {A.IMAGE: scene.image, A.MASK: scene.masks["ball"]}
    server.script = [(401, "bad key"), (500, "overloaded")]
    with pytest.raises(ToolFailed, match="refused the API key"):
        tool.run(ToolContext(K.OBJECT_REMOVAL, target="ball"), inputs, params)
    with pytest.raises(ToolFailed, match="cloud image edit failed"):
        tool.run(ToolContext(K.OBJECT_REMOVAL, target="ball"), inputs, params)


def test_replace_the_ball_runs_in_the_cloud_when_it_is_the_only_way(
    server: ScriptedServer, scene: Scene, file_keyring: PlaintextKeyring
) -> None:
    """Only the cloud can paint a cube; whether a cube shows, only a vision critic can
    say (here the same server's vision model): with it the subtask is done, without
    it the cloud's result is kept hidden and the subtask fails, saying so (issue 25)."""
    turn_on(server.url)
    snapshot = scene.snapshot()
    result = Engine(Registry.from_catalogue()).run(
        EditRequest("replace the ball with a cube", snapshot)
    )
    (outcome,) = result.outcomes
    assert not outcome.ok and "choose a critic in Settings" in (outcome.error or "")
    assert [c.tool for c in result.calls][:2] == ["named_masks", "cloud_inpaint"]
    assert not outcome.steps[0].visible  # the cloud's fill, to look at
    server.requests.clear()
    judged = '{"meaning": 9, "quality": 8, "aesthetics": 8, "problem": ""}'
    server.script = [(200, ""), (200, judged)]  # the image edit, then the critic's answer
    critic = VlmCritic(LlmSettings(base_url=server.url, model="vision-test"), None)
    result = Engine(Registry.from_catalogue(), critic=critic).run(
        EditRequest("replace the ball with a cube", snapshot)
    )
    assert result.ok, result.outcomes[0].error
    assert [c.tool for c in result.calls] == ["named_masks", "cloud_inpaint"]
    assert np.array_equal(snapshot.image, scene.image)  # the user's pixels untouched
    fields = server.requests[0]
    assert b"cube" in fields["prompt"] and b"CLOSED" not in fields["prompt"]
