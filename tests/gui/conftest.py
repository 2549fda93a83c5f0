"""Qt tests run offscreen, with real widgets (pytest-qt)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def run_in_panel(qtbot, panel, text: str) -> object:  # type: ignore[no-untyped-def]
    """Type the instruction and click Run as a user does; when the plan is shown first
    (the default), check it is there and click 'Run these steps'. The run's result, or
    None when it could not start."""
    from layerpath.engine.execute.preview import Preview
    from layerpath.gui.qt import Qt

    panel.instruction.setPlainText(text)
    seen: list[object] = []
    panel.plan_ready.connect(seen.append)
    panel.run_finished.connect(seen.append)
    try:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
        if isinstance(seen[0], Preview):
            assert panel.preview_box.isVisibleTo(panel) and panel.plan.topLevelItemCount() > 0
            seen.clear()
            qtbot.mouseClick(panel.confirm_button, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
        return seen[0]
    finally:
        panel.plan_ready.disconnect(seen.append)
        panel.run_finished.disconnect(seen.append)
