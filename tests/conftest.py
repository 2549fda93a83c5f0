"""Shared fixtures: an isolated config/data folder and a synthetic scene built in code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyrings.alt.file import PlaintextKeyring

from layerpath.benchmarks.scenes import Scene, make_scene
from tests.openai_server import ScriptedServer

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


@pytest.fixture
def file_keyring(tmp_path: Path) -> Iterator[PlaintextKeyring]:
    """keyrings.alt's PlaintextKeyring, a real file-based keyring backend chosen
    explicitly, so tests never touch the machine's own keyring."""
    previous = keyring.get_keyring()
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring.cfg")  # type: ignore[misc]
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """An OpenAI-compatible server on 127.0.0.1 with scripted answers (tests/openai_server.py)."""
    running = ScriptedServer()
    yield running
    running.close()


def made_by(doc: object, tool: str) -> list[object]:
    """The step layers of an ORA layerpath wrote that `tool` made: the file's record of
    its runs says which (a layer's name is a photographer's words, not a tool id)."""
    found = []
    for recipe in doc.recipes:  # type: ignore[attr-defined]
        group = doc.layers[recipe["group"]]  # type: ignore[attr-defined]
        found += [
            layer
            for layer, step in zip(group.children, recipe["steps"], strict=True)
            if step.get("tool") == tool
        ]
    return found
