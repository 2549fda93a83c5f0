"""The command line as a user runs it: plan, edit to ORA/PSD, report, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from layerpath.engine.files.io import GroupLayer, PixelLayer, composite, read_layered
from layerpath.plugin.cli import main
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
    # the ball touches the wall: the recolour runs first so the fill takes the new colour;
    # the layers are named in a photographer's words, the tools are in the report
    assert [c.name for c in group.children] == [
        "Recolour wall to yellow · Your mask or selection",
        "Recolour wall to yellow",
        "Remove ball · Your mask or selection",
        "Remove ball",
    ]

    data = json.loads(report.read_text())
    assert [t for s in data["subtasks"] for t in s["tools"]] == [
        "named_masks",
        "lab_recolor",
        "named_masks",
        "patch_fill",
    ]
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
    assert main(["edit", str(image), "make it feel like a Tuesday", "-o", str(out)]) == 2
    assert "layerpath understands" in capsys.readouterr().err
    assert main(["edit", str(tmp_path / "nope.png"), "remove the ball", "-o", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["edit", str(image), "remove the ball", "--mask", "ball", "-o", str(out)]) == 2
    assert "NAME=PATH" in capsys.readouterr().err
    assert main(["edit", str(image), "remove the ball", "-o", str(image)]) == 2
    assert "is one of this command's inputs" in capsys.readouterr().err
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
    assert "Here: --mask giraffe=mask.png." in captured.err  # how, on the command line
    assert len(read_layered(out).layers[1].children) == 2  # type: ignore[union-attr]
    assert "Traceback" not in captured.err


def edit_astronaut(
    tmp_path: Path, instruction: str, capsys: pytest.CaptureFixture[str]
) -> tuple[np.ndarray, Path, list[object], Path]:
    """scikit-image's astronaut edited from the command line into an ORA with a report:
    the photo, its file, the run's step layers (the user's layer checked untouched) and
    the report."""
    from PIL import Image
    from skimage import data

    photo = data.astronaut()
    image = tmp_path / "astronaut.png"
    Image.fromarray(photo).save(image)
    out, report = tmp_path / "out.ora", tmp_path / "run.json"
    code = main(["edit", str(image), instruction, "-o", str(out), "--report", str(report)])
    assert code == 0, capsys.readouterr()
    doc = read_layered(out)
    original, group = doc.layers
    assert isinstance(original, PixelLayer) and np.array_equal(original.pixels[..., :3], photo)
    assert isinstance(group, GroupLayer)
    return photo, image, list(group.children), report


def test_everyday_adjustments_on_a_real_photo_without_a_mask(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """scikit-image's astronaut, as a photographer words it: the face is found and
    blurred, the background found (all but the person) and made black and white, each a
    step layer over the untouched photo; the report keeps each step's adjustment."""
    from layerpath.kit.colours import lab_exact

    photo, _, steps, report = edit_astronaut(
        tmp_path, "blur the face and make the background black and white", capsys
    )
    assert [c.name for c in steps] == [  # type: ignore[attr-defined]
        "Blur 0.5 on face · Find it",
        "Blur 0.5 on face",
        "Black & white on background · Find it",
        "Black & white on background",
    ]
    ran = json.loads(report.read_text())["subtasks"]
    assert [s["tools"] for s in ran] == [["offline_finder", "region_adjust"]] * 2
    result = composite(read_layered(tmp_path / "out.ora"))[..., :3]
    chroma = np.hypot(*lab_exact(result / 255.0)[..., 1:].transpose(2, 0, 1))
    assert np.percentile(chroma[:100, :60], 95) < 2  # the flag in the corner: grey now
    assert chroma[330:400, 120:220].mean() > 30  # the orange suit: still orange
    face = result[80:150, 190:260].astype(float)
    detail = lambda a: np.abs(np.diff(a, axis=1)).mean()  # noqa: E731
    assert detail(face) < 0.5 * detail(photo[80:150, 190:260].astype(float))  # blurred
    steps = json.loads(report.read_text())["subtasks"]
    assert [s["params"]["op"] for s in steps] == ["blur", "black_and_white"]
    assert [s["kind"] for s in steps] == ["region_adjustment"] * 2


