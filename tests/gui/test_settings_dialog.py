"""The settings dialog with real widgets: values persist in the config folder, the key
goes to a real keyring backend (keyrings.alt's PlaintextKeyring, chosen explicitly), and
"test connection" talks to an OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from keyrings.alt.file import PlaintextKeyring

from layerpath.gui.qt import Qt
from layerpath.gui.settings_dialog import SettingsDialog
from layerpath.settings import Settings, load_settings
from layerpath.settings.secrets import get_api_key
from layerpath.settings.store import settings_path
from tests.openai_server import ScriptedServer

pytest.importorskip("pytestqt")


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer()
    yield s
    s.close()


def test_change_settings_and_read_them_back(
    qtbot, file_keyring: PlaintextKeyring, server: ScriptedServer
) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings(resident_models=3))  # a setting the form does not show
    qtbot.addWidget(dialog)
    dialog.planner.setCurrentIndex(1)
    dialog.base_url.setText(server.url)
    dialog.model.setText("test-model")
    dialog.api_key.setText("sk-local-77")
    dialog.threshold.setValue(0.65)
    dialog.retries.setValue(1)
    dialog.reflection.setChecked(False)  # the fixed retries
    dialog.device.setCurrentText("cpu")
    dialog.offline.setChecked(True)
    dialog.cpu_offload.setChecked(True)
    dialog.cloud.setChecked(True)
    dialog.cloud_url.setText("https://images.example.com/v1")
    dialog.cloud_key.setText("sk-images-5")
    dialog.critic.setCurrentIndex(2)  # the vision LLM
    with qtbot.waitSignal(dialog.saved):
        dialog.save()
    back = load_settings()
    assert (back.planner, back.llm.base_url, back.llm.model) == ("llm", server.url, "test-model")
    assert (back.quality_threshold, back.retries, back.device) == (0.65, 1, "cpu")
    assert not back.reflection and Settings().reflection
    assert back.offline and back.critic == "vlm" and back.cpu_offload
    assert back.resident_models == 3  # kept, not reset to the default
    assert back.cloud.enabled and back.cloud.base_url == "https://images.example.com/v1"
    assert get_api_key("https://images.example.com/v1") == "sk-images-5"
    assert "sk-images-5" not in settings_path().read_text()
    assert get_api_key(server.url) == "sk-local-77"
    assert "sk-local-77" not in settings_path().read_text()


def test_test_connection_lists_models_off_the_ui_thread(
    qtbot, file_keyring: PlaintextKeyring, server: ScriptedServer
) -> None:  # type: ignore[no-untyped-def]
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.base_url.setText(server.url)
    dialog.api_key.setText("sk-abc")
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.test_result.text().startswith("Connected"), timeout=10_000)
    assert "test-model" in dialog.test_result.text()
    assert server.headers[-1]["authorization"] == "Bearer sk-abc"
    dialog.base_url.setText("http://127.0.0.1:9/v1")
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: dialog.test_result.text().startswith("Could not connect"), timeout=15_000
    )
