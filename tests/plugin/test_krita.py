"""The Krita plugin in real Krita (Debian's krita 5.1, PyQt5): the installer, the
selftest run through the docker's code path under kritarunner, the saved .kra read back
by Krita, and the docker in Krita's window under Xvfb."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image

from layerpath.engine.execute.deep import eight_bit
from layerpath.engine.execute.executor import Engine
from layerpath.engine.types import EditRequest, Snapshot
from layerpath.plugin.krita.pixels import to_rgba8, to_rgba16
from layerpath.tools.registry import Registry
from tests.conftest import Scene
from tests.overlapping import OTHERS, THREE_STEPS, others_alone

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / "installers" / "krita.py"
HERE = Path(__file__).parent
needs_krita = pytest.mark.skipif(
    shutil.which("kritarunner") is None, reason="Krita is not installed"
)


def install(tmp_path: Path, wheels: bool = False) -> Path:
    """The plugin installed into a resource folder of this test's (with the wheels it
    carries for installing from inside Krita only when asked: building them takes a
    few seconds)."""
    resource = tmp_path / "res"
    subprocess.run(
        [
            sys.executable,
            str(INSTALLER),
            "install",
            "--resource-dir",
            str(resource),
            "--kritarc",
            str(tmp_path / "kritarc"),
            *([] if wheels else ["--no-wheels"]),
        ],
        check=True,
        capture_output=True,
    )
    return resource


def krita_env(tmp_path: Path, pythonpath: list[Path]) -> dict[str, str]:
    """Krita's Python finds layerpath in this test's own environment (as the env
    installer would place it) and the plugin's pykrita folder. Virtual environments leave
    PATH: Krita's embedded Python would find a venv's python3 there and take its
    site-packages, hiding a missing environment."""
    path = os.pathsep.join(
        p
        for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and not (Path(p).parent / "pyvenv.cfg").exists()  # any virtual environment's bin
    )
    return {
        **{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
        "PATH": path,
        "HOME": str(tmp_path / "home"),
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath),
        "LAYERPATH_KRITA_ENV": sysconfig.get_paths()["purelib"],
    }


def test_install_and_package(tmp_path: Path) -> None:
    resource = install(tmp_path)
    assert (resource / "pykrita" / "layerpath_krita.desktop").exists()
    assert (resource / "pykrita" / "layerpath_krita" / "env.py").exists()
    assert (resource / "pykrita" / "layerpath_selftest.py").exists()
    listed = (resource / "actions" / "layerpath_krita.action").read_text()
    assert listed.count("<Action name=") == 14  # every action the docker registers
    assert all(f'<Action name="layerpath_action_{n}">' in listed for n in range(1, 10))
    assert "[python]\nenable_layerpath_krita=true" in (tmp_path / "kritarc").read_text()
    # installing again keeps other settings and does not duplicate the switch
    (tmp_path / "kritarc").write_text("[General]\nfoo=1\n[python]\nenable_layerpath_krita=false\n")
    install(tmp_path)
    text = (tmp_path / "kritarc").read_text()
    assert "foo=1" in text and text.count("enable_layerpath_krita") == 1 and "=true" in text
    out = tmp_path / "plugin.zip"
    subprocess.run(
        [sys.executable, str(INSTALLER), "package", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    names = zipfile.ZipFile(out).namelist()
    assert {
        "layerpath_krita.desktop",
        "layerpath_krita/",
        "layerpath_krita/__init__.py",
        "layerpath_krita/env.py",
        "layerpath_krita/bootstrap.py",
        "layerpath_krita/Manual.html",
    } <= set(names)
    carried = {Path(n).name.split("-")[0] for n in names if n.startswith("layerpath_krita/wheels/")}
    assert carried == {"layerpath", "pip"}  # (what it installs from inside Krita, and with)


def test_the_plugin_installs_its_packages_with_a_python_that_has_no_pip(tmp_path: Path) -> None:
    """From inside Krita the plugin installs layerpath for Krita's own Python: here a
    Python with no pip at all (a venv made --without-pip, as Krita's bundled Python on
    Windows and macOS has none) runs the plugin's bootstrap, which runs pip from the pip
    wheel the plugin carries and installs the layerpath wheel it carries (--no-deps: its
    packages would come from the package index) into the environment folder."""
    import venv

    resource = install(tmp_path, wheels=True)
    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    python = bare / "bin" / "python"
    target = tmp_path / "krita-env"
    module = resource / "pykrita" / "layerpath_krita" / "bootstrap.py"
    run = (
        "import importlib.util, sys; from pathlib import Path; "
        f"spec = importlib.util.spec_from_file_location('bootstrap', {str(module)!r}); "
        "b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b); "
        "assert b.problem() is None, b.problem(); "
        f"b.install(Path({str(target)!r}), print, ['--no-deps'])"
    )
    assert subprocess.run([str(python), "-c", "import pip"], capture_output=True).returncode != 0
    done = subprocess.run([str(python), "-c", run], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Successfully installed layerpath" in done.stdout
    assert (target / "layerpath" / "plugin" / "krita" / "docker.py").exists()
    # a failure is said with pip's own last lines
    broken = run.replace("['--no-deps']", "['--no-deps', '--no-such-option']")
    failed = subprocess.run(
        [str(python), "-c", broken], capture_output=True, text=True, timeout=600
    )
    assert failed.returncode != 0 and "pip could not install them" in failed.stderr


KRITA_IMPORTER = Path("/usr/share/krita/pykrita/plugin_importer/plugin_importer.py")


@pytest.mark.skipif(not KRITA_IMPORTER.exists(), reason="Krita's plugin importer is not here")
def test_krita_s_own_importer_takes_the_zip_the_installed_command_builds(
    tmp_path: Path,
) -> None:
    """`layerpath krita package` (the installed command, not the checkout's script)
    builds a zip that Krita's own Tools ▸ Scripts ▸ Import Python Plugin from File logic
    (Debian's krita package ships it) imports: the module, its manual, the shortcuts."""
    import builtins
    import importlib.util

    out = tmp_path / "layerpath-krita.zip"
    made = subprocess.run(
        [sys.executable, "-m", "layerpath", "krita", "package", "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    builtins.i18n = lambda text: text  # type: ignore[attr-defined]  # Krita defines it
    spec = importlib.util.spec_from_file_location("krita_plugin_importer", KRITA_IMPORTER)
    assert spec is not None and spec.loader is not None
    importer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(importer)
    resources = tmp_path / "resources"
    resources.mkdir()
    imported = importer.PluginImporter(str(out), str(resources), lambda plugin: True).import_all()
    assert [plugin["name"] for plugin in imported] == ["layerpath_krita"]
    module = resources / "pykrita" / "layerpath_krita"
    assert (module / "__init__.py").exists() and (module / "Manual.html").exists()
    assert (resources / "actions" / "layerpath_krita.action").exists()
    desktop = (resources / "pykrita" / "layerpath_krita.desktop").read_text()
    assert "X-Krita-Manual=Manual.html" in desktop


def selftest(tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    """`kritarunner -s layerpath_selftest IN INSTRUCTION OUT [...]` with the plugin
    installed as a user installs it: the summary it writes beside OUT, and what it said
    on stderr."""
    resource = install(tmp_path)
    run = subprocess.run(
        ["kritarunner", "-s", "layerpath_selftest", *args],
        env=krita_env(tmp_path, [resource / "pykrita", HERE]),
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary: dict[str, Any] = json.loads(Path(f"{args[2]}.json").read_text())
    return summary, run.stderr


def edit_in_krita(
    tmp_path: Path, photo: Path, instruction: str, masks: Sequence[str] = ()
) -> dict[str, Any]:
    """One instruction (with NAME=MASK.png selection masks) through the docker's code
    path under kritarunner (the selftest), then the saved .kra as Krita reads it back
    (kra_dump), the user's layer and Krita's projection decoded to RGBA arrays, and the
    selftest's summary."""
    out = tmp_path / "out.kra"
    summary, said = selftest(tmp_path, str(photo), instruction, str(out), *masks)
    assert summary["ok"], (summary, said[-2000:])
    dump = krita_dump(tmp_path, out)
    w, h = dump["size"]
    for key in ("background", "projection"):  # as 8-bit RGBA, and at 16 bits
        data = base64.b64decode(dump[key])
        dump[key] = to_rgba8(data, dump["depth"], w, h)
        dump[f"{key}16"] = to_rgba16(data, dump["depth"], w, h)
    dump["summary"] = summary
    return dump


def krita_dump(tmp_path: Path, path: Path, hide: Sequence[str] = ()) -> dict[str, Any]:
    """A file as real Krita reads it back (kra_dump under kritarunner), with the picture
    with each layer named in `hide` hidden in turn."""
    dump_path = tmp_path / "dump.json"
    subprocess.run(
        ["kritarunner", "-s", "kra_dump", str(path), str(dump_path), *hide],
        env=krita_env(tmp_path, [HERE]),
        capture_output=True,
        timeout=300,
    )
    dump: dict[str, Any] = json.loads(dump_path.read_text())
    return dump


def mask_file(path: Path, region: np.ndarray) -> Path:
    Image.fromarray(region.astype(np.uint8) * 255).save(path)
    return path


def engine_image(
    instruction: str, snapshot: Snapshot, references: dict[str, Any] | None = None
) -> np.ndarray:
    request = EditRequest(instruction, snapshot, references=references or {})
    return Engine(Registry.from_catalogue()).run(request).image


@pytest.mark.krita
@needs_krita
def test_selftest_run_inside_krita_and_the_kra_reads_back(scene: Scene, tmp_path: Path) -> None:
    image, masks = scene.save(tmp_path / "in")
    instruction = "detect the ball, remove the ball and recolor the wall to navy"
    named = [f"ball={masks['ball']}", f"wall={masks['wall']}"]
    dump = edit_in_krita(tmp_path, image, instruction, named)
    assert dump["summary"]["steps"] == 5
    w, h = dump["size"]
    nodes = dump["nodes"]
    group = next(n for n in nodes if n["type"] == "grouplayer")
    assert group["name"] == instruction
    below = nodes[nodes.index(group) + 1 :]  # the group's children, to the next top layer
    steps = below[: next((i for i, n in enumerate(below) if n["depth"] == 0), len(below))]
    assert [(s["name"], s["type"], s["visible"]) for s in steps] == [
        # the detection: outlines on a paint layer (kritarunner has no active view, which
        # Krita 5.1's addShapesFromSvg needs; the window test checks the vector layer)
        ("Find ball · Your mask or selection", "paintlayer", True),
        ("Recolour wall to navy · Your mask or selection", "selectionmask", False),
        ("Recolour wall to navy", "paintlayer", True),
        ("Remove ball · Your mask or selection", "selectionmask", False),
        ("Remove ball", "paintlayer", True),
    ]
    # step layers hold only their bounds
    fill = steps[4]
    assert fill["bounds"][2] < 100 and fill["bounds"][3] < 100
    # a mask step selects exactly the mask's pixels
    ball = scene.masks["ball"]
    ys, xs = np.nonzero(ball)
    ball_selection = steps[3]["selection"]
    assert ball_selection[4] == int(ball.sum())
    assert ball_selection[:2] == [int(xs.min()), int(ys.min())]
    # the detection's rectangle sits on the ball's box
    bx, by, bw, bh = steps[0]["bounds"]
    assert abs(bx - xs.min()) <= 3 and abs(by - ys.min()) <= 3
    assert abs(bw - (xs.max() + 1 - xs.min())) <= 6 and abs(bh - (ys.max() + 1 - ys.min())) <= 6
    # the user's layer is byte-identical to the input (BGRA on the wire)
    assert np.array_equal(dump["background"], scene.image)
    # Krita's own projection of the saved file is what the engine made
    expected = engine_image(instruction, scene.snapshot())
    projection = dump["projection"]
    outline = np.zeros((h, w), dtype=bool)  # the visible detection rectangle
    outline[by - 2 : by + bh + 2, bx - 2 : bx + bw + 2] = True
    outline[by + 4 : by + bh - 4, bx + 4 : bx + bw - 4] = False
    assert np.abs(projection.astype(int) - expected.astype(int))[~outline].max() <= 2
    assert np.abs(projection.astype(int) - expected.astype(int))[outline].max() > 50
    # the .kra remembers its run
    runs = json.loads(dump["annotation"])["runs"]
    assert [s["solved_by"] for s in runs[0]["subtasks"]][1:] == ["rule:SR1", "rule:SR4"]
    assert [s["tools"] for s in runs[0]["subtasks"]] == [  # (the tools: the record's)
        ["named_masks"],
        ["named_masks", "lab_recolor"],
        ["named_masks", "patch_fill"],
    ]


@pytest.mark.krita
@needs_krita
def test_a_kra_whose_run_starts_with_a_selection_mask_reopens_in_kritas_runner(
    scene: Scene, tmp_path: Path
) -> None:
    """Each subtask's mask a hidden selection mask in the run's group, the first of them
    the group's bottom child (a .kra like this was once seen to hang Krita's runner on
    opening): the saved .kra opens again headless (kra_dump's run is bounded), with its
    masks and layers where they were, and Krita's projection is what the engine made."""
    image, masks = scene.save(tmp_path / "in")
    instruction = "remove the ball and recolor the wall to navy"
    dump = edit_in_krita(
        tmp_path, image, instruction, [f"ball={masks['ball']}", f"wall={masks['wall']}"]
    )
    nodes = dump["nodes"]
    below = nodes[[n["type"] for n in nodes].index("grouplayer") + 1 :]
    assert [n["type"] for n in below] == [
        "selectionmask", "paintlayer", "selectionmask", "paintlayer"
    ]  # fmt: skip
    expected = engine_image(instruction, scene.snapshot())
    assert np.abs(dump["projection"].astype(int) - expected.astype(int)).max() <= 2


@pytest.mark.krita
@pytest.mark.skipif(
    shutil.which("krita") is None or shutil.which("xvfb-run") is None,
    reason="Krita or Xvfb is not installed",
)
def test_docker_runs_an_instruction_in_kritas_window(tmp_path: Path) -> None:
    """A fresh Krita profile with the plugin installed the way a user installs it: the
    docker appears in the window, a typed instruction runs on its worker thread, the
    steps land as layers, and the screenshot shows the edit and the panel."""
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "XDG_CONFIG_HOME")}
    for qt in ("QT_QPA_PLATFORM", "QT_QPA_PLATFORM_PLUGIN_PATH", "QT_PLUGIN_PATH"):
        env.pop(qt, None)  # Krita's own Qt, its window on Xvfb
    env["HOME"] = str(home)
    subprocess.run(
        [sys.executable, str(INSTALLER), "install"], env=env, check=True, capture_output=True
    )
    assert (home / ".local/share/krita/pykrita/layerpath_krita/__init__.py").exists()
    image = tmp_path / "coffee.png"
    shutil.copy(ROOT / "examples" / "coffee.png", image)
    instruction = "replace the sign text with OPEN"
    env.update(
        LAYERPATH_KRITA_ENV=sysconfig.get_paths()["purelib"],
        LAYERPATH_KRITA_INSTRUCTION=instruction,
    )
    # (Pillow's RAQM text layout bound to Krita's own HarfBuzz once made font matching
    # crash about one run in four; kit/fonts.py lays text out without it in such a host.)
    shot = tmp_path / "shot.png"
    env["LAYERPATH_KRITA_SCREENSHOT"] = str(shot)
    krita = subprocess.run(
        ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "krita", "--nosplash", str(image)],
        env=env,
        capture_output=True,
        text=True,
        timeout=420,
    )
    assert shot.with_suffix(".json").exists(), krita.stderr[-3000:]
    seen = json.loads(shot.with_suffix(".json").read_text())
    assert seen["docker"] and seen["docker_title"] == "layerpath" and seen["panel"], seen
    assert "crashed" not in krita.stderr, krita.stderr[-3000:]
    # the plan was shown before it ran, in plain words, and then run as shown
    assert seen["plan"] == [
        [
            "Text Replacement 'text' -> 'OPEN'",
            "Read the text → Write the new text",
            "planned",
            seen["plan"][0][3],
        ]
    ]
    assert seen["plan_shot"] and (tmp_path / "shot-plan.png").stat().st_size > 0
    assert seen["run"]["ok"], (seen["run"], seen.get("picture_read"))  # not cut short
    assert seen["run"]["tools"][:3] == ["rapidocr", "text_fill_erase", "pillow_text_write"]
    assert seen["layers"] == [
        ["Background", "paintlayer"],
        [instruction, "grouplayer"],  # one group for the run, its steps inside in order
        ["Text: OPEN · Read the text", "vectorlayer"],  # the text's box, a rectangle shape
        ["Text: OPEN · Erase the text (plain)", "paintlayer"],
        ["Text: OPEN", "paintlayer"],  # (named in a photographer's words)
    ]
    # the rectangle is on the sign's text, in pixels (Krita keeps shapes in points)
    x, y, w, h = seen["vector_bounds"][0]
    assert abs(x - 454) <= 4 and abs(y - 34) <= 4 and abs(w - 131) <= 6 and abs(h - 31) <= 6
    assert seen["saved"] and seen["kra"] and shot.with_suffix(".kra").stat().st_size > 0

    # the screenshot: the canvas shows the new sign text, the docker shows the panel.
    # (Read at OCR's one-pass size: a window's dozens of lines each read again at full
    # size took two minutes of this test.)
    from layerpath.tools.ocr import COARSE_SIDE, read_text

    window = Image.open(shot).convert("RGBA")
    assert window.height > 600 and window.width > 800
    scale = COARSE_SIDE / max(window.size)
    small = window.resize((round(window.width * scale), round(window.height * scale)))
    boxes = read_text(np.asarray(small))
    big = {box.text for box in boxes if box.box.height >= 20 * scale}  # not thumbnails
    assert "OPEN" in big and "CLOSED" not in big, big
    assert {"What should change?", "layerpath", "1/1 done in"} <= {
        box.text[:11] if box.text.startswith("1/1 done") else box.text for box in boxes
    }


@pytest.mark.krita
@needs_krita
def test_background_removal_is_a_cut_out_layer_in_krita(tmp_path: Path) -> None:
    """The step is a destination-in paint layer in a pass-through group: Krita's own
    projection shows the subject alone, the user's layer is untouched."""
    from tests.tools.test_background import portrait

    image, disk = portrait()
    photo = tmp_path / "portrait.png"
    Image.fromarray(image).save(photo)
    dump = edit_in_krita(tmp_path, photo, "remove the background")
    group = next(n for n in dump["nodes"] if n["type"] == "grouplayer")
    (step,) = [n for n in dump["nodes"] if n["depth"] == 1]
    assert group["pass_through"] and step["blend"] == "destination-in"
    assert np.array_equal(dump["background"], image)
    alpha = dump["projection"][..., 3]
    expected = engine_image("remove the background", Snapshot(image, {}))
    assert np.abs(alpha.astype(int) - expected[..., 3]).max() <= 2
    assert alpha[disk].mean() > 245 and alpha[0].max() == 0


@pytest.mark.krita
@needs_krita
def test_a_16_bit_document_gets_its_recolour_at_16_bits_in_krita(tmp_path: Path) -> None:
    """A smooth 16-bit sky (finer than 8 bits can hold) opened in Krita as a 16-bit
    document, a band recoloured teal through the docker's code path: the step layer is
    written from the recolour worked out at 16 bits, so Krita's projection keeps far more
    than 256 levels across the band, agrees with the engine's 8-bit result, and is the
    photo's own values outside it."""
    import tifffile
    from skimage.color import deltaE_ciede2000, rgb2lab

    h, w = 120, 640
    ramp = np.linspace(12000, 52000, w)[None, :].repeat(h, axis=0)
    deep = np.rint(np.stack([ramp * 0.55, ramp * 0.7, ramp, np.full_like(ramp, 65535)], axis=2))
    deep = deep.astype(np.uint16)
    photo = tmp_path / "sky.tif"
    tifffile.imwrite(photo, deep[..., :3], photometric="rgb")
    band = np.zeros((h, w), bool)
    band[30:90, 60:580] = True
    mask = mask_file(tmp_path / "band.png", band)
    instruction = "recolor the band to teal"
    dump = edit_in_krita(tmp_path, photo, instruction, [f"band={mask}"])
    assert dump["depth"] == "U16"
    assert np.array_equal(dump["background16"], deep)  # the user's layer, all 16 bits
    projection = dump["projection16"]
    row = projection[60, 100:540, 1].astype(int)
    assert len(np.unique(row)) > 300 and np.any(row % 257 != 0)  # not 8-bit steps
    assert np.array_equal(projection[~band], deep[~band])
    expected = engine_image(instruction, Snapshot(eight_bit(deep), {"band": band}, deep=deep))
    # the colour the checks accepted at 8 bits: under a just noticeable difference (the
    # 16-bit recolour converts to Lab exactly, the 8-bit one through OpenCV's tables)
    difference = deltaE_ciede2000(
        rgb2lab(projection[band][:, :3] / 65535.0), rgb2lab(expected[band][:, :3] / 255.0)
    )
    assert difference.max() < 2.3
    assert np.abs(expected[band][:, 1].astype(int) - eight_bit(deep)[band][:, 1]).mean() > 10


@pytest.mark.krita
@needs_krita
def test_a_named_colour_is_converted_into_a_krita_documents_profile(tmp_path: Path) -> None:
    """A photo in a wide colour space (ClayRGB, Krita's Adobe RGB) opened in Krita: the
    docker reads the document's profile, so "red" is red in that space, as the CLI makes
    it for the same file, not sRGB's red values."""
    profile_path = Path("/usr/share/color/icc/krita/ClayRGB-elle-V2-g22.icc")
    if not profile_path.exists():
        pytest.skip("Krita's ClayRGB profile is not installed")
    profile = profile_path.read_bytes()
    h, w = 96, 128
    rng = np.random.default_rng(3)
    grey = np.clip(rng.normal(150, 6, (h, w, 1)), 0, 255).repeat(3, axis=2).astype(np.uint8)
    image = np.concatenate([grey, np.full((h, w, 1), 255, np.uint8)], axis=2)
    photo = tmp_path / "wall.png"
    Image.fromarray(image[..., :3]).save(photo, icc_profile=profile)
    wall = np.zeros((h, w), bool)
    wall[16:80, 20:108] = True
    mask = mask_file(tmp_path / "wall-mask.png", wall)
    instruction = "recolor the wall to red"
    dump = edit_in_krita(tmp_path, photo, instruction, [f"wall={mask}"])
    assert np.array_equal(dump["background"], image)
    projection = dump["projection"].astype(int)
    in_clay = engine_image(instruction, Snapshot(image, {"wall": wall}, icc_profile=profile))
    as_srgb = engine_image(instruction, Snapshot(image, {"wall": wall}))
    assert np.abs(projection - in_clay).max() <= 2
    assert np.abs(projection[wall] - as_srgb[wall].astype(int)).max() > 10


@pytest.mark.krita
@needs_krita
def test_a_saved_action_runs_from_the_actions_tab_in_krita(scene: Scene, tmp_path: Path) -> None:
    """An action saved in this profile (a wall recoloured navy by lab_recolor) is listed
    in the docker's Actions tab inside Krita and runs from there on a document whose wall
    mask has another name: Krita's projection is the engine's recolour."""
    from layerpath.engine.execute.subroutines import Rule
    from layerpath.engine.learn.actions import Action
    from layerpath.engine.learn.rulebook import RuleBook
    from layerpath.engine.types import SubtaskKind

    part = Rule(
        id="navy wall",
        subtask=SubtaskKind.OBJECT_RECOLORATION,
        tools=["named_masks", "lab_recolor"],
        source="user",
        params=[{}, {"lightness": 0.85}],  # (what a run that made the wall navy passed with)
        target="wall",
        to="navy",
    )
    RuleBook(Registry.from_catalogue()).save_action(Action("navy wall", (part,)))
    image, masks = scene.save(tmp_path / "in")
    dump = edit_in_krita(tmp_path, image, "action:navy wall", [f"plaster={masks['wall']}"])
    assert dump["summary"]["steps"] == 2
    assert np.array_equal(dump["background"], scene.image)
    expected = engine_image("recolor the wall to navy", scene.snapshot())
    assert np.abs(dump["projection"].astype(int) - expected.astype(int)).max() <= 2


@pytest.mark.krita
@needs_krita
def test_after_a_run_in_krita_learning_starts_in_its_own_python(
    scene: Scene, tmp_path: Path, isolated_dirs: Path
) -> None:
    """With learn_every 1, a run through the docker's code path starts `layerpath learn`
    in a process of its own: Krita's embedded Python is not an interpreter to start, so
    the Python of the same version on PATH runs it, with layerpath's environment."""
    import time

    from layerpath.settings import Settings, save_settings

    save_settings(Settings(learn_every=1))
    image, masks = scene.save(tmp_path / "in")
    edit_in_krita(tmp_path, image, "recolor the wall to navy", [f"wall={masks['wall']}"])
    rules = isolated_dirs / "data" / "rules.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not rules.exists():
        time.sleep(0.5)
    assert json.loads(rules.read_text())["learned_at_runs"] == 1, (
        isolated_dirs / "data" / "learning.log"
    ).read_text()


@pytest.mark.krita
@needs_krita
def test_upscaling_grows_krita_canvas_and_keeps_the_users_layer(
    scene: Scene, tmp_path: Path
) -> None:
    image, _ = scene.save(tmp_path / "in")
    dump = edit_in_krita(tmp_path, image, "upscale 2x")
    h, w = scene.image.shape[:2]
    assert dump["size"] == [w * 2, h * 2]
    assert dump["nodes"][0]["bounds"] == [0, 0, w, h]  # its pixels and place, on more canvas
    background = dump["background"]
    assert np.array_equal(background[:h, :w], scene.image) and not background[h:].any()
    expected = engine_image("upscale 2x", scene.snapshot())
    assert np.abs(dump["projection"].astype(int) - expected).max() <= 1


@pytest.mark.krita
@needs_krita
def test_outpainting_left_moves_the_canvas_origin_in_krita(scene: Scene, tmp_path: Path) -> None:
    image, _ = scene.save(tmp_path / "in")
    instruction = "extend the image to the left"
    dump = edit_in_krita(tmp_path, image, instruction)
    h, w = scene.image.shape[:2]
    pad = w // 4
    assert dump["size"] == [w + pad, h]
    assert dump["nodes"][0]["bounds"] == [pad, 0, w, h]  # the user's layer, moved with the edge
    expected = engine_image(instruction, scene.snapshot())
    assert np.abs(dump["projection"].astype(int) - expected).max() <= 1


@pytest.mark.krita
@needs_krita
def test_without_its_environment_the_plugin_says_what_to_run(tmp_path: Path) -> None:
    resource = install(tmp_path)
    empty = tmp_path / "no-env"
    empty.mkdir()
    env = krita_env(tmp_path, [resource / "pykrita", HERE])
    env["LAYERPATH_KRITA_ENV"] = str(empty)
    out = tmp_path / "problem.txt"
    subprocess.run(
        ["kritarunner", "-s", "missing_probe", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    problem = out.read_text(encoding="utf-8")
    assert "missing: layerpath" in problem
    assert "layerpath krita env" in problem and str(empty) in problem


@pytest.mark.krita
@needs_krita
def test_in_krita_the_docker_offers_the_install_and_krita_s_python_does_it(
    tmp_path: Path,
) -> None:
    """Real Krita, layerpath not installed for its Python: the docker says so and offers
    'Install layerpath for Krita'; the install runs with the Python beside Krita's (here
    Debian's, which has no pip: the carried pip wheel runs) and puts the carried layerpath
    wheel into the folder the plugin looks in (--no-deps: its packages would come from
    the package index, hundreds of MB)."""
    resource = install(tmp_path, wheels=True)
    target = tmp_path / "krita-env"
    env = krita_env(tmp_path, [resource / "pykrita", HERE])
    env["LAYERPATH_KRITA_ENV"] = str(target)
    out = tmp_path / "bootstrap.json"
    ran = subprocess.run(
        ["kritarunner", "-s", "bootstrap_probe", str(out)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.exists(), ran.stdout[-2000:] + ran.stderr[-2000:]
    said = json.loads(out.read_text(encoding="utf-8"))
    assert "missing: layerpath" in said["problem"] and said["cannot"] is None
    assert said["button"] == ["Install layerpath for Krita", True]
    assert "failure" not in said, said
    assert any("Successfully installed layerpath" in line for line in said["lines"]), said
    assert (target / "layerpath" / "plugin" / "krita" / "docker.py").exists()


def test_the_installed_package_carries_the_installer_and_the_plugin(tmp_path: Path) -> None:
    """A wheel of layerpath, installed into a folder of its own (no checkout beside it):
    its installer builds the plugin zip from the installed files alone."""
    wheels = tmp_path / "wheels"
    try:  # the build backend pyproject.toml asks for, here already (else pip fetches it)
        import setuptools

        here = int(setuptools.__version__.split(".")[0]) >= 77
    except ImportError:
        here = False
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
         *(["--no-build-isolation"] if here else []), "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         str(next(wheels.glob("layerpath-*.whl")))],
        check=True, capture_output=True,
    )  # fmt: skip
    installer = target / "layerpath" / "plugin" / "krita" / "installer.py"
    out = tmp_path / "from-wheel.zip"
    made = subprocess.run(
        [sys.executable, str(installer), "package", "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    names = set(zipfile.ZipFile(out).namelist())
    assert {"layerpath_krita/", "layerpath_krita/Manual.html", "layerpath_krita.action"} <= names
    # `krita env` from this installed copy: a wheel of its own files (layerpath is on no
    # package index), which pip installs into Krita's folder and which imports there
    repack = (
        "import importlib.util, sys; from pathlib import Path; "
        f"spec = importlib.util.spec_from_file_location('installer', {str(installer)!r}); "
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
        f"print(module.wheel_of_installed(Path({str(tmp_path)!r})))"
    )
    made = subprocess.run([sys.executable, "-c", repack], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    again = tmp_path / "krita-site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(again),
         made.stdout.strip()],
        check=True, capture_output=True,
    )  # fmt: skip
    probe = subprocess.run(
        [sys.executable, "-c", "import layerpath.plugin.cli_args as a, layerpath.settings.endpoints; "
         "print(a.__file__); a.parser().parse_args(['tools'])"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(again)},
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith(str(again))
    assert (
        again / "layerpath" / "plugin" / "krita" / "pykrita" / "layerpath_krita.desktop"
    ).exists()


@pytest.mark.krita
@needs_krita
def test_an_everyday_adjustment_without_a_mask_in_krita(tmp_path: Path) -> None:
    """scikit-image's astronaut in Krita, 'blur the face and make it warmer': the face
    found offline and blurred, the whole photo warmer, the user's layer untouched, the
    projection what the engine makes, and the .kra keeps each step's adjustment."""
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    instruction = "blur the face and make it warmer"
    dump = edit_in_krita(tmp_path, photo, instruction)
    assert np.array_equal(dump["background"][..., :3], data.astronaut())
    expected = engine_image(
        instruction, Snapshot(np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)]), {})
    )
    assert np.abs(dump["projection"].astype(int) - expected.astype(int)).max() <= 2
    (run,) = json.loads(dump["annotation"])["runs"]
    assert [(s["kind"], s["params"]["op"]) for s in run["subtasks"]] == [
        ("region_adjustment", "blur"),
        ("photo_adjustment", "temperature"),
    ]


@pytest.mark.krita
@needs_krita
@pytest.mark.parametrize(
    ("how", "others", "later"),
    [
        ("hide:0", "make it warmer and add a vignette", 2),
        ("hidenode:0", "make it warmer and add a vignette", 2),
        ("hide:1", "lift the shadows and add a vignette", 1),
        ("hide:2", "lift the shadows and make it warmer", 0),
    ],
)
def test_a_step_unticked_in_the_docker_is_undone_alone_in_krita(
    how: str, others: str, later: int, tmp_path: Path
) -> None:
    """'lift the shadows, make it warmer and add a vignette' in Krita, then each step in
    turn unticked in the docker's step list, or its layer hidden in Krita's own Layers
    docker (which tells a plug-in nothing: the docker looks twice a second): the later
    steps are made again from the picture beneath them, so Krita's projection (the
    saved .kra read back) is what the other two steps make alone, within 2 levels on
    average and 6 at the 99th percentile."""
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    dump = edit_in_krita(
        tmp_path, photo, "lift the shadows, make it warmer and add a vignette", [how]
    )
    assert dump["summary"]["remade"] == [later]
    rgba = np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])
    alone = engine_image(others, Snapshot(rgba, {}))
    diff = np.abs(dump["projection"][..., :3].astype(int) - alone[..., :3].astype(int))
    assert diff.mean() <= 2 and np.percentile(diff, 99) <= 6, (diff.mean(), np.percentile(diff, 99))
    whole = engine_image("lift the shadows, make it warmer and add a vignette", Snapshot(rgba, {}))
    assert np.abs(whole[..., :3].astype(int) - alone[..., :3].astype(int)).mean() > 2  # (it shows)


@pytest.mark.krita
@needs_krita
def test_krita_opens_an_ora_that_keeps_its_runs_as_the_picture_it_is(tmp_path: Path) -> None:
    """The command line's ORA carries its runs' record (layerpath/runs.json) beside the
    layers: Krita, which knows nothing of it, opens the file and shows the same picture
    (its projection is the ORA's merged picture) and the same layers."""
    from skimage import data

    from layerpath.engine.files.io import composite, read_layered
    from layerpath.plugin.cli import main

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    out = tmp_path / "out.ora"
    assert main(["edit", str(photo), "lift the shadows and make it warmer", "-o", str(out)]) == 0
    with zipfile.ZipFile(out) as archive:
        assert "layerpath/runs.json" in archive.namelist()
    dump = krita_dump(tmp_path, out)
    w, h = dump["size"]
    projection = to_rgba8(base64.b64decode(dump["projection"]), dump["depth"], w, h)
    ours = composite(read_layered(out))
    assert np.abs(projection.astype(int) - ours.astype(int)).max() <= 1
    assert [n["type"] for n in dump["nodes"]].count("paintlayer") == 3  # photo and 2 steps


@pytest.mark.krita
@needs_krita
def test_a_reference_added_in_the_docker_recolours_in_krita(scene: Scene, tmp_path: Path) -> None:
    """A swatch added in the docker's References: the wall takes its colour in Krita's
    projection, as the engine makes it, and the .kra's record says where it came from."""
    image, masks = scene.save(tmp_path / "in")
    chip = tmp_path / "chip.png"
    Image.fromarray(np.full((60, 80, 3), (46, 110, 140), np.uint8)).save(chip)
    instruction = "recolor the wall to the colour of swatch"
    dump = edit_in_krita(
        tmp_path, image, instruction, [f"wall={masks['wall']}", f"ref:swatch={chip}"]
    )
    from layerpath.engine.plan.references import parse_refs

    expected = engine_image(instruction, scene.snapshot(), parse_refs([f"swatch={chip}"]))
    assert np.abs(dump["projection"].astype(int) - expected.astype(int)).max() <= 2
    assert not np.array_equal(expected, scene.image)
    (run,) = json.loads(dump["annotation"])["runs"]
    (subtask,) = run["subtasks"]
    assert (subtask["to"], subtask["params"]["ref"]) == ("#2e6e8c", "swatch")
    assert run["references"][0]["colour"] == "#2e6e8c"


@pytest.mark.krita
@needs_krita
def test_a_crop_in_krita_keeps_every_pixel_of_the_users_layer(tmp_path: Path) -> None:
    """'crop to the face' on the astronaut: Krita's canvas becomes the face's frame, the
    user's layer keeps all its pixels (its bounds reach outside the canvas, so a larger
    canvas brings them back), and the projection is the engine's crop."""
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    instruction = "crop to the face"
    dump = edit_in_krita(tmp_path, photo, instruction)
    snapshot = Snapshot(np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)]), {})
    expected = engine_image(instruction, snapshot)
    h, w = expected.shape[:2]
    assert dump["size"] == [w, h] and w < 512 and h < 512
    x, y, bw, bh = dump["nodes"][0]["bounds"]
    assert (bw, bh) == (512, 512) and x < 0 and y < 0  # the whole photo, moved
    assert np.array_equal(dump["background"][..., :3], data.astronaut()[-y : -y + h, -x : -x + w])
    assert np.abs(dump["projection"].astype(int) - expected).max() <= 1