def test_looks_from_the_command_line_on_a_real_photo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """scikit-image's astronaut: 'make it look moody but keep the face unchanged' finds
    the face offline (its mask a hidden layer), keeps its pixels and makes the rest
    moody; 'make it night' is the paper's Changing Scenery, done offline by the night
    look (no diffusion model here): darker and bluer, the report naming the tool."""
    from PIL import Image

    from layerpath.kit.colours import lab_exact

    photo, image, steps, report = edit_astronaut(
        tmp_path, "make it look moody, but keep the face unchanged", capsys
    )
    finder, look = steps
    assert isinstance(look, PixelLayer)
    assert look.name == "Look: Moody 0.8 except face"
    assert isinstance(finder, PixelLayer) and not finder.visible  # the face's mask, hidden
    face = np.zeros(photo.shape[:2], bool)
    (x, y), (h, w) = finder.offset, finder.pixels.shape[:2]
    face[y : y + h, x : x + w] = finder.pixels[..., 3] > 0
    result = composite(read_layered(tmp_path / "out.ora"))[..., :3].astype(int)
    assert face.any() and np.array_equal(result[face], photo[face].astype(int))
    assert result[~face].mean() < photo[~face].astype(int).mean() - 3
    (step,) = json.loads(report.read_text())["subtasks"]
    assert step["params"] == {"op": "look", "look": "moody", "amount": 0.8, "outside": True}

    night = tmp_path / "night.png"
    code = main(["edit", str(image), "make it night", "-o", str(night), "--report", str(report)])
    assert code == 0, capsys.readouterr()
    (step,) = json.loads(report.read_text())["subtasks"]
    assert step["kind"] == "changing_scenery" and step["tools"] == ["scenery_look"]
    before, after = (lab_exact(p / 255.0) for p in (photo, np.asarray(Image.open(night))[..., :3]))
    assert after[..., 0].mean() < before[..., 0].mean() - 10  # darker
    assert after[..., 2].mean() < before[..., 2].mean() - 3  # bluer


def test_the_report_says_each_try_its_experts_and_why_and_reflection_can_be_turned_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'boost the saturation' on the astronaut: the plain step clips the suit's and the
    flag's colours (the aesthetics expert), the second try eases them into the gamut;
    with --no-reflection the fixed schedule's retry gets there too, and says so."""
    _, image, _, report = edit_astronaut(tmp_path, "boost the saturation", capsys)
    calls = [c for c in json.loads(report.read_text())["tool_calls"] if c["tool"] == "photo_adjust"]
    assert [(c["attempt"], c["passed"]) for c in calls] == [(1, False), (2, True)]
    turned = [e for e in calls[0]["experts"] if e["score"] < 0.5]
    assert [(e["expert"], e["by"]) for e in turned] == [("aesthetics", "checks")]
    assert "clipped" in turned[0]["reason"]
    assert calls[1]["params"]["protect"] is True and "ease the tones" in calls[1]["why"]
    (subtask,) = json.loads(report.read_text())["subtasks"]
    assert {e["expert"] for e in subtask["experts"]} == {"meaning", "aesthetics"}
    fixed = tmp_path / "fixed.json"
    args = ["edit", str(image), "boost the saturation", "-o", str(tmp_path / "fixed.ora")]
    assert main([*args, "--report", str(fixed), "--no-reflection"]) == 0
    calls = [c for c in json.loads(fixed.read_text())["tool_calls"] if c["tool"] == "photo_adjust"]
    assert [c["why"] for c in calls[1:]] == ["the tool's retry 1: protect True"]


