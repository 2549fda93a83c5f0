"""The command line as a user runs it: plan, edit to ORA/PSD, report, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from layerpath.engine.cli import main
from layerpath.engine.io import GroupLayer, PixelLayer, composite, read_layered
from tests.conftest import Scene


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_plan_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["plan", "--json", "Detect the bench, recolor it to pink. Also remove the cat."]) == 0
    )
    plan = json.loads(capsys.readouterr().out)
    assert plan == [
        {"id": "s1", "kind": "object_detection", "target": "bench"},
        {"id": "s2", "kind": "object_recoloration", "target": "bench", "to": "pink"},
        {"id": "s3", "kind": "object_removal", "target": "cat"},
    ]


@pytest.mark.parametrize("suffix", [".ora", ".psd"])
def test_edit_writes_layers_and_report_and_leaves_inputs_alone(
    scene: Scene, tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    image, masks = scene.save(tmp_path / "in")
    before = {p: digest(p) for p in [image, *masks.values()]}
    out, report = tmp_path / f"result{suffix}", tmp_path / "run.json"
    code = main(
        [
            "edit",
            str(image),
            "remove the ball and recolor the wall to yellow",
            "--mask",
            f"ball={masks['ball']}",
            "--mask",
            f"wall={masks['wall']}",
            "-o",
            str(out),
            "--report",
            str(report),
        ]
    )
    assert code == 0, capsys.readouterr()
    assert before == {p: digest(p) for p in before}

    doc = read_layered(out)
    original, group = doc.layers
    assert isinstance(original, PixelLayer) and np.array_equal(original.pixels, scene.image)
    assert (
        isinstance(group, GroupLayer)
        and group.name == "remove the ball and recolor the wall to yellow"
    )
    # the ball touches the wall: the recolour runs first so the fill takes the new colour
    assert [c.name.split(" — ")[0] for c in group.children] == [
        "1. named_masks",
        "2. lab_recolor",
        "1. named_masks",
        "2. patch_fill",
    ]

    data = json.loads(report.read_text())
    assert {"plan", "subtasks", "tool_calls", "totals"} <= set(data)
    assert [s["solved_by"] for s in data["subtasks"]] == ["rule:SR1", "rule:SR4"]
    assert data["totals"]["tool_calls"] == len(data["tool_calls"]) == 4
    assert all(
        {"tool", "subtask", "seconds", "quality", "passed", "params"} <= set(c)
        for c in data["tool_calls"]
    )
    assert composite(doc).shape == (240, 320, 4)


def test_edit_exit_codes_and_messages(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image, masks = scene.save(tmp_path / "in")
    out = tmp_path / "o.ora"
    assert main(["edit", str(image), "make it feel nostalgic", "-o", str(out)]) == 2
    assert "layerpath understands" in capsys.readouterr().err
    assert main(["edit", str(tmp_path / "nope.png"), "remove the ball", "-o", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["edit", str(image), "remove the ball", "--mask", "ball", "-o", str(out)]) == 2
    assert "NAME=PATH" in capsys.readouterr().err
    assert main(["edit", str(image), "remove the ball", "-o", str(image)]) == 2
    assert "is an input file" in capsys.readouterr().err
    # a subtask that fails (unknown object) exits 1 but still writes the rest
    code = main(
        [
            "edit",
            str(image),
            "remove the giraffe and recolor the wall to red",
            "--mask",
            f"wall={masks['wall']}",
            "-o",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1 and "No mask for 'giraffe'" in captured.err
    assert len(read_layered(out).layers[1].children) == 2  # type: ignore[union-attr]
    assert "Traceback" not in captured.err
