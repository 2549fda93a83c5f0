"""Settings persist in the platform config dir; the API key only in the keyring
(keyrings.alt's PlaintextKeyring, a real file-based keyring backend, chosen explicitly
so the test never touches the machine's own keyring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from keyrings.alt.file import PlaintextKeyring

from layerpath.errors import BadInput
from layerpath.settings import LlmSettings, Settings, load_settings, save_settings
from layerpath.settings.secrets import delete_api_key, get_api_key, set_api_key
from layerpath.settings.store import settings_path


def test_defaults_when_no_file() -> None:
    assert load_settings() == Settings()


def test_roundtrip_in_config_dir(isolated_dirs: Path) -> None:
    settings = Settings(
        planner="llm",
        llm=LlmSettings(base_url="http://127.0.0.1:1234/v1", model="qwen"),
        quality_threshold=0.7,
        device="cpu",
    )
    path = save_settings(settings)
    assert path == settings_path() and path.is_relative_to(isolated_dirs / "config")
    assert load_settings() == settings
    assert json.loads(path.read_text())["schema_version"] == 1


def test_broken_or_newer_file_is_a_clear_error() -> None:
    settings_path().parent.mkdir(parents=True)
    settings_path().write_text("{not json")
    with pytest.raises(BadInput, match="Fix it, or delete"):
        load_settings()
    settings_path().write_text(json.dumps({"schema_version": 99}))
    with pytest.raises(BadInput, match="newer layerpath"):
        load_settings()


def test_api_key_lives_in_the_keyring_not_in_files(file_keyring: PlaintextKeyring) -> None:
    url = "http://127.0.0.1:1234/v1"
    save_settings(Settings(llm=LlmSettings(base_url=url)))
    set_api_key(url, "sk-secret-42")
    assert get_api_key(url) == "sk-secret-42"
    assert "sk-secret-42" not in settings_path().read_text()
    delete_api_key(url)
    assert get_api_key(url) is None
