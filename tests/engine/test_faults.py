"""Faults never lose finished work: a tool that answers nonsense or tries to end the
process fails only its own attempt, and a trace database that cannot be used is said
once while the run goes on. The real engine and offline tools on the generated scene;
the faulty tools are real Tool subclasses registered beside the catalogue's."""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from layerpath.engine.execute.executor import Engine
from layerpath.engine.learn.traces import TraceStore
from layerpath.engine.types import EditRequest, Mode, SubtaskKind
from layerpath.kit.types import ArtifactKind, Prior, ToolContext, ToolResult
from layerpath.tools.base import Tool
from layerpath.tools.registry import Registry
from tests.conftest import Scene


class Faulty(Tool):
    """A removal tool that answers what its `answer` parameter says."""

    stopped = 0  # hung calls that noticed they were given up

    def run(
        self, ctx: ToolContext, inputs: Mapping[ArtifactKind, Any], params: Mapping[str, Any]
    ) -> ToolResult:
        image = inputs[ArtifactKind.IMAGE]
        answer = params["answer"]
        if answer == "none":
            return None  # type: ignore[return-value]
        if answer == "exit":
            raise SystemExit(3)
        if answer == "small":
            return ToolResult({ArtifactKind.IMAGE: image[:5, :5]})
        if answer == "hang":  # until told to stop (a tool that checks ctx.cancelled)
            try:
                while not ctx.cancelled():
                    time.sleep(0.02)
            finally:  # (told, whether it noticed or was interrupted first)
                Faulty.stopped += int(ctx.cancelled())
            return None  # type: ignore[return-value]
        if answer == "stuck":  # never looks up, and swallows what it can
            for _ in range(2000):
                try:
                    time.sleep(0.01)
                except Exception:
                    pass
        if answer == "grey":
            return ToolResult({ArtifactKind.IMAGE: image[..., 0].astype(np.float64)})
        return ToolResult({})  # "nothing": its image missing


def registry_with(answer: str) -> Registry:
    """The catalogue's tools and a faulty removal tool the search rates best of all."""
    catalogue = Registry.from_catalogue()
    model = catalogue.get("patch_fill").spec
    spec = dataclasses.replace(
        model,
        name="faulty_fill",
        impl="tests.engine.test_faults:Faulty",
        params={"answer": answer},
        retry_params=(),
        priors={SubtaskKind.OBJECT_REMOVAL: Prior(0.01, 0.99)},
    )
    return Registry([*catalogue, Faulty(spec)])


@pytest.mark.parametrize("answer", ["none", "exit", "small", "grey", "nothing"])
def test_a_tool_answering_nonsense_fails_its_attempt_and_the_search_goes_on(
    answer: str, scene: Scene
) -> None:
    engine = Engine(registry_with(answer))
    result = engine.run(EditRequest("remove the ball", scene.snapshot(), mode=Mode.SLOW))
    (outcome,) = result.outcomes
    faulty = [c for c in result.calls if c.tool == "faulty_fill"]
    assert faulty and all(not c.passed and c.error for c in faulty)
    assert "faulty_fill" in (faulty[0].error or "")
    assert outcome.ok and outcome.tools[-1] != "faulty_fill", outcome.error


def test_a_tool_rerun_by_hand_that_answers_nothing_is_reported_failed(scene: Scene) -> None:
    engine = Engine(registry_with("none"))
    outcome = engine.rerun(
        EditRequest("remove the ball", scene.snapshot()),
        engine.run(EditRequest("remove the ball", scene.snapshot())).outcomes[0].subtask,
        ("named_masks", "faulty_fill"),
    )
    assert not outcome.ok and "returned NoneType" in (outcome.error or ""), outcome.error


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 100)


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE attempts (who TEXT, what BLOB)")


def _directory(path: Path) -> None:
    path.mkdir()