@pytest.mark.krita
@needs_krita
def test_the_docker_s_batch_dialog_runs_two_photos_at_once_inside_krita(
    scene: Scene, tmp_path: Path
) -> None:
    """Batch… in the docker, inside Krita, two photos at once: Krita's embedded Python
    cannot start worker processes, so the Python of the same version on PATH runs them;
    the results are the pixels `layerpath batch` makes outside Krita."""
    from layerpath.engine.files.io import composite, read_layered
    from layerpath.plugin.cli import main

    image, _ = scene.save(tmp_path / "in")
    photos = tmp_path / "photos"
    photos.mkdir()
    for n in range(3):
        (photos / f"shot{n}.png").write_bytes(image.read_bytes())
    job = {
        "photos": str(photos),
        "instruction": "make it warmer",
        "out": str(tmp_path / "k"),
        "jobs": 2,
    }
    out = tmp_path / "out.kra"
    summary, said = selftest(tmp_path, str(image), "batch:" + json.dumps(job), str(out))
    assert summary["ok"] and summary["done"] == 3, (summary, said[-2000:])
    assert summary["progress"] == [3, 3]
    assert main(["batch", str(photos), "-i", "make it warmer", "-o", str(tmp_path / "cli")]) == 0
    for n in range(3):
        inside = composite(read_layered(tmp_path / "k" / f"shot{n}.ora"))
        outside = composite(read_layered(tmp_path / "cli" / f"shot{n}.ora"))
        assert np.array_equal(inside, outside)


