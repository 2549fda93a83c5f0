"""`layerpath bench` end to end on a few tasks: the tables, the JSON and the plot come out,
a seed gives the same scores and tool calls twice, bad options are clear errors, and a
replayed tool call reports the seconds of the call it replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from layerpath.benchmarks.bench import ReplayedTool, pareto_front, parse_alphas, parse_modes
from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import CostBasis, EditRequest, Mode
from layerpath.errors import BadInput
from layerpath.plugin.cli import main
from layerpath.tools.registry import Registry
from tests.conftest import Scene

pytest.importorskip("matplotlib")


def bench(out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    code = main(
        [
            "bench",
            "--tasks",
            "4",
            "--modes",
            "fast-slow,fast",
            "--alpha",
            "0,2",
            "--jobs",
            "1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads((out / "bench-scenes.json").read_text())
    return data, capsys.readouterr().out


def test_bench_writes_tables_json_and_plot_and_repeats_for_a_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, printed = bench(tmp_path / "a", capsys)
    assert "| fast-slow | 0 |" in printed and "| fast | 2 |" in printed
    assert "Per complexity bucket" in printed and "Per subtask kind" in printed
    for per_setting in data["by_kind"].values():  # accuracy and tool seconds per subtask
        for accuracy, seconds in per_setting.values():
            assert 0.0 <= accuracy <= 1.0 and seconds >= 0.0
    assert sum(sum(r["kind_seconds"].values()) for r in data["runs"]) == pytest.approx(
        sum(r["seconds"] for r in data["runs"])
    )
    assert len(data["runs"]) == 4 * 2 * 2 and len(data["tasks"]) == 4
    rows = {(r["mode"], r["alpha"]): r for r in data["by_setting"]}
    assert set(rows) == {("fast-slow", 0.0), ("fast-slow", 2.0), ("fast", 0.0), ("fast", 2.0)}
    for row in rows.values():
        assert 0.0 <= row["accuracy"] <= 1.0 and row["calls_per_task"] > 0
    # fast-only never searches, so it can only do as well as fast-slow or worse
    assert rows[("fast", 0.0)]["accuracy"] <= rows[("fast-slow", 0.0)]["accuracy"]
    assert rows[("fast", 0.0)]["fallback_rate"] == 0.0
    plot = Image.open(tmp_path / "a" / "bench-scenes.png")
    assert plot.size[0] > 400 and np.asarray(plot).std() > 10  # a drawn figure
    again, _ = bench(tmp_path / "b", capsys)
    scores = [(r["task_id"], r["mode"], r["alpha"], r["scores"], r["calls"]) for r in data["runs"]]
    assert scores == [
        (r["task_id"], r["mode"], r["alpha"], r["scores"], r["calls"]) for r in again["runs"]
    ]


def test_bad_options_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BadInput, match="modes are"):
        parse_modes("fast,quick")
    with pytest.raises(BadInput, match="between 0 and 2"):
        parse_alphas("0,3")
    assert main(["bench", "nosuch", "--out", str(tmp_path)]) == 2
    assert "Unknown suite" in capsys.readouterr().err


def test_pareto_front_keeps_only_points_nothing_beats() -> None:
    points = [(1.0, 0.5), (2.0, 0.9), (1.5, 0.4), (3.0, 0.9), (0.5, 0.2)]
    assert pareto_front(points) == [(0.5, 0.2), (1.0, 0.5), (2.0, 0.9)]


def test_a_replayed_call_reports_the_first_calls_seconds(scene: Scene) -> None:
    """The same call on the same inputs under another setting is not run again; the run
    still charges the seconds the first call took. Table costs learn nothing."""
    kept: dict[str, Any] = {}
    registry = Registry(ReplayedTool(t, kept) for t in Registry.from_catalogue())
    engine = Engine(registry, costs=CostBasis.TABLE)
    first = engine.run(EditRequest("remove the ball", scene.snapshot(), mode=Mode.SLOW))
    assert kept and first.ok
    second = engine.run(EditRequest("remove the ball", scene.snapshot(), mode=Mode.FAST_SLOW))
    key = lambda c: (c.tool, json.dumps(c.params, sort_keys=True))  # noqa: E731
    replayed = {key(c): c.seconds for c in second.calls}
    assert set(replayed) & {key(c) for c in first.calls}
    for call in first.calls:
        if key(call) in replayed:
            assert replayed[key(call)] == call.seconds
    assert np.array_equal(first.image, second.image)
    assert engine.table.observed == {}  # nothing learnt from table-cost runs
    learning = Engine(Registry.from_catalogue())
    learning.run(EditRequest("remove the ball", scene.snapshot()))
    assert learning.table.observed  # the default engine learns the measured costs


@pytest.mark.slow
def test_the_warm_up_curve_learns_rules_from_an_empty_table() -> None:
    """From no rules at all: after 12 tasks of experience the offline inducer's rules,
    verified on the replay set, carry part of the held-out subtasks on the fast path;
    every decision is kept; without learning the fast path stays empty."""
    from layerpath.benchmarks.warmup import curve

    decisions: list[dict[str, object]] = []
    registry = Registry.from_catalogue()
    learnt = curve(0, "empty", registry, decisions, points=(0, 12), probe=3, replay_per_kind=1)
    assert [p["experience"] for p in learnt] == [0, 12]
    assert learnt[0]["fast_path"] == 0.0 and learnt[1]["fast_path"] > 0.3
    assert any(d["accepted"] for d in decisions) and all(d["experience"] == 12 for d in decisions)
    still = curve(0, "empty", registry, [], points=(0, 12), probe=3, learning=False)
    assert still[1]["fast_path"] == 0.0 and still[1]["solved_by_rule"] == 0.0
