"""Shared fixtures: an isolated config/data folder and a synthetic scene built in code."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.scenes import Scene, make_scene

__all__ = ["Scene", "make_scene"]


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test touches the user's real settings, traces or keyring."""
    monkeypatch.setenv("LAYERPATH_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("LAYERPATH_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


@pytest.fixture
def scene() -> Scene:
    return make_scene()
