"""The rule book and saved actions, through the real `layerpath` command line on a real
data folder (the isolated_dirs fixture points LAYERPATH_DATA_DIR at a fresh one): rules
listed with their source, disabled and enabled; a run saved as an action, exported,
imported into another profile and replayed to identical pixels without planning; hostile
and corrupt action files refused with nothing changed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.execute.executor import Engine
from layerpath.engine.execute.subroutines import Rule
from layerpath.engine.learn.actions import Action, action_from_outcomes
from layerpath.engine.learn.rulebook import RuleBook
from layerpath.engine.types import EditRequest, SubtaskKind
from layerpath.errors import BadInput
from layerpath.plugin.cli import main
from layerpath.tools.registry import Registry
from tests.conftest import Scene


def edit(tmp_path: Path, scene: Scene, instruction: str, name: str) -> tuple[Path, Path]:
    image, masks = scene.save(tmp_path / "in")
    out, report = tmp_path / f"{name}.png", tmp_path / f"{name}.json"
    args = [f"--mask={k}={v}" for k, v in masks.items()]
    assert main(
        ["edit", str(image), instruction, *args, "-o", str(out), "--report", str(report)]
    ) in (0, 1)
    return out, report


def pixels(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGBA"))


def test_rules_list_their_source_and_can_be_turned_off(
    capsys: pytest.CaptureFixture[str], isolated_dirs: Path
) -> None:
    assert main(["rules", "list", "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)["rules"]
    assert {r["source"] for r in rules} == {"shipped"} and len(rules) == 29
    sr1 = next(r for r in rules if r["id"] == "SR1")
    assert sr1["enabled"] and sr1["tools"] == ["named_masks", "lab_recolor"]
    assert main(["rules", "disable", "SR1"]) == 0
    assert "[off]" in capsys.readouterr().out
    table = RuleBook(Registry.from_catalogue()).table()
    assert "SR1" not in {r.id for r in table.rules}  # a run no longer uses it
    assert main(["rules", "enable", "SR1"]) == 0
    assert "SR1" in {r.id for r in RuleBook(Registry.from_catalogue()).table().rules}
    assert main(["rules", "disable", "SR99"]) == 2
    assert "No rule 'SR99'" in capsys.readouterr().err


def test_a_saved_action_replays_to_identical_pixels_in_another_profile(
    scene: Scene,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Save a run's recolour as an action, export it, import it into a fresh profile and
    run it there on the same photo with the wall's mask under another name: the same
    tools, the same parameters, identical pixels, and no planning (the instruction's
    words are not read)."""
    first, report = edit(tmp_path, scene, "recolor the wall to navy", "first")
    assert main(["actions", "save", "navy wall", "--from", str(report)]) == 0
    exported = tmp_path / "navy.json"
    assert main(["actions", "export", "navy wall", "-o", str(exported)]) == 0
    saved = json.loads(exported.read_text())["action"]["parts"][0]
    assert saved["tools"] == ["named_masks", "lab_recolor"] and saved["params"][1]["lightness"]

    monkeypatch.setenv("LAYERPATH_DATA_DIR", str(tmp_path / "other-profile"))
    assert main(["actions", "list"]) == 0 and "no saved actions" in capsys.readouterr().out
    assert main(["actions", "import", str(exported)]) == 0
    image, masks = scene.save(tmp_path / "again")
    replay, replay_report = tmp_path / "replay.png", tmp_path / "replay.json"
    code = main(["actions", "run", "navy wall", str(image), f"--mask=plaster={masks['wall']}", "-o", str(replay), "--report", str(replay_report)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert np.array_equal(pixels(replay), pixels(first))
    ran = json.loads(replay_report.read_text())
    assert ran["planner"] == "action" and ran["subtasks"][0]["solved_by"] == "action:navy wall"
    assert ran["subtasks"][0]["target"] == "plaster"


def test_an_action_is_preferred_by_the_fast_path_when_its_conditions_hold(
    scene: Scene, isolated_dirs: Path
) -> None:
    """A user's recolour through hsv_recolor with its own saturation: an ordinary run of
    a recolour takes it over the shipped SR1 (lab_recolor), with those parameters; where
    its result fails the checks (navy: HSV keeps the wall's lightness) the run falls back
    to the search, as for any rule."""
    registry = Registry.from_catalogue()
    book = RuleBook(registry)
    part = Rule(
        id="hue swap",
        subtask=SubtaskKind.OBJECT_RECOLORATION,
        tools=["named_masks", "hsv_recolor"],
        source="user",
        params=[{}, {"saturation": 0.8}],
    )
    book.save_action(Action("hue swap", (part,)))
    engine = Engine(registry, rules=book.table())
    result = engine.run(EditRequest("recolor the wall to red", scene.snapshot()))
    (outcome,) = result.outcomes
    assert outcome.solved_by == "action:hue swap" and outcome.tools == (
        "named_masks",
        "hsv_recolor",
    )
    assert outcome.params[1]["saturation"] == 0.8
    navy = engine.run(EditRequest("recolor the wall to navy", scene.snapshot())).outcomes[0]
    assert navy.solved_by == "search" and "rule hue swap failed" in str(navy.fallback_reason)
    assert book.set_enabled("hue swap", False).enabled is False  # turned off: SR1 again
    again = Engine(registry, rules=book.table()).run(
        EditRequest("recolor the wall to red", scene.snapshot())
    )
    assert again.outcomes[0].solved_by == "rule:SR1"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"{not json", "not JSON"),
        (b'{"format": "something-else", "version": 1}', "not a layerpath action file"),
        (b'{"format": "layerpath-action", "version": 7, "action": {}}', "version 7"),
        (b"x" * 1_000_001, "at most 1.0 MB"),
    ],
)
def test_a_corrupt_action_file_is_refused_and_changes_nothing(
    content: bytes,
    said: str,
    tmp_path: Path,
    isolated_dirs: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    book = RuleBook(Registry.from_catalogue())
    book.save_action(
        Action(
            "mine",
            (
                Rule(
                    id="mine",
                    subtask=SubtaskKind.OBJECT_RECOLORATION,
                    tools=["named_masks", "lab_recolor"],
                    source="user",
                ),
            ),
        )  # fmt: skip
    )
    before = book.actions_path.read_bytes()
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    assert main(["actions", "import", str(bad)]) == 2
    assert said in capsys.readouterr().err
    assert book.actions_path.read_bytes() == before


def _file(action: dict[str, object]) -> bytes:
    return json.dumps({"format": "layerpath-action", "version": 1, "action": action}).encode()


def _part(**changes: object) -> dict[str, object]:
    part: dict[str, object] = {
        "id": "x",
        "subtask": "object_removal",
        "tools": ["named_masks", "patch_fill"],
        "source": "user",
        "params": [{}, {"iterations": 6}],
    }
    return {**part, **changes}


@pytest.mark.parametrize(
    ("action", "said"),
    [
        ({"name": "x", "parts": [_part(tools=["named_masks", "rm_rf"])]}, "does not have"),
        ({"name": "x", "parts": [_part(params=[{}, {"iterations": 10**9}])]}, "out of range"),
        ({"name": "x", "parts": [_part(params=[{}, {"__import__": "os"}])]}, "no parameter"),
        ({"name": "x", "parts": [_part(params=[{}, {"guided": "yes"}])]}, "bool"),
        ({"name": "x", "parts": [_part(source="shipped")]}, "user's own"),
        ({"name": "x", "parts": [_part(subtask="text_removal")]}, "does Text Removal"),
        ({"name": "x", "parts": [_part(extra=1)]}, "bad part"),
        ({"name": "\x1b[2J", "parts": [_part()]}, "control characters"),
        ({"name": "x", "parts": []}, "1 to 20 parts"),
        ({"name": "x", "parts": [_part()], "run": "rm"}, "Unknown field"),
    ],
)
def test_a_hostile_action_is_refused_with_the_reason(
    action: dict[str, object], said: str, isolated_dirs: Path
) -> None:
    from layerpath.engine.learn.actions import import_json

    with pytest.raises(BadInput, match=said):
        import_json(_file(action), Registry.from_catalogue())


def test_actions_rename_and_delete(
    scene: Scene, isolated_dirs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = Engine(Registry.from_catalogue())
    outcome = engine.run(EditRequest("remove the ball", scene.snapshot())).outcomes[0]
    book = RuleBook(engine.registry)
    book.save_action(action_from_outcomes("clean ball", [outcome]))
    assert main(["actions", "rename", "clean ball", "no ball"]) == 0
    assert list(book.actions()) == ["no ball"]
    assert book.find("no ball").action == "no ball"  # its rule renamed with it
    assert main(["actions", "delete", "no ball"]) == 0
    assert book.actions() == {}
    assert main(["actions", "delete", "no ball"]) == 2
    assert "No action 'no ball'" in capsys.readouterr().err


def test_actions_saved_by_an_earlier_layerpath_read_back(isolated_dirs: Path) -> None:
    """actions.json version 1 (one subtask each, parameters one per layer): read as
    actions; parameters that do not line up with the tools are dropped, not misapplied."""
    book = RuleBook(Registry.from_catalogue())
    book.actions_path.parent.mkdir(parents=True, exist_ok=True)
    old = {
        "version": 1,
        "actions": [
            {
                "name": "teal",
                "subtask": "object_recoloration",
                "tools": ["named_masks", "lab_recolor"],
                "params": [{}, {"lightness": 0.3}],
                "target": "wall",
                "to": "teal",
                "extra": {},
            },  # fmt: skip
            {
                "name": "fill",
                "subtask": "object_removal",
                "tools": ["named_masks", "patch_fill"],
                "params": [{}, {}, {"grow": 4}],
                "target": "ball",
                "to": None,
                "extra": {},
            },  # fmt: skip
        ],
    }
    book.actions_path.write_text(json.dumps(old))
    actions = book.actions()
    assert actions["teal"].parts[0].params == [{}, {"lightness": 0.3}]
    assert actions["fill"].parts[0].params is None
    book.actions_path.write_text("{broken")
    with pytest.raises(BadInput, match="Fix it, or delete|Fix or delete"):
        book.actions()


def test_a_damaged_actions_file_stops_no_edit(
    scene: Scene, tmp_path: Path, isolated_dirs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The edit runs on the shipped rules with a warning naming the file; the file is
    left as it is for the user to fix."""
    actions = isolated_dirs / "data" / "actions.json"
    actions.parent.mkdir(parents=True, exist_ok=True)
    actions.write_text("{broken")
    out, _ = edit(tmp_path, scene, "recolor the wall to navy", "run")
    assert out.exists()
    assert "actions.json is not JSON" in caplog.text and "Fix it" in caplog.text
    assert actions.read_text() == "{broken"


def test_an_action_runs_its_parts_in_the_order_they_were_saved(scene: Scene) -> None:
    """A run reorders a removal after a recolour of the ground it lies on; an action's
    parts were saved in the order they ran and run so, each subtask with its own part
    (planned subtasks are numbered after ordering: the ids cannot tell them apart)."""
    recolour = Rule(
        id="tidy #1",
        subtask=SubtaskKind.OBJECT_RECOLORATION,
        tools=["named_masks", "lab_recolor"],
        source="user",
        target="wall",
        to="red",
    )
    removal = Rule(
        id="tidy #2",
        subtask=SubtaskKind.OBJECT_REMOVAL,
        tools=["named_masks", "patch_fill"],
        source="user",
        target="ball",
    )
    planned = Engine(Registry.from_catalogue()).run(
        EditRequest("remove the ball and recolor the wall to red", scene.snapshot())
    )
    assert [o.subtask.kind for o in planned.outcomes] == [recolour.subtask, removal.subtask]
    for parts in ((recolour, removal), (removal, recolour)):
        result = Engine(Registry.from_catalogue()).run(
            EditRequest("tidy", scene.snapshot(), action=Action("tidy", parts))
        )
        assert [o.solved_by for o in result.outcomes] == [p.route for p in parts]


def test_a_learnt_rule_is_said_pinned_undone_and_left_out_with_rules_shipped(
    tmp_path: Path, scene: Scene, capsys: pytest.CaptureFixture[str], isolated_dirs: Path
) -> None:
    """A rule learnt from the user's runs (recolour with HSV first) takes over recolours:
    the run says so and how to go back, the report says which rule served and where it
    was learnt; `--rules shipped` leaves it out (the shipped SR1 serves); a pinned
    shipped rule serves whatever was learnt; `rules undo` turns the learnt one off
    (issue 25: a background learner had changed later runs without a word)."""
    book = RuleBook(Registry.from_catalogue())
    learnt = Rule(
        id="M7", subtask=SubtaskKind.OBJECT_RECOLORATION, tools=["named_masks", "hsv_recolor"],
        source="mined", support=14, accepted="2026-11-25", cost=0.01, quality=0.99,
    )  # fmt: skip
    book.add_mined([learnt])
    out, report = edit(tmp_path, scene, "recolor the wall to yellow", "learnt")
    said = capsys.readouterr().err
    assert "Rule M7, learnt from your runs (14 traces, accepted 2026-11-25)" in said
    assert "layerpath rules undo M7" in said
    (entry,) = json.loads(report.read_text())["subtasks"]
    assert entry["solved_by"] == "rule:M7" and "learnt from your runs" in entry["rule_origin"]

    image, masks = scene.save(tmp_path / "in2")
    plain = tmp_path / "shipped.json"
    args = [f"--mask={k}={v}" for k, v in masks.items()]
    assert main(["edit", str(image), "recolor the wall to yellow", *args, "--rules",
                 "shipped", "-o", str(tmp_path / "s.png"), "--report", str(plain)]) == 0  # fmt: skip
    (entry,) = json.loads(plain.read_text())["subtasks"]
    assert entry["solved_by"] == "rule:SR1" and entry["rule_origin"] == "shipped rule SR1"
    assert "M7" not in capsys.readouterr().err

    assert main(["rules", "pin", "SR1"]) == 0
    assert "pinned" in capsys.readouterr().out
    pinned = RuleBook(Registry.from_catalogue()).table()
    features = {"has_mask": True}
    chosen = pinned.select(
        SubtaskKind.OBJECT_RECOLORATION, features, Engine(Registry.from_catalogue()).table, 1.0
    )
    assert chosen is not None and chosen.id == "SR1"
    assert main(["rules", "undo", "SR1"]) == 2  # a shipped rule is disabled, not undone
    assert main(["rules", "undo", "M7"]) == 0
    assert "M7" not in {r.id for r in RuleBook(Registry.from_catalogue()).table().rules}
