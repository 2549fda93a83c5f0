"""The settings dialog with real widgets: values persist in the config folder, the key
goes to a real keyring backend (keyrings.alt's PlaintextKeyring, chosen explicitly), and
"test connection" talks to an OpenAI-compatible server on 127.0.0.1; the training data it
exports comes from real runs recorded in a real SQLite trace store."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyrings.alt.file import PlaintextKeyring

from layerpath.engine.learn.traces import TraceStore
from layerpath.gui.qt import Qt
from layerpath.gui.settings_dialog import SettingsDialog
from layerpath.plugin.cli import main
from layerpath.settings import Settings, load_settings
from layerpath.settings.secrets import get_api_key
from layerpath.settings.store import settings_path
from tests.engine.test_trajectories import lines, recorded  # noqa: F401 (a fixture)
from tests.openai_server import ScriptedServer

pytest.importorskip("pytestqt")


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


def test_the_settings_dialog_exports_the_same_training_data_as_the_command(
    recorded: TraceStore,  # noqa: F811 (the fixture)
    tmp_path: Path,
    qtbot,
) -> None:  # type: ignore[no-untyped-def]
    """Settings ▸ Your runs as training data ▸ Export… writes what `layerpath traces
    export` writes, in each format, and says how much."""
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    for format in ("jsonl", "sft", "dpo"):
        by_command, in_panel = tmp_path / f"cli-{format}.jsonl", tmp_path / f"gui-{format}.jsonl"
        assert main(["traces", "export", "--format", format, "-o", str(by_command)]) == 0
        said = dialog.export_training(in_panel, format)
        assert lines(in_panel) == lines(by_command) and lines(in_panel)
        assert said.startswith(f"{len(lines(in_panel))} records from ")
    assert "Could not write" in dialog.export_training(tmp_path / "no" / "such" / "x.jsonl", "sft")


def test_a_server_chosen_by_name_fills_its_url_and_model(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The LLM server list: LM Studio's URL and 'auto' filled in; a typed URL of a
    preset shows its name; the picture setting is kept through the form."""
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    assert dialog.server.currentText() == "OpenAI"  # the default: OpenAI's API
    dialog.server.setCurrentIndex(dialog.server.findData("lmstudio"))
    dialog.server.activated.emit(dialog.server.currentIndex())
    assert dialog.base_url.text() == "http://127.0.0.1:1234/v1" and dialog.model.text() == "auto"
    assert "LM Studio" in dialog.test_result.text()
    dialog.base_url.setText("http://127.0.0.1:11434/v1")
    dialog.base_url.textEdited.emit(dialog.base_url.text())
    assert dialog.server.currentText() == "Ollama"
    dialog.base_url.setText("http://box.lan:5000/v1")
    dialog.base_url.textEdited.emit(dialog.base_url.text())
    assert dialog.server.currentData() == ""
    dialog.vision.setCurrentIndex(dialog.vision.findData("no"))
    assert dialog.current().llm.vision == "no"
    assert dialog.current().llm.base_url == "http://box.lan:5000/v1"
