"""One place that builds an Engine from the settings: the planner they choose and the
critic they allow. The CLI, the editor and the Krita docker all use it."""

from __future__ import annotations

import logging

from layerpath.engine.execute.executor import Engine
from layerpath.engine.execute.subroutines import RuleTable
from layerpath.engine.judge.critics import critic_for
from layerpath.engine.learn.rulebook import RuleBook
from layerpath.engine.learn.traces import TraceStore
from layerpath.engine.plan.llm_planner import planner_for
from layerpath.engine.plan.references import Transcriber
from layerpath.errors import BadInput, shown
from layerpath.settings import Settings
from layerpath.settings.endpoints import chosen as chosen_endpoint
from layerpath.settings.secrets import get_api_key, redact
from layerpath.tools.device import configure_residency
from layerpath.tools.endpoint import openai_client
from layerpath.tools.endpoint import transcribe as transcription
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)


def engine_for(
    settings: Settings,
    traces: TraceStore | None = None,
    planner: str | None = None,
) -> tuple[Engine, str]:
    """The engine for these settings, and the name of its planner. The tools are bound to
    the settings' model folder, so a folder changed in Settings applies from the next run
    (building the registry takes under a millisecond)."""
    # the LLM endpoint: OPENAI_BASE_URL where set (the planner, the critic, the memos)
    settings = settings.model_copy(update={"llm": chosen_endpoint(settings.llm)})
    models = ModelManager.from_settings(settings)
    configure_residency(
        settings.resident_models, settings.model_memory_gb, settings.device, settings.cpu_offload
    )
    chosen, name = planner_for(settings, planner)
    registry = Registry.from_catalogue(models=models)
    if settings.rules == "shipped":  # reproducible: no rule learnt here, no disabling
        rules = RuleTable.load(registry)
    else:
        try:
            rules = RuleBook(registry).table()  # shipped, mined and the user's actions
        except BadInput as exc:  # a damaged rules or actions file stops no edit
            log.warning("%s The shipped rules are used meanwhile.", exc)
            rules = RuleTable.load(registry)
    engine = Engine(
        registry,
        rules=rules,
        traces=traces,
        planner=chosen,
        critic=critic_for(settings, models),
        tool_timeout_s=settings.tool_timeout_s,
        transcriber=transcriber_for(settings),
    )
    return engine, name


def transcriber_for(settings: Settings) -> Transcriber:
    """A voice memo's words through the settings' endpoint (its audio API), asked only
    when an instruction uses a memo; the key from the OS keyring, never in a message."""

    def transcribe(sound: bytes, filename: str) -> str:
        llm = chosen_endpoint(settings.llm)
        client = openai_client(llm.base_url, get_api_key(llm.base_url), llm.timeout_s)
        try:
            return transcription(client, llm.transcription_model, sound, filename, llm.timeout_s)
        except Exception as exc:
            raise BadInput(
                f"The endpoint at {llm.base_url} could not transcribe the voice memo "
                f"({redact(shown(str(exc), 160))}); check it in Settings, or give the words "
                "as a text file."
            ) from exc

    return transcribe