def _own_layers_ora(path: Path, photo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An ORA of the photo and a hidden sketch layer of the user's; their pixels."""
    from layerpath.engine.files.io import LayeredImage, PixelLayer, write_ora

    sketch = np.zeros((40, 60, 4), np.uint8)
    sketch[..., 0], sketch[..., 3] = 255, 200
    layers = [PixelLayer("photo", photo), PixelLayer("sketch", sketch, (30, 50), visible=False)]
    write_ora(LayeredImage(photo.shape[1], photo.shape[0], list(layers)), path)
    return photo, sketch


def _bgra(pixels: np.ndarray) -> str:
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(pixels[..., [2, 1, 0, 3]]).tobytes()).hexdigest()


@pytest.mark.krita
@needs_krita
def test_the_clis_kra_keeps_each_of_three_overlapping_steps_live_in_krita(
    tmp_path: Path,
) -> None:
    """`-o out.kra` (written without Krita), "lift the shadows, make it warmer and add a
    vignette": warmer is a Krita curves filter layer, the shadow lift and the vignette
    are layers of their own change (colour dodge, multiply), so hiding any one of the
    three in Krita itself, with no layerpath running, gives what the other two make
    alone (issue 29's bound: 2 levels mean, 6 at p99); the user's own layers come back
    as they were, and Krita's picture is ours."""
    from skimage import data

    from layerpath.plugin.cli import main

    photo = np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])
    source = tmp_path / "own.ora"
    _, sketch = _own_layers_ora(source, photo)
    out = tmp_path / "out.kra"
    instruction = THREE_STEPS
    assert main(["edit", str(source), instruction, "-o", str(out), "--no-traces"]) == 0
    alone = others_alone(source, tmp_path)
    with zipfile.ZipFile(out) as archive:
        merged = np.asarray(Image.open(io.BytesIO(archive.read("mergedimage.png"))))
        tree = ElementTree.fromstring(archive.read("maindoc.xml"))
    names = [node.get("name", "") for node in tree.iter("{http://www.calligra.org/DTD/krita}layer")]
    steps = {step: next(n for n in names if n.startswith(step)) for step in OTHERS}
    dump = krita_dump(tmp_path, out, list(steps.values()))
    w, h = dump["size"]
    nodes = {n["name"]: n for n in dump["nodes"]}
    assert nodes["photo"]["sha256"] == _bgra(photo)
    assert nodes["sketch"]["sha256"] == _bgra(sketch) and not nodes["sketch"]["visible"]
    temperature = nodes[steps["Temperature"]]
    assert temperature["type"] == "filterlayer" and temperature["filter"] == "perchannel"
    assert nodes[steps["Shadows"]]["blend"] == "dodge"
    assert nodes[steps["Vignette"]]["blend"] == "multiply"
    projection = to_rgba8(base64.b64decode(dump["projection"]), dump["depth"], w, h)
    off = np.abs(projection[..., :3].astype(int) - merged[..., :3].astype(int))
    assert off.mean() <= 1.0 and np.percentile(off, 99) <= 2, (off.mean(), off.max())
    for hidden, name in steps.items():
        seen = to_rgba8(base64.b64decode(dump["hidden"][name]), dump["depth"], w, h)
        diff = np.abs(seen[..., :3].astype(int) - alone[hidden][..., :3].astype(int))
        assert diff.mean() <= 2.0 and np.percentile(diff, 99) <= 6, (hidden, diff.mean())
        # and hiding it changed the picture: the step was live, not baked in
        assert np.abs(seen[..., :3].astype(int) - projection[..., :3].astype(int)).mean() > 1
    # the same run as a PSD (no options): Krita reads its multiply and colour dodge layers
    psd = tmp_path / "out.psd"
    assert main(["edit", str(source), instruction, "-o", str(psd), "--no-traces"]) == 0
    dump = krita_dump(tmp_path, psd, [steps["Vignette"]])
    nodes = {n["name"]: n for n in dump["nodes"]}
    assert nodes[steps["Shadows"]]["blend"] == "dodge"
    projection = to_rgba8(base64.b64decode(dump["projection"]), dump["depth"], w, h)
    off = np.abs(projection[..., :3].astype(int) - merged[..., :3].astype(int))
    assert off.mean() <= 1.0 and np.percentile(off, 99) <= 2, (off.mean(), off.max())
    seen = to_rgba8(base64.b64decode(dump["hidden"][steps["Vignette"]]), dump["depth"], w, h)
    diff = np.abs(seen[..., :3].astype(int) - alone["Vignette"][..., :3].astype(int))
    assert diff.mean() <= 2.0 and np.percentile(diff, 99) <= 6


