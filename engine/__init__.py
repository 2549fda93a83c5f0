"""The engine: planning, search, execution and traces; host-agnostic and Qt-free.

from layerpath.engine import run
result = run(EditRequest(prompt, Snapshot(rgba, masks)), on_event=print)
"""

from __future__ import annotations

from collections.abc import Callable

from layerpath.engine.events import OnEvent
from layerpath.engine.types import EditRequest, Mode, RunResult, Snapshot, StepLayer, Subtask


def run(
    request: EditRequest,
    on_event: OnEvent | None = None,
    cancel: Callable[[], bool] | None = None,
) -> RunResult:
    """Run one instruction with the engine the settings describe (planner, critic, model
    folder, rules), recording traces in the platform data folder when they allow it.
    Events (engine.events) report progress; `cancel()` returning True stops the run
    between tool calls."""
    from layerpath.engine.factory import engine_for
    from layerpath.engine.learn.traces import user_traces
    from layerpath.settings import load_settings

    settings = load_settings()
    engine, _ = engine_for(settings, user_traces(settings))
    return engine.run(request, on_event, cancel)


__all__ = ["EditRequest", "Mode", "RunResult", "Snapshot", "StepLayer", "Subtask", "run"]
