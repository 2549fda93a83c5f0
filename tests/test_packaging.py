"""The install: the core runs without the opt-in packages (openai and keyring are the
`llm` extra), a feature that needs one says what to install, and the package is typed.
The missing packages are made missing for real in a fresh interpreter (sys.modules
entries of None: `import openai` raises ModuleNotFoundError, as when not installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

from tests.conftest import Scene

ROOT = Path(__file__).resolve().parents[1]
WITHOUT_LLM = """
import sys
sys.modules["openai"] = None
sys.modules["keyring"] = None
from layerpath.plugin.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_openai_and_keyring_are_an_extra_and_the_package_is_typed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"])
    assert "openai" not in core and "keyring" not in core
    assert {r.split(">")[0] for r in project["optional-dependencies"]["llm"]} == {
        "openai",
        "keyring",
    }
    assert (ROOT / "layerpath" / "py.typed").exists()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["layerpath"]


def test_the_core_edits_without_the_llm_extra_and_says_what_to_install(
    scene: Scene, tmp_path: Path
) -> None:
    image, _ = scene.save(tmp_path / "in")

    def run(*args: str, given: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", WITHOUT_LLM, *args],
            capture_output=True, text=True, input=given, cwd=tmp_path, timeout=300,
        )  # fmt: skip

    edited = run("edit", str(image), "make it warmer", "-o", str(tmp_path / "out.jpg"))
    assert edited.returncode == 0, edited.stderr
    assert (tmp_path / "out.jpg").exists()
    for args in (["plan", "remove the ball", "--planner", "llm"], ["config", "set-key", "--stdin"]):
        refused = run(*args, given="sk-x\n")
        assert refused.returncode == 2, refused.stderr
        assert "pip install 'layerpath[llm]'" in refused.stderr
        assert "Traceback" not in refused.stderr
    shown = run("config", "show")
    assert shown.returncode == 0 and "API key: none stored" in shown.stdout