@pytest.mark.krita
@needs_krita
def test_the_dockers_kra_keeps_its_steps_live_once_reopened(tmp_path: Path) -> None:
    """ "lift the shadows, make it warmer and add a vignette" run through the docker's
    code path: warmer becomes a Krita curves filter layer and the shadow lift and the
    vignette layers of just their change, so the saved .kra, reopened by Krita alone
    (no layerpath), undoes just the step whose layer is hidden: each of the three hidden
    in turn gives what the other two make alone (issue 29's bound)."""
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    instruction = THREE_STEPS
    first = edit_in_krita(tmp_path, photo, instruction)
    nodes = {n["name"].split(" ")[0]: n for n in first["nodes"]}
    assert nodes["Temperature"]["type"] == "filterlayer"
    assert nodes["Temperature"]["filter"] == "perchannel"
    assert nodes["Shadows"]["blend"] == "dodge" and nodes["Vignette"]["blend"] == "multiply"
    rgba = np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])
    whole = engine_image(instruction, Snapshot(rgba, {}))
    off = np.abs(first["projection"][..., :3].astype(int) - whole[..., :3].astype(int))
    assert off.mean() <= 1.0 and np.percentile(off, 99) <= 3, (off.mean(), off.max())
    names = {step: nodes[step]["name"] for step in ("Shadows", "Temperature", "Vignette")}
    dump = krita_dump(tmp_path, tmp_path / "out.kra", list(names.values()))
    w, h = dump["size"]
    for step, name in names.items():
        seen = to_rgba8(base64.b64decode(dump["hidden"][name]), dump["depth"], w, h)
        alone = engine_image(OTHERS[step], Snapshot(rgba, {}))
        diff = np.abs(seen[..., :3].astype(int) - alone[..., :3].astype(int))
        assert diff.mean() <= 2.0 and np.percentile(diff, 99) <= 6, (step, diff.mean())


