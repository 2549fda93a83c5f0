"""Load and save settings.json in the platform config folder."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import ValidationError

from layerpath.errors import BadInput, shown
from layerpath.files import read_store, store_lock, write_atomically
from layerpath.settings.paths import config_dir
from layerpath.settings.schema import SCHEMA_VERSION, Settings

log = logging.getLogger(__name__)


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings(path: Path | None = None) -> Settings:
    """Read the settings; a missing file gives the defaults, a broken one a BadInput
    naming the file (a list, a version that is not a number, text that is not UTF-8 or
    not JSON, a pipe where the file should be)."""
    path = path or settings_path()
    raw = read_store(path, "settings file")
    if not raw:
        return Settings()
    version = raw.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, bool) or not isinstance(version, int):
        raise BadInput(
            f"In the settings file {path}, schema_version should be a whole number, not "
            f"{shown(repr(version), 40)}. Fix it, or delete the file for the defaults."
        )
    if version > SCHEMA_VERSION:
        raise BadInput(
            f"{path} was written by a newer layerpath (schema {version}); update layerpath "
            "or delete the file."
        )
    raw["schema_version"] = SCHEMA_VERSION
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(x) for x in problem["loc"])
        raise BadInput(
            f"Cannot read the settings file {path}: {where}: {shown(problem['msg'], 160)}. "
            "Fix it, or delete the file for the defaults."
        ) from exc


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write the settings atomically (a crash never leaves half a file), under the
    store's lock."""
    path = path or settings_path()
    with store_lock(path):
        write_atomically(path, lambda file: file.write(settings.model_dump_json(indent=2).encode()))
    log.info("settings saved to %s", path)
    return path
