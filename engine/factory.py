"""One place that builds an Engine from the settings: the planner they choose and the
critic they allow. The CLI, the editor and the Krita docker all use it."""

from __future__ import annotations

from layerpath.engine.critics import critic_for
from layerpath.engine.executor import Engine
from layerpath.engine.llm_planner import planner_for
from layerpath.engine.traces import TraceStore
from layerpath.settings import Settings
from layerpath.tools.device import configure_residency
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry


def engine_for(
    settings: Settings,
    traces: TraceStore | None = None,
    planner: str | None = None,
) -> tuple[Engine, str]:
    """The engine for these settings, and the name of its planner. The tools are bound to
    the settings' model folder, so a folder changed in Settings applies from the next run
    (building the registry takes under a millisecond)."""
    models = ModelManager.from_settings(settings)
    configure_residency(
        settings.resident_models, settings.model_memory_gb, settings.device, settings.cpu_offload
    )
    chosen, name = planner_for(settings, planner)
    engine = Engine(
        Registry.from_catalogue(models=models),
        traces=traces,
        planner=chosen,
        critic=critic_for(settings, models),
        tool_timeout_s=settings.tool_timeout_s,
    )
    return engine, name