@pytest.mark.krita
@needs_krita
@pytest.mark.parametrize(
    ("made_by", "instruction", "others"),
    [
        (
            "docker",
            "make it warmer, boost the saturation and add a vignette",
            "boost the saturation and add a vignette",
        ),
        (
            "command line",
            "make it warmer, boost the saturation and add a vignette",
            "boost the saturation and add a vignette",
        ),
        ("docker", "make it warmer and brighten the face", "brighten the face"),
    ],
)
def test_a_reopened_kra_lists_its_steps_in_the_docker_and_remakes_them(
    made_by: str, instruction: str, others: str, tmp_path: Path
) -> None:
    """A run saved as a .kra by the docker or by `layerpath edit -o out.kra`, closed,
    and opened again in Krita: the docker lists the run's steps again (a found face's
    selection mask among them), and unticking Temperature makes the later steps again
    from the picture beneath them (the face found again; a vignette, live in Krita,
    stays as it is there), so Krita's projection is what the other steps make alone
    (issue 29's bound)."""
    from skimage import data

    from layerpath.plugin.cli import main

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    saved = tmp_path / "out.kra"
    if made_by == "docker":
        edit_in_krita(tmp_path, photo, instruction)
    else:
        assert main(["edit", str(photo), instruction, "-o", str(saved), "--no-traces"]) == 0
    again = tmp_path / "again.kra"
    summary, said = selftest(tmp_path, str(saved), "reopen", str(again), "hide:0")
    assert summary["ok"] and summary["steps"] == 3, (summary, said[-2000:])
    assert summary["remade"] == [2 if "vignette" in others else 1]
    dump = krita_dump(tmp_path, again)
    nodes = {n["name"].split(" ")[0]: n for n in dump["nodes"]}
    assert nodes["Temperature"]["visible"] is False
    if "vignette" in others:
        assert nodes["Vignette"]["blend"] == "multiply"
    w, h = dump["size"]
    seen = to_rgba8(base64.b64decode(dump["projection"]), dump["depth"], w, h)
    rgba = np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])
    alone = engine_image(others, Snapshot(rgba, {}))
    diff = np.abs(seen[..., :3].astype(int) - alone[..., :3].astype(int))
    assert diff.mean() <= 2.0 and np.percentile(diff, 99) <= 6, (diff.mean(), diff.max())
    whole = engine_image(instruction, Snapshot(rgba, {}))
    assert np.abs(whole[..., :3].astype(int) - alone[..., :3].astype(int)).mean() > 2


