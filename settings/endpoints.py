"""Where an LLM answers: presets for the servers people run (OpenAI, Ollama, LM Studio,
llama.cpp's server, vLLM), the OPENAI_BASE_URL / OPENAI_API_KEY environment the openai
tools share, and what each endpoint was found to take (a JSON schema for its answer, a
picture beside the words), remembered in the data folder so it is asked once.

Which endpoint a run uses: `--endpoint NAME|URL` (with `--model`), else the server the
settings name when one was chosen there, else OPENAI_BASE_URL, else OpenAI's API. Which
key: the one stored for that endpoint in the OS keyring, else OPENAI_API_KEY, but only
for OpenAI's own API (https) or the endpoint OPENAI_BASE_URL names (a key for OpenAI is
never sent to another server).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from layerpath.errors import BadInput
from layerpath.settings.paths import data_dir
from layerpath.settings.schema import LlmSettings

#: a model name that asks the server which it has (the first it lists)
AUTO_MODEL = "auto"
OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Preset:
    """A server people run, where it listens by default and a model it serves."""

    label: str
    base_url: str
    model: str
    key: bool  # whether it needs an API key
    hint: str  # how to get it going, in a line


PRESETS: dict[str, Preset] = {
    "openai": Preset("OpenAI", OPENAI_URL, "gpt-4o-mini", True, "needs an API key: layerpath config set-key"),
    "ollama": Preset("Ollama", "http://127.0.0.1:11434/v1", "llama3.2-vision", False, "ollama pull llama3.2-vision (any model you pulled: --model NAME)"),
    "lmstudio": Preset("LM Studio", "http://127.0.0.1:1234/v1", AUTO_MODEL, False, "start the server in LM Studio's Developer tab with a model loaded"),
    "llamacpp": Preset("llama.cpp server", "http://127.0.0.1:8080/v1", AUTO_MODEL, False, "llama-server -m MODEL.gguf (add --mmproj to let it see the picture)"),
    "vllm": Preset("vLLM", "http://127.0.0.1:8000/v1", AUTO_MODEL, False, "vllm serve MODEL"),
}  # fmt: skip


def preset_names() -> str:
    return ", ".join(PRESETS)


def preset_named(endpoint: str) -> Preset | None:
    """The preset a name means ('LM Studio', 'lmstudio', 'llama.cpp'), else None."""
    name = endpoint.strip().lower().replace(" ", "").replace("-", "").replace(".", "")
    return PRESETS.get(name)


def endpoint_url(endpoint: str) -> tuple[str, str]:
    """A preset's name or a URL -> (base URL, the model to ask there: the preset's, or
    'auto' for a URL, the first model the server lists); a clear error for neither."""
    preset = preset_named(endpoint)
    if preset is not None:
        return preset.base_url, preset.model
    parts = urlsplit(endpoint.strip())
    if parts.scheme in ("http", "https") and parts.netloc:
        return endpoint.strip().rstrip("/"), AUTO_MODEL
    raise BadInput(
        f"'{endpoint}' is neither a server layerpath knows ({preset_names()}) nor a URL "
        "such as http://127.0.0.1:1234/v1."
    )


def chosen(
    llm: LlmSettings,
    endpoint: str | None = None,
    model: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> LlmSettings:
    """The endpoint a run uses: `endpoint` (a preset or URL) and `model` when given
    (pinned: asked again, it stays); else the server the settings name, when one was
    chosen there (`layerpath config endpoint`, Settings); else OPENAI_BASE_URL, when set;
    else OpenAI's API."""
    environ = os.environ if environ is None else environ
    update: dict[str, Any] = {}
    if endpoint:
        update["base_url"], update["model"] = endpoint_url(endpoint)
    elif environ.get("OPENAI_BASE_URL") and not llm.pinned and llm.base_url == OPENAI_URL:
        update["base_url"] = environ["OPENAI_BASE_URL"].rstrip("/")
    if model:
        update["model"] = model
    if endpoint or model:
        update["pinned"] = True
    return llm.model_copy(update=update) if update else llm


def same_endpoint(a: str | None, b: str | None) -> bool:
    return bool(a and b) and str(a).rstrip("/").lower() == str(b).rstrip("/").lower()


def environment_key(base_url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """OPENAI_API_KEY, for OpenAI's own API or the endpoint OPENAI_BASE_URL names only."""
    environ = os.environ if environ is None else environ
    key = environ.get("OPENAI_API_KEY")
    if not key:
        return None
    parts = urlsplit(base_url)
    if parts.hostname == "api.openai.com" and parts.scheme == "https":
        return key
    return key if same_endpoint(base_url, environ.get("OPENAI_BASE_URL")) else None


# --- what an endpoint takes, found once ------------------------------------------------

#: the ways to ask for JSON, the best first: the plan's JSON schema, any JSON object, or
#: words only (a server that refuses both; the prompt still asks for JSON)
FORMATS = ("json_schema", "json_object", "text")


def _memory_path() -> Path:
    return data_dir() / "endpoints.json"


#: how long what was found about an endpoint holds (a server restarted with a vision
#: projector, or updated, is asked again the next day)
REMEMBERED_S = 24 * 3600


def _remembered() -> dict[str, Any]:
    """The memory file's entries ({} when it is missing or unreadable)."""
    try:
        found = json.loads(_memory_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def recalled(base_url: str, model: str) -> dict[str, Any]:
    """What was found about this endpoint and model in the last REMEMBERED_S: "format"
    (one of FORMATS) and "images" (whether it takes a picture); {} when nothing was."""
    facts = _remembered().get(f"{base_url.rstrip('/')} {model}")
    if not isinstance(facts, dict):
        return {}
    if time.time() - float(facts.get("at", 0)) > REMEMBERED_S:
        return {}
    return {k: v for k, v in facts.items() if k != "at"}


def forget() -> int:
    """Forget what was found about every endpoint; how many were remembered."""
    found = _remembered()
    try:
        _memory_path().unlink()
    except OSError:
        return 0
    return len(found)


def remember(base_url: str, model: str, **facts: Any) -> None:
    """Keep what was found about this endpoint and model (a file nobody needs: when it
    cannot be written, the next run asks again)."""
    from layerpath.files import write_atomically

    path = _memory_path()
    found = _remembered()
    key = f"{base_url.rstrip('/')} {model}"
    entry = found.get(key)
    was: dict[str, Any] = entry if isinstance(entry, dict) else {}
    fresh = time.time() - float(was.get("at", 0)) < REMEMBERED_S
    now = {**(was if fresh else {}), **facts}
    if fresh and all(was.get(k) == v for k, v in now.items()):
        return  # (known already: it is asked again when the day is up)
    found[key] = {**now, "at": round(time.time())}
    text = json.dumps(found, indent=1, sort_keys=True).encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, lambda file: file.write(text))
    except OSError:
        pass
