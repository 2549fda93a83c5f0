"""Saved actions persist in the data folder and read back exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from layerpath.engine.actions import Action, ActionStore
from layerpath.engine.types import SubtaskKind
from layerpath.errors import BadInput


def test_save_and_read_back(isolated_dirs: Path) -> None:
    store = ActionStore()
    assert store.path.is_relative_to(isolated_dirs / "data") and store.load() == {}
    action = Action(
        "soft removal",
        SubtaskKind.OBJECT_REMOVAL,
        ("named_masks", "opencv_ns"),
        ({}, {"method": "ns", "radius": 7, "grow": 5}),
        target="ball",
    )
    store.save(action)
    store.save(
        Action("teal", SubtaskKind.OBJECT_RECOLORATION, ("named_masks", "lab_recolor"), to="teal")
    )
    assert ActionStore().load()["soft removal"] == action
    assert ActionStore().names() == ["soft removal", "teal"]
    store.save(
        Action("teal", SubtaskKind.OBJECT_RECOLORATION, ("named_masks", "hsv_recolor"), to="teal")
    )
    assert ActionStore().load()["teal"].tools == ("named_masks", "hsv_recolor")


def test_bad_name_and_broken_file() -> None:
    store = ActionStore()
    with pytest.raises(BadInput, match="name"):
        store.save(Action(" ", SubtaskKind.OBJECT_REMOVAL, ("opencv_ns",)))
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text("{broken")
    with pytest.raises(BadInput, match="Fix or delete"):
        store.load()