@pytest.mark.krita
@needs_krita
def test_a_step_unticked_before_a_crop_in_krita_is_undone_alone(tmp_path: Path) -> None:
    """ "lift the shadows, crop to 4:5 and add a vignette" in Krita, Shadows unticked in
    the docker: the crop and the vignette are made again in the cropped canvas, so
    Krita's picture is what the crop and the vignette make alone (issue 29's bound)."""
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    instruction = "lift the shadows, crop to 4:5 and add a vignette"
    dump = edit_in_krita(tmp_path, photo, instruction, ["hide:0"])
    assert dump["summary"]["remade"] == [2]
    rgba = np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])
    alone = engine_image("crop to 4:5 and add a vignette", Snapshot(rgba, {}))
    assert dump["projection"].shape == alone.shape == (512, 410, 4)
    diff = np.abs(dump["projection"][..., :3].astype(int) - alone[..., :3].astype(int))
    assert diff.mean() <= 2 and np.percentile(diff, 99) <= 6, (diff.mean(), diff.max())


@pytest.mark.krita
@needs_krita
def test_a_step_moved_in_kritas_layers_docker_applies_in_its_new_place(tmp_path: Path) -> None:
    """ "make it warmer and make it black and white" in Krita, then the Black & white
    layer moved below Temperature, as in Krita's Layers docker (which tells a plug-in
    nothing: the docker looks twice a second): the steps are made again in the new
    order, so Krita's picture is a warm-toned mono, what black and white then warmer
    make."""
    from skimage import data

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    dump = edit_in_krita(
        tmp_path, photo, "make it warmer and make it black and white", ["movenode:1"]
    )
    assert dump["summary"]["remade"] == [2]
    rgba = np.dstack([data.astronaut(), np.full((512, 512), 255, np.uint8)])
    alone = engine_image("make it black and white and make it warmer", Snapshot(rgba, {}))
    seen = dump["projection"][..., :3].astype(int)
    diff = np.abs(seen - alone[..., :3].astype(int))
    assert diff.mean() <= 2 and np.percentile(diff, 99) <= 6, (diff.mean(), diff.max())
    assert (seen[..., 0] - seen[..., 2]).mean() > 5  # warm-toned


