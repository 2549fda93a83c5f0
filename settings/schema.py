"""The settings record, versioned so later releases can migrate old files."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class LlmSettings(BaseModel):
    """An OpenAI-compatible endpoint; the key lives in the OS keyring, never here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # OpenAI's own API and one of its models; a local server is a preset away
    # (settings/endpoints.py: Ollama, LM Studio, llama.cpp, vLLM); model "auto": the
    # first model the server lists
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    timeout_s: float = Field(default=60.0, ge=1.0, le=86400.0)
    # whether the planner shows the model a small copy of the picture: auto = when the
    # model takes one (found once per endpoint and model, then remembered)
    vision: Literal["auto", "yes", "no"] = "auto"
    # chosen for this run on the command line (--endpoint, --model): the environment's
    # OPENAI_BASE_URL does not move it (never saved)
    pinned: bool = Field(default=False, exclude=True)
    # the model the endpoint's audio API transcribes a voice memo with
    transcription_model: str = "whisper-1"


class CloudSettings(BaseModel):
    """Optional cloud image edits through an OpenAI-compatible images API. Off unless
    turned on: only then does a photo (a window of it) leave the machine. The key lives
    in the OS keyring, never here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-image-1"
    timeout_s: float = Field(default=180.0, ge=1.0, le=86400.0)


class Settings(BaseModel):
    """Everything a user can configure; loaded from and saved to settings.json."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    planner: Literal["offline", "llm"] = "offline"
    llm: LlmSettings = LlmSettings()
    cloud: CloudSettings = CloudSettings()
    quality_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    retries: int = Field(default=2, ge=0, le=5)
    # a retry's parameters answer what the experts found wrong with the try before
    # (reflection); off: each tool's fixed retry schedule
    reflection: bool = True
    # the rules a run may use: every enabled one (shipped, learnt from your runs, your
    # actions), or the shipped ones alone (a run as anyone else's would be)
    rules: Literal["all", "shipped"] = "all"
    # the plan is shown (each step, its tools, about how long) and runs when confirmed
    preview_plan: bool = True
    device: Literal["auto", "cuda", "mps", "cpu"] = "auto"
    model_dir: str | None = None  # None: <data dir>/models
    offline: bool = False  # never download models
    resident_models: int = Field(default=1, ge=1, le=8)  # loaded models kept at once
    model_memory_gb: float | None = Field(default=None, gt=0, le=4096.0)  # their weights' budget
    cpu_offload: bool = False  # big pipelines' parts wait in CPU memory (small GPUs)
    # a model critic beside the checkers: auto = CLIP when downloaded, else none; vlm =
    # the LLM endpoint's vision model (two pictures per step)
    critic: Literal["auto", "clip", "vlm", "none"] = "auto"
    record_traces: bool = True
    # learn new rules from the traces after every this many runs, in the background
    # (`layerpath learn`); 0: only when asked
    learn_every: int = Field(default=20, ge=0, le=1_000_000)
    # the largest picture opened (a file claiming more is refused from its header)
    max_megapixels: float = Field(default=200.0, gt=0, le=10_000.0)
    # how long one tool call may take before it is given up and the next tried (a tool
    # with a model gets four times as long)
    tool_timeout_s: float = Field(default=300.0, ge=1.0, le=86400.0)
