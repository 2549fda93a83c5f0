"""The `layerpath` command: `layerpath gui ...` opens the standalone editor; every other
command is the engine's CLI (which needs no Qt).

Scripted run, for demos and checks (works offscreen):

    layerpath gui IMAGE --mask NAME=PNG ... --run "instruction" --save OUT.ora \
        --screenshot OUT.png --exit
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from layerpath.plugin import cli_args

log = logging.getLogger("layerpath")


def _gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="layerpath gui", description="The layerpath editor.")
    parser.add_argument("image", type=Path, nargs="?")
    parser.add_argument("--mask", action="append", default=[], metavar="NAME=PNG")
    parser.add_argument(
        "--ref", action="append", default=[], metavar="NAME=FILE", help=cli_args.REF_HELP
    )
    parser.add_argument("--run", metavar="INSTRUCTION", help="type this and press Run")
    parser.add_argument("--alpha", type=float, default=None, help="slider position 0..2")
    parser.add_argument("--save", type=Path, help="save the document after the run")
    parser.add_argument(
        "--screenshot", type=Path, help="save a picture of the window after the run"
    )
    parser.add_argument(
        "--exit", action="store_true", help="quit after the run (exit 1 if it failed)"
    )
    return parser


def run_gui(argv: Sequence[str]) -> int:
    args = _gui_parser().parse_args(argv)
    from layerpath.engine.plan.references import parse_refs
    from layerpath.plugin import cli

    try:
        from layerpath.gui.qt import QtCore, QtWidgets
    except ImportError:
        print("error: the editor needs PyQt6: pip install 'layerpath[gui]'", file=sys.stderr)
        return 2
    from layerpath.gui.editor import EditorWindow
    from layerpath.settings import load_settings

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    window = EditorWindow(settings=load_settings())  # the engine the settings describe
    try:
        if args.image:
            window.open_file(args.image, cli._parse_masks(args.mask))
        for reference in parse_refs(args.ref).values():  # checked before the window shows
            window.panel.references.add_reference(reference)
    except cli.LayerpathError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    window.show()
    if args.alpha is not None:
        window.panel.slider.setValue(round(args.alpha * 10))
    outcome = {"code": 0}

    window.panel.learn_from()  # after every N runs, in a process of its own

    def finished(result: object) -> None:
        ok = result is not None and result.ok  # type: ignore[attr-defined]
        try:
            if args.save:
                window.save_file(args.save)
            if args.screenshot:
                QtWidgets.QApplication.processEvents()
                args.screenshot.parent.mkdir(parents=True, exist_ok=True)
                window.grab().save(str(args.screenshot))
        except cli.LayerpathError as exc:
            print(f"error: {exc}", file=sys.stderr)
            ok = False
        if not ok:
            print(f"error: {window.panel.message.text() or 'the run failed'}", file=sys.stderr)
        outcome["code"] = 0 if ok else 1
        if args.exit:
            app.exit(outcome["code"])

    if args.run:
        window.panel.run_finished.connect(finished)
        # --run runs it: the plan is shown (and in a --screenshot), then confirmed
        window.panel.plan_ready.connect(lambda _: window.panel.confirm_button.click())

        def click_run() -> None:
            window.panel.instruction.setPlainText(args.run)
            window.panel.run_button.click()

        QtCore.QTimer.singleShot(0, click_run)
    elif args.exit:
        QtCore.QTimer.singleShot(0, app.quit)
    code = app.exec()
    window.panel.controller.shutdown()
    return code or outcome["code"]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["gui"]:
        from layerpath.plugin.cli_log import setup_logging

        setup_logging()
        return run_gui(argv[1:])
    if argv[:1] != ["krita"]:  # (the installer reads its own options)
        args = cli_args.parser().parse_args(argv)  # --help, --version, mistakes: no engine yet
        if args.command == "batch" and (args.jobs or 1) > 1 and not args.ray:
            from layerpath.workers import start_early

            start_early()  # (its workers' engine loaded beside this process's)
        if args.command == "edit":  # its photo decoded while the engine is imported
            from layerpath import prefetch
            from layerpath.memory import reuse_freed_memory

            reuse_freed_memory()  # (before the first thread: a thread keeps the heap it got)
            prefetch.start(args.image)
    from layerpath.plugin import cli

    return cli.main(argv)


def run() -> None:
    """The `layerpath` command: main(), then Python's own exit work (the other threads
    joined, exit handlers run: logs flushed, temporary files removed), the output
    flushed, and out, without tearing down its ~550 modules one by one (45 ms of every
    command, which writes nothing). The editor closes the ordinary way: Qt saves its
    settings as its objects go."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv[:1] == ["gui"]:
        sys.exit(code)
    leave(code)


def leave(code: int) -> NoReturn:
    """Out of the process with `code` once what Python does at exit that anyone could
    see is done."""
    import atexit
    import os
    import threading

    threading._shutdown()  # type: ignore[attr-defined]  # (as Python's own exit does first)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # (a closed pipe: nobody is reading)
            pass
    os._exit(code)
