"""What the command line says on the terminal, through the real `main` on the generated
scene: plain words by default (tools, routes and scores only with -v, which works after
the command too), nothing but failures with -q, numerical warnings and tracebacks in the
rotating log file in the data folder (the terminal gets one line naming it)."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import numpy as np
import pytest

from layerpath.plugin import cli
from layerpath.plugin.cli import main
from layerpath.plugin.cli_log import log_path, setup_logging
from tests.conftest import Scene


def _edit(scene: Scene, tmp_path: Path, *flags: str) -> list[str]:
    image, _ = scene.save(tmp_path / "in")
    return ["edit", str(image), "make it warmer", "-o", str(tmp_path / "out.ora"), *flags]


def test_the_terminal_speaks_in_words_and_v_after_the_command_adds_the_details(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_edit(scene, tmp_path)) == 0
    plain = capsys.readouterr()
    assert "done: layer 'Temperature +0.35'" in plain.err
    assert "q=" not in plain.err and " via " not in plain.err and "plan (" not in plain.err
    assert "1/1 subtasks done" in plain.out
    assert main(_edit(scene, tmp_path, "-v")) == 0  # (-v after the command)
    detailed = capsys.readouterr().err
    assert "q=0." in detailed and " via " in detailed and "plan (offline)" in detailed


def test_quiet_prints_nothing_when_all_is_well_and_failures_when_not(
    scene: Scene, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_edit(scene, tmp_path, "--quiet")) == 0
    said = capsys.readouterr()
    assert said.out == "" and said.err == ""
    image, _ = scene.save(tmp_path / "in2")
    report = tmp_path / "run.json"
    asked = ["-q", "edit", str(image), "remove the unicorn", "-o", str(tmp_path / "o.ora")]
    code = main([*asked, "--report", str(report)])
    failed = capsys.readouterr()
    assert code == 1 and failed.err.strip() and failed.out == ""
    # nothing was made, and the report asked for is written all the same
    assert not (tmp_path / "o.ora").exists()
    assert json.loads(report.read_text(encoding="utf-8"))["ok"] is False


def test_numerical_warnings_go_to_the_log_file_not_the_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = setup_logging()
    assert path == log_path() and path.parent.is_dir()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        np.array([0.0]) / np.array([0.0])  # invalid value encountered in divide
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert "RuntimeWarning" not in capsys.readouterr().err
    assert "invalid value encountered in divide" in path.read_text(encoding="utf-8")


def test_a_fault_is_one_line_naming_the_log_which_holds_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fault of layerpath's own (injected into `tools`): exit 70, one line that names
    the log file, and the traceback there; with -v the traceback on the terminal."""

    def broken(args: object) -> int:
        raise ZeroDivisionError("a fault injected by the test")

    monkeypatch.setattr(cli, "cmd_tools", broken)
    assert main(["tools"]) == 70
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(log_path()) in err
    assert "Traceback" not in err and "ZeroDivisionError" in err
    logged = log_path().read_text(encoding="utf-8")
    assert "Traceback" in logged and "a fault injected by the test" in logged
    with pytest.raises(ZeroDivisionError):
        main(["tools", "-v"])


def test_help_lists_the_editor_and_explains_edit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "gui" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["edit", "--help"])
    text = capsys.readouterr().out
    for said in ("examples:", "exit status:", "never changed", "everyday words", "fast-slow"):
        assert said in text


def test_bash_completes_commands_options_and_sub_commands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The script `layerpath completion bash` prints, sourced in a real bash: 'ed'
    completes to edit, 'edit ... --qu' to --quality and --quiet, 'config ' to its actions."""
    import shutil
    import subprocess

    assert main(["completion", "bash"]) == 0
    script = tmp_path / "layerpath.bash"
    script.write_text(capsys.readouterr().out, encoding="utf-8")
    bash = shutil.which("bash")
    assert bash is not None

    def completed(*words: str) -> list[str]:
        line = " ".join(words)
        probe = (
            f"source {script}; COMP_WORDS=(layerpath {line}); "
            f"COMP_CWORD={len(words)}; COMP_LINE='layerpath {line}'; COMP_POINT=${{#COMP_LINE}}; "
            '_shtab_layerpath; printf "%s\\n" "${COMPREPLY[@]}"'
        )
        done = subprocess.run([bash, "-c", probe], capture_output=True, text=True, timeout=60)
        return done.stdout.split()

    assert completed("ed") == ["edit"]
    assert set(completed("edit", "x.jpg", "'warmer'", "--qu")) == {"--quality", "--quiet"}
    assert set(completed("config", "''")) == {"show", "forget", "endpoint", "set-key", "delete-key"}
    assert main(["completion", "zsh"]) == 0 and "#compdef layerpath" in capsys.readouterr().out
