"""The batch dialog with real widgets (offscreen), opened from the panel's Batch… button,
running the real engine over scikit-image's photos written as files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from layerpath.engine.files.io import composite, read_layered
from layerpath.engine.hosts.batch import SHEET, BatchReport
from layerpath.engine.hosts.document import LayeredDocument
from layerpath.gui.batch_dialog import BatchDialog
from layerpath.gui.panel import Panel
from layerpath.gui.qt import Qt
from layerpath.settings import Settings
from tests.conftest import Scene
from tests.engine.test_batch import PHOTOS, journal_rows, photos

pytest.importorskip("pytestqt")


def start(qtbot, dialog: BatchDialog) -> list[object]:  # type: ignore[no-untyped-def]
    ended: list[object] = []
    dialog.finished_batch.connect(ended.append)
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    return ended


def test_the_batch_dialog_runs_the_panels_instruction_on_a_folder(
    qtbot, scene: Scene, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    image, masks = scene.save(tmp_path / "scene")
    panel = Panel(LayeredDocument.open(image, masks))
    qtbot.addWidget(panel)
    panel.instruction.setPlainText("make it warmer and add a vignette")
    qtbot.mouseClick(panel.batch_button, Qt.MouseButton.LeftButton)
    dialog = panel.findChild(BatchDialog)
    assert isinstance(dialog, BatchDialog) and dialog.isVisible()
    assert dialog.instruction.text() == "make it warmer and add a vignette"

    ended = start(qtbot, dialog)  # nothing chosen yet: said, nothing runs
    assert ended == [None] and "Add the photos" in dialog.status.text()

    sources = photos(tmp_path / "in", PHOTOS[:3])
    dialog.add_photos([tmp_path / "in"])
    dialog.output.setText(str(tmp_path / "out"))
    dialog.format.setCurrentIndex(dialog.format.findData("png"))
    ended = start(qtbot, dialog)
    qtbot.waitUntil(lambda: bool(ended), timeout=120_000)

    report = ended[0]
    assert isinstance(report, BatchReport) and report.done == 3 and report.ok
    assert dialog.progress.value() == dialog.progress.maximum() == 3
    assert "3 done of 3 photos" in dialog.progress.format()
    assert [dialog.results.item(i).text().split(" — ")[1][:4] for i in range(3)] == ["done"] * 3
    assert dialog.sheet_button.isEnabled() and (tmp_path / "out" / SHEET).exists()
    for source in sources:
        result = composite(read_layered(tmp_path / "out" / f"{source.stem}.png"))
        assert not np.array_equal(result, composite(read_layered(source)))
    dialog.grab().save(str(tmp_path / "batch-dialog.png"))


def test_stop_keeps_the_finished_photos_and_start_goes_on(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    photos(tmp_path / "in", PHOTOS, side=480)
    dialog = BatchDialog(Settings(), "reduce the noise")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.add_photos([tmp_path / "in"])
    dialog.output.setText(str(tmp_path / "out"))
    ended = start(qtbot, dialog)
    qtbot.waitUntil(lambda: dialog.results.count() >= 1, timeout=120_000)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(ended), timeout=120_000)

    report = ended[0]
    assert isinstance(report, BatchReport) and report.cancelled
    assert 1 <= report.done < len(PHOTOS)
    assert "Start goes on" in dialog.status.text()
    first = {n for n, (s, _) in journal_rows(tmp_path / "out").items() if s == "done"}

    ended = start(qtbot, dialog)
    qtbot.waitUntil(lambda: bool(ended), timeout=240_000)
    again = ended[0]
    assert isinstance(again, BatchReport) and again.ok
    assert again.skipped == len(first) and again.done == len(PHOTOS) - len(first)
    rows = journal_rows(tmp_path / "out")
    assert all(state == "done" and writes == 1 for state, writes in rows.values())
