"""The Krita plugin in real Krita (Debian's krita 5.1, PyQt5): the installer, the
selftest run through the docker's code path under kritarunner, the saved .kra read back
by Krita, and the docker in Krita's window under Xvfb."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest

from layerpath.engine.executor import Engine
from layerpath.engine.types import EditRequest
from layerpath.tools.registry import Registry
from tests.conftest import Scene

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / "installers" / "krita.py"
HERE = Path(__file__).parent
needs_krita = pytest.mark.skipif(
    shutil.which("kritarunner") is None, reason="Krita is not installed"
)


def install(tmp_path: Path) -> Path:
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
        ],
        check=True,
        capture_output=True,
    )
    return resource


def krita_env(tmp_path: Path, pythonpath: list[Path]) -> dict[str, str]:
    """Krita's Python finds layerpath in this test's own environment (as the env
    installer would place it) and the plugin's pykrita folder."""
    return {
        **os.environ,
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
    assert (resource / "actions" / "layerpath_krita.action").read_text().count("<Action name=") == 4
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
        "layerpath_krita/__init__.py",
        "layerpath_krita/env.py",
    } <= set(names)


@pytest.mark.krita
@needs_krita
def test_selftest_run_inside_krita_and_the_kra_reads_back(scene: Scene, tmp_path: Path) -> None:
    resource = install(tmp_path)
    image, masks = scene.save(tmp_path / "in")
    out = tmp_path / "out.kra"
    instruction = "remove the ball and recolor the wall to navy"
    env = krita_env(tmp_path, [resource / "pykrita", HERE])
    run = subprocess.run(
        [
            "kritarunner",
            "-s",
            "layerpath_selftest",
            str(image),
            instruction,
            str(out),
            f"ball={masks['ball']}",
            f"wall={masks['wall']}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = json.loads(Path(f"{out}.json").read_text())
    assert summary["ok"], (summary, run.stderr[-2000:])
    assert summary["steps"] == 4

    dump_path = tmp_path / "dump.json"
    subprocess.run(
        ["kritarunner", "-s", "kra_dump", str(out), str(dump_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    dump = json.loads(dump_path.read_text())
    w, h = dump["size"]
    nodes = dump["nodes"]
    group = next(n for n in nodes if n["type"] == "grouplayer")
    assert group["name"] == instruction
    steps = [n for n in nodes if n["depth"] == 1 and n["type"] == "paintlayer"]
    assert [s["name"].split(" — ")[0] for s in steps] == [
        "1. named_masks",
        "2. lab_recolor",
        "1. named_masks",
        "2. opencv_telea",
    ]
    assert [s["visible"] for s in steps] == [False, True, False, True]
    # step layers hold only their bounds
    fill = next(s for s in steps if "opencv_telea" in s["name"])
    assert fill["bounds"][2] < 100 and fill["bounds"][3] < 100
    # the user's layer is byte-identical to the input (BGRA on the wire)
    background = np.frombuffer(base64.b64decode(dump["background"]), np.uint8).reshape(h, w, 4)
    assert np.array_equal(background[..., [2, 1, 0, 3]], scene.image)
    # Krita's own projection of the saved file is what the engine made
    expected = (
        Engine(Registry.from_catalogue()).run(EditRequest(instruction, scene.snapshot())).image
    )
    projection = np.frombuffer(base64.b64decode(dump["projection"]), np.uint8).reshape(h, w, 4)[
        ..., [2, 1, 0, 3]
    ]
    assert np.abs(projection.astype(int) - expected.astype(int)).max() <= 2
    # the .kra remembers its run
    runs = json.loads(dump["annotation"])["runs"]
    assert [s["solved_by"] for s in runs[0]["subtasks"]] == ["rule:SR1", "rule:SR4"]
