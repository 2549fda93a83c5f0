"""The file-backed Document: a run's steps land in their own group, one layer each;
hiding a step undoes exactly that step; user layers cannot be touched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from layerpath.engine import events
from layerpath.engine.execute.executor import Engine
from layerpath.engine.files.io import GroupLayer, PixelLayer, composite, read_layered
from layerpath.engine.hosts.document import Document, LayeredDocument
from layerpath.engine.types import EditRequest, StepLayer
from layerpath.errors import BadInput
from layerpath.tools.registry import Registry
from tests.conftest import Scene


def run_into(document: Document, instruction: str) -> tuple[str, dict[str, StepLayer], np.ndarray]:
    group = document.add_group(instruction)
    ids: dict[str, StepLayer] = {}

    def on_event(event: object) -> None:
        if isinstance(event, events.StepDone):
            ids[document.add_step(group, event.step)] = event.step

    result = Engine(Registry.from_catalogue()).run(
        EditRequest(instruction, document.snapshot()), on_event
    )
    assert result.ok
    return group, ids, result.image


@pytest.fixture
def document(scene: Scene, tmp_path: Path) -> LayeredDocument:
    image, masks = scene.save(tmp_path / "in")
    return LayeredDocument.open(image, masks)


def test_steps_compose_to_the_result_and_hiding_one_undoes_it(
    document: LayeredDocument, scene: Scene
) -> None:
    _, ids, final = run_into(document, "recolor the wall to navy and recolor the ball to yellow")
    assert np.abs(composite(document.image).astype(int) - final.astype(int)).max() <= 1
    wall_step = next(i for i, s in ids.items() if s.tool == "lab_recolor" and s.subtask_id == "s1")
    document.set_visible(wall_step, False)
    shown = composite(document.image)
    wall, ball = scene.masks["wall"], scene.masks["ball"]
    assert np.array_equal(shown[wall], scene.image[wall])  # the wall is back as it was
    assert (
        np.abs(shown[ball].astype(int) - final[ball].astype(int)).max() <= 1
    )  # the ball stays yellow
    document.set_visible(wall_step, True)
    assert np.abs(composite(document.image).astype(int) - final.astype(int)).max() <= 1


def test_two_runs_two_groups_and_removal(
    document: LayeredDocument, scene: Scene, tmp_path: Path
) -> None:
    first, first_ids, _ = run_into(document, "recolor the ball to green")
    second, _, _ = run_into(document, "remove the ball")
    names = [layer.name for layer in document.image.layers]
    assert names == ["Original", "recolor the ball to green", "remove the ball"]
    document.remove(second)
    removed_step = next(iter(first_ids))
    document.remove(removed_step)
    saved = read_layered(document.save(tmp_path / "out.psd"))
    original, group = saved.layers
    assert isinstance(original, PixelLayer) and np.array_equal(original.pixels, scene.image)
    assert isinstance(group, GroupLayer) and len(group.children) == len(first_ids) - 1
    with pytest.raises(BadInput, match="user layers are never changed"):
        document.remove(removed_step)
    with pytest.raises(BadInput, match="No run group"):
        document.add_step(second, next(iter(first_ids.values())))
