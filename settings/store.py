"""Load and save settings.json in the platform config folder."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from pydantic import ValidationError

from layerpath.errors import BadInput
from layerpath.settings.paths import config_dir
from layerpath.settings.schema import SCHEMA_VERSION, Settings

log = logging.getLogger(__name__)


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings(path: Path | None = None) -> Settings:
    """Read the settings; a missing file gives the defaults, a broken one a BadInput."""
    path = path or settings_path()
    if not path.exists():
        return Settings()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("schema_version", SCHEMA_VERSION) > SCHEMA_VERSION:
            raise BadInput(
                f"{path} was written by a newer layerpath (schema "
                f"{raw['schema_version']}); update layerpath or delete the file."
            )
        raw["schema_version"] = SCHEMA_VERSION
        return Settings.model_validate(raw)
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        raise BadInput(f"Cannot read settings {path}: {exc}. Fix or delete the file.") from exc


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write the settings atomically (a crash never leaves half a file)."""
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(settings.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    log.info("settings saved to %s", path)
    return path