def test_a_runs_colour_steps_export_as_a_cube_lut_another_program_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'make it warmer and add a vignette' with --cube: the .cube holds the warmth and not
    the vignette (it depends on where a pixel lies: said by name). colour-science, a
    reader layerpath does not share, reads the file and applies it to the astronaut: the
    picture is what 'make it warmer' alone makes, within a level on average. A run with
    no colour step writes no LUT and says why; a --cube that is not a .cube is refused
    before any tool runs."""
    import colour
    from PIL import Image
    from skimage import data

    from layerpath.engine.execute.executor import Engine
    from layerpath.engine.types import EditRequest, Snapshot
    from layerpath.tools.registry import Registry

    photo = data.astronaut()
    image = tmp_path / "astronaut.png"
    Image.fromarray(photo).save(image)
    cube = tmp_path / "warm.cube"
    code = main(
        [
            "edit",
            str(image),
            "make it warmer and add a vignette",
            "-o",
            str(tmp_path / "o.ora"),
            "--cube",
            str(cube),
        ]  # fmt: skip
    )
    captured = capsys.readouterr()
    assert code == 0 and "LUT of: Temperature" in captured.out
    assert "left out of the LUT: Vignette" in captured.err
    lut = colour.read_LUT(str(cube))
    assert isinstance(lut, colour.LUT3D) and lut.size == 33
    through = np.clip(np.rint(lut.apply(photo / 255.0) * 255.0), 0, 255).astype(int)
    rgba = np.dstack([photo, np.full(photo.shape[:2], 255, np.uint8)])
    warmer = Engine(Registry.from_catalogue()).run(
        EditRequest("make it warmer", Snapshot(rgba, {}))
    )
    diff = np.abs(through - warmer.image[..., :3].astype(int))
    assert diff.mean() <= 1.0 and np.percentile(diff, 99) <= 3
    assert np.abs(through - photo.astype(int)).mean() > 3  # (the warmth is in it)

    none = tmp_path / "none.cube"
    code = main(
        ["edit", str(image), "add a vignette", "-o", str(tmp_path / "v.ora"), "--cube", str(none)]
    )
    assert code == 1 and not none.exists()
    assert "no LUT written" in capsys.readouterr().err
    assert main(["edit", str(image), "make it warmer", "-o", str(tmp_path / "w.ora"),
                 "--cube", str(tmp_path / "warm.png")]) == 2  # fmt: skip
    assert "--cube writes a .cube file" in capsys.readouterr().err


@pytest.mark.parametrize("asked", [["--version"], ["--help"], ["edit", "--help"], ["batch"]])
def test_help_version_and_a_mistake_answer_before_the_engine_is_imported(asked: list[str]) -> None:
    """`layerpath --version`, `--help`, a command's help and a command missing its
    arguments are answered from the arguments alone: in a fresh interpreter, neither the
    engine nor numpy is imported when the answer comes (they took a second to load)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from layerpath.plugin.app import main\n"
        "try:\n"
        f"    main({asked!r})\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('layerpath.engine', 'numpy')))\n"
        "print('LOADED', heavy, code, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert "LOADED [] " in done.stderr, done.stderr[-800:]
    code = done.stderr.rsplit(" ", 1)[-1].strip()
    assert code == ("2" if asked == ["batch"] else "0")
    shown = done.stdout + done.stderr
    assert ("layerpath 0." in shown) if asked == ["--version"] else ("usage: layerpath" in shown)


def test_an_edit_does_not_import_the_batch_pool() -> None:
    """The command line an edit runs imports no batch worker pool (multiprocessing and
    its process pool: a fortieth of a second of every edit's start-up)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "import layerpath.plugin.cli\n"
        "print(sorted(m for m in sys.modules if m.startswith(('multiprocessing',"
        " 'layerpath.engine.hosts.batch', 'concurrent.futures.process'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr[-800:]


def test_the_command_leaves_quickly_with_its_work_done(tmp_path: Path) -> None:
    """`layerpath` (plugin/app.run) skips the modules' teardown but not what anyone could
    see: a thread still working is waited for, exit handlers run, the output is whole,
    and the exit status is main's."""
    import subprocess
    import sys

    probe = (
        "import atexit, pathlib, sys, threading, time\n"
        f"folder = pathlib.Path({str(tmp_path)!r})\n"
        "def late():  # (done once Python's exit has begun: the main thread stopped)\n"
        "    threading.main_thread().join()\n"
        "    time.sleep(0.2)\n"
        "    (folder / 'thread').write_text('done')\n"
        "threading.Thread(target=late).start()\n"
        "atexit.register(lambda: (folder / 'atexit').write_text('ran'))\n"
        "from layerpath.plugin import app\n"
        "sys.argv = ['layerpath'] + sys.argv[1:]\n"
        "app.run()\n"
        "(folder / 'after').write_text('never')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "tools"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "offline_finder" in done.stdout and done.stdout.endswith("\n")
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "after").exists()
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "layerpath",
            "edit",
            str(tmp_path / "missing.jpg"),
            "warmer",
            "-o",
            str(tmp_path / "out.jpg"),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "missing.jpg" in refused.stderr


def test_a_region_found_wrongly_is_refused_in_sentences_with_how_to_give_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'darken the sky' on scikit-image's cat (no sky): the command says why the sky it
    found is doubted, ends that sentence, then says how to give the region here."""
    from PIL import Image
    from skimage import data

    photo, out = tmp_path / "cat.png", tmp_path / "out.ora"
    Image.fromarray(data.chelsea()).save(photo)
    assert main(["edit", str(photo), "darken the sky", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "does not reach across the top of the photo" in err
    assert "kept as a hidden layer. Here: --mask sky=mask.png." in err
