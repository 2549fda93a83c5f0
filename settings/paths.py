"""Where layerpath keeps its settings, traces and models (platform folders)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "layerpath"


def config_dir() -> Path:
    """The folder of settings.json; LAYERPATH_CONFIG_DIR overrides the platform default."""
    override = os.environ.get("LAYERPATH_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    """The folder of traces and learned rules; LAYERPATH_DATA_DIR overrides the default."""
    override = os.environ.get("LAYERPATH_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))