@pytest.mark.krita
@needs_krita
def test_a_kra_whose_record_was_changed_lists_only_what_layerpath_made(tmp_path: Path) -> None:
    """The command line's .kra with its record changed as another program might. The run
    recorded twice (an older report first) and one step entry naming its layer by
    another name (as if it named another layer): the run is listed once, without that
    layer (2 steps, not 4 or 3). A step whose cost is not a number: the run is passed
    over, the docker goes on. The file's layers are all still there."""
    from skimage import data

    from layerpath.plugin.cli import main

    photo = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(photo)
    made = tmp_path / "made.kra"
    words = "make it warmer, boost the saturation and add a vignette"
    assert main(["edit", str(photo), words, "-o", str(made), "--no-traces"]) == 0
    with zipfile.ZipFile(made) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    key = "layerpath/annotations/layerpath"

    def reopened(change: Callable[[dict[str, Any]], None], name: str) -> dict[str, Any]:
        record = json.loads(files[key])
        change(record)
        path = tmp_path / f"{name}.kra"
        with zipfile.ZipFile(path, "w") as archive:
            for member, data_ in {**files, key: json.dumps(record).encode()}.items():
                kind = zipfile.ZIP_STORED if member == "mimetype" else zipfile.ZIP_DEFLATED
                archive.writestr(member, data_, compress_type=kind)
        return selftest(tmp_path, str(path), "reopen", str(tmp_path / f"{name}-again.kra"))[0]

    def twice_and_renamed(record: dict[str, Any]) -> None:
        record["runs"] = [{**record["runs"][0], "prompt": "an older record"}, record["runs"][0]]
        record["groups"] = record["groups"] * 2
        record["steps"][0] = {**record["steps"][0], "name": "Original"}

    def broken(record: dict[str, Any]) -> None:
        record["steps"][1] = {**record["steps"][1], "cost": "not a number"}

    summary = reopened(twice_and_renamed, "twice")
    assert summary["steps"] == 2, summary
    assert len(summary["layers"]) == 5  # (Original, the group, its three steps)
    summary = reopened(broken, "broken")
    assert summary["steps"] == 0 and len(summary["layers"]) == 5, summary


