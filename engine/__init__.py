"""The engine: planning, search, execution and traces; host-agnostic and Qt-free.

from layerpath.engine import run
result = run(EditRequest(prompt, Snapshot(rgba, masks)), on_event=print)
"""

from __future__ import annotations

from collections.abc import Callable

from layerpath.engine.types import EditRequest, Mode, RunResult, Snapshot, StepLayer, Subtask


def run(
    request: EditRequest,
    on_event: Callable[[object], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> RunResult:
    """Run one instruction with the built-in tools and rules, recording traces in the
    platform data folder when the settings allow it. Events (engine.events) report
    progress; `cancel()` returning True stops the run between tool calls."""
    from layerpath.engine.executor import Engine
    from layerpath.engine.traces import TraceStore
    from layerpath.settings import data_dir, load_settings
    from layerpath.tools.registry import Registry

    traces = TraceStore(data_dir() / "traces.sqlite") if load_settings().record_traces else None
    return Engine(Registry.from_catalogue(), traces=traces).run(request, on_event, cancel)


__all__ = ["EditRequest", "Mode", "RunResult", "Snapshot", "StepLayer", "Subtask", "run"]
