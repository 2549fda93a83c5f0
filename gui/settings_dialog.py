"""The settings dialog: planner and LLM endpoint (key kept in the OS keyring), quality
threshold, retries and reflection, critic, device, model folder, offline mode, cloud image
edits, and the recorded runs exported as training data."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from layerpath.engine.learn.rulebook import RuleBook
from layerpath.engine.learn.traces import user_traces
from layerpath.engine.learn.trajectories import as_lines, export
from layerpath.errors import LayerpathError
from layerpath.files import write_atomically
from layerpath.gui.qt import QtWidgets, Signal
from layerpath.gui.worker import RunController
from layerpath.settings import CloudSettings, LlmSettings, Settings, save_settings
from layerpath.settings.endpoints import PRESETS
from layerpath.settings.secrets import FROM_ENVIRONMENT, get_api_key, key_source, set_api_key
from layerpath.tools.endpoint import LLM_EXTRA, llm_installed, openai_client
from layerpath.tools.models import ModelManager
from layerpath.tools.registry import Registry

log = logging.getLogger(__name__)

PLANNERS = (("Offline (built in)", "offline"), ("LLM (OpenAI-compatible)", "llm"))
#: whether the planner shows the LLM a small copy of the picture
VISION = (("When the model takes one", "auto"), ("Always", "yes"), ("Never (words only)", "no"))
DEVICES = ("auto", "cuda", "mps", "cpu")
CRITICS = (
    ("Automatic (CLIP when downloaded)", "auto"),
    ("CLIP (local model)", "clip"),
    ("Vision LLM (the endpoint above)", "vlm"),
    ("None (checkers only)", "none"),
)


TRAINING_FORMATS = (
    ("Trajectories (a step per line)", "jsonl"),
    ("Chat examples of accepted paths (SFT)", "sft"),
    ("Accepted over turned-down paths (DPO)", "dpo"),
)


def check_connection(base_url: str, api_key: str | None, timeout_s: float = 10.0) -> str:
    """Ask the endpoint for its models; a short answer for the user either way."""
    if not llm_installed():
        return f"The openai package is not installed: {LLM_EXTRA}"
    from openai import APIError

    client = openai_client(base_url, api_key, timeout_s)
    try:
        models = [m.id for m in client.models.list()]
    except APIError as exc:
        return f"Could not connect: {str(exc).splitlines()[0][:160]}"
    shown = ", ".join(models[:5]) + (" …" if len(models) > 5 else "")
    return f"Connected: {len(models)} model(s) — {shown}"


def _key_said(base_url: str) -> str | None:
    """Where the key for this server comes from, in words (never the key); None: none."""
    said = key_source(base_url)
    if said == FROM_ENVIRONMENT:
        return f"{said} (type one to store it in the OS keyring instead)"
    return said


class SettingsDialog(QtWidgets.QDialog):
    """Edits a Settings record; Save writes settings.json and the key to the keyring."""

    saved = Signal(object)  # Settings

    def __init__(
        self,
        settings: Settings,
        parent: QtWidgets.QWidget | None = None,
        checker: Callable[[str, str | None], str] = check_connection,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("layerpath settings")
        self.settings = settings
        self._checker = checker
        self._controller = RunController(self)
        self.planner = QtWidgets.QComboBox()
        for label, value in PLANNERS:
            self.planner.addItem(label, value)
        self.planner.setCurrentIndex([v for _, v in PLANNERS].index(settings.planner))
        self.server = QtWidgets.QComboBox()  # a preset fills the URL and the model
        self.server.addItem("Other (type its URL)", "")
        for name, preset in PRESETS.items():
            self.server.addItem(preset.label, name)
        self.server.setToolTip("Where the LLM runs: a local server on this machine, or OpenAI")
        self.base_url = QtWidgets.QLineEdit(settings.llm.base_url)
        self.model = QtWidgets.QLineEdit(settings.llm.model)
        self.model.setToolTip("'auto': the first model the server lists (the one loaded)")
        self.vision = QtWidgets.QComboBox()
        for label, value in VISION:
            self.vision.addItem(label, value)
        self.vision.setCurrentIndex([v for _, v in VISION].index(settings.llm.vision))
        self._show_server()
        self.server.activated.connect(self._preset_chosen)
        self.base_url.textEdited.connect(lambda _: self._show_server())
        self.speech_model = QtWidgets.QLineEdit(settings.llm.transcription_model)
        self.speech_model.setToolTip("The endpoint's model that transcribes a voice memo reference")
        self.api_key = QtWidgets.QLineEdit()
        self.api_key.setEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(
            _key_said(settings.llm.base_url) or "none (local servers need none)"
        )
        self.cloud = QtWidgets.QCheckBox("Allow cloud image edits (sends a window of the photo)")
        self.cloud.setChecked(settings.cloud.enabled)
        self.cloud_url = QtWidgets.QLineEdit(settings.cloud.base_url)
        self.cloud_model = QtWidgets.QLineEdit(settings.cloud.model)
        self.cloud_key = QtWidgets.QLineEdit()
        self.cloud_key.setEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
        self.cloud_key.setPlaceholderText(_key_said(settings.cloud.base_url) or "none")
        self.test_button = QtWidgets.QPushButton("Test connection")
        self.test_result = QtWidgets.QLabel()
        self.test_result.setWordWrap(True)
        self.threshold = QtWidgets.QDoubleSpinBox()
        self.threshold.setRange(0.0, 1.0)
        self.threshold.setSingleStep(0.05)
        self.threshold.setValue(settings.quality_threshold)
        self.retries = QtWidgets.QSpinBox()
        self.retries.setRange(0, 5)
        self.retries.setValue(settings.retries)
        self.reflection = QtWidgets.QCheckBox("Retry with what the checks found wrong")
        self.reflection.setToolTip(
            "A step the checks turn down is tried again with settings that answer what "
            "they found (more of the colour, a wider fill, highlights eased instead of "
            "clipped); off: each tool's fixed list of retries."
        )
        self.reflection.setChecked(settings.reflection)
        self.device = QtWidgets.QComboBox()
        self.device.addItems(DEVICES)
        self.device.setCurrentText(settings.device)
        self.model_dir = QtWidgets.QLineEdit(settings.model_dir or "")
        self.model_dir.setPlaceholderText("default: the platform data folder")
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        folder = QtWidgets.QHBoxLayout()
        folder.addWidget(self.model_dir, 1)
        folder.addWidget(browse)
        self.critic = QtWidgets.QComboBox()
        for label, value in CRITICS:
            self.critic.addItem(label, value)
        self.critic.setCurrentIndex([v for _, v in CRITICS].index(settings.critic))
        self.preview_plan = QtWidgets.QCheckBox("Show the plan before running it")
        self.preview_plan.setChecked(settings.preview_plan)
        self.offline = QtWidgets.QCheckBox("Never download models (offline)")
        self.offline.setChecked(settings.offline)
        self.cpu_offload = QtWidgets.QCheckBox("Keep large models in CPU memory (small GPUs)")
        self.cpu_offload.setToolTip(
            "Diffusion models visit the GPU part by part: slower, but they fit in 4 GB."
        )
        self.cpu_offload.setChecked(settings.cpu_offload)

        form = QtWidgets.QFormLayout()
        form.addRow("Planner", self.planner)
        form.addRow("LLM server", self.server)
        form.addRow("LLM base URL", self.base_url)
        form.addRow("LLM model", self.model)
        form.addRow("Show the LLM the picture", self.vision)
        form.addRow("Speech model", self.speech_model)
        form.addRow("API key", self.api_key)
        form.addRow(self.test_button, self.test_result)
        form.addRow("Quality threshold", self.threshold)
        form.addRow("Retries per tool", self.retries)
        form.addRow("", self.reflection)
        form.addRow("", self.preview_plan)
        form.addRow("Critic", self.critic)
        form.addRow("Device", self.device)
        form.addRow("", self.cpu_offload)
        form.addRow("Model folder", folder)
        form.addRow("", self.offline)
        form.addRow("Cloud image edits", self.cloud)
        self.training_format = QtWidgets.QComboBox()
        for label, value in TRAINING_FORMATS:
            self.training_format.addItem(label, value)
        self.export_button = QtWidgets.QPushButton("Export…")
        self.export_button.clicked.connect(self._ask_export)
        self.export_result = QtWidgets.QLabel()
        self.export_result.setWordWrap(True)
        training = QtWidgets.QHBoxLayout()
        training.addWidget(self.training_format, 1)
        training.addWidget(self.export_button)
        form.addRow("Images API URL", self.cloud_url)
        form.addRow("Image model", self.cloud_model)
        form.addRow("Images API key", self.cloud_key)
        form.addRow("Your runs as training data", training)
        form.addRow("", self.export_result)
        buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Save
            | QtWidgets.QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.test_button.clicked.connect(self.test_connection)
        self._controller.done.connect(self._tested)

    def export_training(self, path: Path, format: str) -> str:
        """What runs recorded, as training data in `format` (engine/learn/trajectories.py), into
        `path`; what was written, in a sentence (or why nothing was)."""
        store = user_traces(self.settings)
        if store is None or not store.usable:
            return "No runs are recorded here (recording is off, or the trace file cannot be read)."
        models = ModelManager.from_settings(self.settings)
        rules = RuleBook(Registry.from_catalogue(models=models)).table()
        records, judged = export(store.attempts(), rules, format)
        lines = as_lines(records)
        try:
            write_atomically(path, lambda file: file.write(lines))
        except OSError as exc:
            return f"Could not write {path}: {exc.strerror or exc}"
        return f"{len(records)} records from {judged} judged attempts written to {path.name}."

    def _ask_export(self) -> None:
        format = self.training_format.currentData()
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export training data", f"layerpath-{format}.jsonl", "JSON Lines (*.jsonl)"
        )
        if path:
            self.export_result.setText(self.export_training(Path(path), format))

    def current(self) -> Settings:
        """The settings as the form shows them (those it does not show kept as they were)."""
        return Settings.model_validate(
            self.settings.model_dump()
            | dict(
                planner=self.planner.currentData(),
                llm=LlmSettings(
                    base_url=self.base_url.text().strip(),
                    model=self.model.text().strip(),
                    transcription_model=self.speech_model.text().strip() or "whisper-1",
                    timeout_s=self.settings.llm.timeout_s,
                    vision=self.vision.currentData(),
                ).model_dump(),
                quality_threshold=round(self.threshold.value(), 3),
                retries=self.retries.value(),
                reflection=self.reflection.isChecked(),
                preview_plan=self.preview_plan.isChecked(),
                device=self.device.currentText(),
                cpu_offload=self.cpu_offload.isChecked(),
                model_dir=self.model_dir.text().strip() or None,
                offline=self.offline.isChecked(),
                critic=self.critic.currentData(),
                cloud=CloudSettings(
                    enabled=self.cloud.isChecked(),
                    base_url=self.cloud_url.text().strip(),
                    model=self.cloud_model.text().strip(),
                    timeout_s=self.settings.cloud.timeout_s,
                ).model_dump(),
            )
        )

    def save(self) -> None:
        settings = self.current()
        try:
            if self.api_key.text():
                set_api_key(settings.llm.base_url, self.api_key.text())
            if self.cloud_key.text():
                set_api_key(settings.cloud.base_url, self.cloud_key.text())
        except LayerpathError as exc:  # (no keyring installed, or none works here)
            self.test_result.setText(str(exc))
            return
        save_settings(settings)
        self.settings = settings
        self.saved.emit(settings)
        self.accept()

    def _preset_chosen(self) -> None:
        """A server chosen by name: its URL and model filled in, and whether it needs a key."""
        preset = PRESETS.get(self.server.currentData() or "")
        if preset is None:
            return
        self.base_url.setText(preset.base_url)
        self.model.setText(preset.model)
        self.test_result.setText(preset.hint)

    def _show_server(self) -> None:
        """The preset whose URL the field holds, else "Other"."""
        url = self.base_url.text().strip().rstrip("/")
        names = [name for name, p in PRESETS.items() if p.base_url == url]
        self.server.setCurrentIndex(self.server.findData(names[0] if names else ""))

    def test_connection(self) -> None:
        """Check the endpoint off the UI thread; the answer shows beside the button."""
        if self._controller.running:
            return
        url = self.base_url.text().strip()
        key = self.api_key.text() or get_api_key(url)
        self.test_result.setText("connecting…")
        self._controller.start(lambda emit, cancelled: self._checker(url, key))

    def _tested(self, message: object) -> None:
        self.test_result.setText(str(message))

    def _browse(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(
            self, "Model folder", self.model_dir.text()
        )
        if folder:
            self.model_dir.setText(folder)