@pytest.mark.parametrize("spoil", [_garbage, _foreign, _directory])
def test_a_trace_database_that_cannot_be_used_is_said_once_and_the_run_goes_on(
    spoil: Any, scene: Scene, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "traces.sqlite"
    spoil(path)
    before = path.read_bytes() if path.is_file() else None
    with caplog.at_level(logging.WARNING):
        store = TraceStore(path)
        result = Engine(Registry.from_catalogue(), traces=store).run(
            EditRequest("remove the ball and recolor the wall to yellow", scene.snapshot())
        )
    assert result.ok and not store.usable
    warnings = [r for r in caplog.records if "trace database" in r.getMessage()]
    assert len(warnings) == 1 and "without recording" in warnings[0].getMessage()
    if before is not None and spoil is _garbage:
        assert path.read_bytes() == before, "a file that is not ours is left as it was"


def test_a_trace_database_lost_during_the_run_stops_recording_quietly(
    scene: Scene, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "traces.sqlite"
    store = TraceStore(path)
    assert store.usable
    with sqlite3.connect(path) as db:  # another program drops a table under the store
        db.execute("DROP TABLE attempts")
    with caplog.at_level(logging.WARNING):
        result = Engine(Registry.from_catalogue(), traces=store).run(
            EditRequest("remove the ball and recolor the wall to yellow", scene.snapshot())
        )
    assert result.ok and not store.usable
    assert sum("trace database" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize("answer", ["hang", "stuck"])
def test_a_tool_that_hangs_is_given_up_at_its_timeout_and_the_search_goes_on(
    answer: str, scene: Scene
) -> None:
    """A tool past tool_timeout_s fails its attempt, says so, and the next tool runs;
    one that checks ctx.cancelled is told to stop, one that never looks is interrupted
    (at its next line of Python, even under an `except Exception`)."""
    Faulty.stopped = 0
    engine = Engine(registry_with(answer), tool_timeout_s=1.0)
    started = time.monotonic()
    result = engine.run(EditRequest("remove the ball", scene.snapshot(), mode=Mode.SLOW))
    assert time.monotonic() - started < 15
    (outcome,) = result.outcomes
    hung = [c for c in result.calls if c.tool == "faulty_fill"]
    assert hung and "took longer than 1 s" in (hung[0].error or "")
    assert outcome.ok and outcome.tools[-1] != "faulty_fill"
    if answer == "hang":
        time.sleep(0.2)
        assert Faulty.stopped == 1


@pytest.mark.parametrize("answer", ["hang", "stuck"])
def test_stopping_gives_up_a_hung_tool_within_two_seconds(answer: str, scene: Scene) -> None:
    """Asked to stop (Ctrl-C, the panel's Cancel) while a tool hangs with a minute left
    on its clock: the step is given up within two seconds, whether the tool looks at
    ctx.cancelled or never does, and the run ends cancelled."""
    from layerpath.engine import events

    engine = Engine(registry_with(answer), tool_timeout_s=60.0)
    asked: list[float] = []

    def on_event(event: object) -> None:
        if isinstance(event, events.ToolStarted) and event.tool == "faulty_fill" and not asked:
            asked.append(time.monotonic())

    result = engine.run(
        EditRequest("remove the ball", scene.snapshot(), mode=Mode.SLOW),
        on_event,
        cancel=lambda: bool(asked),
    )
    assert asked and time.monotonic() - asked[0] < 2.0
    assert result.cancelled


def test_a_contained_crash_is_one_line_not_a_traceback(
    scene: Scene, caplog: pytest.LogCaptureFixture
) -> None:
    """A tool that crashes fails its attempt with its reason in the run; what is logged
    at the level a user sees (warning and above) carries no traceback (it is logged at
    info, for -v)."""
    engine = Engine(registry_with("exit"))  # (it raises SystemExit: a crash, contained)
    with caplog.at_level(logging.WARNING):
        result = engine.run(EditRequest("remove the ball", scene.snapshot(), mode=Mode.SLOW))
    assert any(c.tool == "faulty_fill" and "crashed" in (c.error or "") for c in result.calls)
    assert not [r for r in caplog.records if r.exc_info], caplog.text