@pytest.mark.krita
@needs_krita
def test_the_clis_kra_of_a_16_bit_photo_opens_in_krita_at_16_bits(tmp_path: Path) -> None:
    import tifffile

    from layerpath.plugin.cli import main

    ramp = np.linspace(0, 65535, 96 * 80, dtype=np.float64).reshape(80, 96)
    deep = np.dstack([ramp, ramp[::-1], np.full_like(ramp, 30000)]).astype(np.uint16)
    photo = tmp_path / "deep.tif"
    tifffile.imwrite(photo, deep, photometric="rgb")
    out, flat = tmp_path / "out.kra", tmp_path / "flat.tif"
    for target in (out, flat):
        assert main(["edit", str(photo), "make it warmer", "-o", str(target), "--no-traces"]) == 0
    dump = krita_dump(tmp_path, out)
    assert dump["depth"] == "U16"
    w, h = dump["size"]
    background = to_rgba16(base64.b64decode(dump["background"]), dump["depth"], w, h)
    assert np.array_equal(background[..., :3], deep)  # the user's pixels, all 16 bits
    projection = to_rgba16(base64.b64decode(dump["projection"]), dump["depth"], w, h)
    warmed = np.asarray(tifffile.imread(flat))  # the same run, flattened at 16 bits
    off = np.abs(projection[..., :3].astype(int) - warmed[..., :3].astype(int)) / 257
    assert off.mean() <= 1.0 and off.max() <= 3, (off.mean(), off.max())
    assert np.abs(projection[..., :3].astype(int) - deep.astype(int)).mean() > 2 * 257
