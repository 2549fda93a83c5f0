"""Settings: schema, platform paths, load/save, secrets via keyring. Imports nothing of ours."""

from layerpath.settings.paths import config_dir, data_dir
from layerpath.settings.schema import CloudSettings, LlmSettings, Settings
from layerpath.settings.store import load_settings, save_settings

__all__ = [
    "CloudSettings",
    "LlmSettings",
    "Settings",
    "config_dir",
    "data_dir",
    "load_settings",
    "save_settings",
]
