"""`layerpath batch`: one instruction or saved action over many photos."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from layerpath.engine.hosts.batch import (
    SHEET,
    SUMMARY,
    BatchSpec,
    Progress,
    collect,
    run_batch,
)
from layerpath.engine.plan.references import parse_refs
from layerpath.engine.types import Mode
from layerpath.errors import BadInput, printable, shown
from layerpath.plugin.interrupts import Interrupts
from layerpath.settings import load_settings


def _bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="photo",
        file=sys.stderr,
        dynamic_ncols=True,
        disable=None,  # a bar on a terminal, lines otherwise (below)
    )


def cmd_batch(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise BadInput("--jobs must be at least 1.")
    if not 0.0 <= args.alpha <= 2.0:
        raise BadInput(f"--alpha {args.alpha} is outside 0..2 (0 = best quality, 2 = cheapest).")
    settings = load_settings()
    if args.rules:
        settings = settings.model_copy(update={"rules": args.rules})
    action = None
    if args.action is not None:
        from layerpath.engine.learn.rulebook import RuleBook
        from layerpath.tools.registry import Registry

        action = RuleBook(Registry.from_catalogue()).action(args.action).to_json()
    instruction = args.instruction.strip() if args.instruction is not None else None
    if instruction == "":
        raise BadInput("Say what to do to every photo, e.g. --instruction 'make it warmer'.")
    references = parse_refs(args.ref)
    spec = BatchSpec(
        instruction, action, args.format, args.alpha, Mode(args.mode), settings, references
    )
    items = collect(args.sources, args.out, args.format, args.masks, args.name)
    runner = None
    if args.ray:
        from layerpath.engine.hosts.cluster import ray_runner

        runner = ray_runner(args.ray, args.jobs)
    bar = _bar(len(items))
    quiet_bar = bar.disable

    def on_progress(progress: Progress) -> None:
        if progress.outcome is None:
            bar.update(progress.finished - bar.n)
            if progress.finished == progress.total:
                say(f"all {progress.total} photos were finished earlier; nothing to do")
            elif progress.finished:
                say(f"{progress.finished} of {progress.total} photos finished earlier; going on")
            return
        outcome = progress.outcome
        name = shown(Path(outcome.source).name, 200)
        if not outcome.ok:
            what = "partly done" if outcome.data is not None else "FAILED"
            say(f"{name}: {what}: {printable(outcome.message)}")
        elif quiet_bar:
            say(f"{name}: done in {outcome.seconds:.1f} s")
        bar.update(progress.finished - bar.n)
        if quiet_bar and progress.eta_s is not None:
            say(f"{progress.finished}/{progress.total}, about {progress.eta_s:.0f} s left")

    def say(text: str) -> None:
        if quiet_bar:
            print(text, file=sys.stderr, flush=True)
        else:
            bar.write(text, file=sys.stderr)

    with Interrupts(
        "stopping after the photos being edited (Ctrl-C again to stop at once); "
        "run the same command again to go on"
    ) as interrupts:
        try:
            report = run_batch(
                items,
                spec,
                args.out,
                jobs=args.jobs or 1,
                runner=runner,
                on_progress=on_progress,
                cancel=lambda: interrupts.asked,
            )
        finally:
            bar.close()
    out = args.out.expanduser().resolve()
    print(
        f"{report.done} done, {report.partial} partly done, {report.failed} failed"
        + (f", {report.skipped} finished earlier" if report.skipped else "")
        + f" of {report.total} photos in {report.seconds:.0f} s -> {out}"
        + f"\n  summary: {out / SUMMARY}\n  contact sheet: {out / SHEET}"
    )
    if report.cancelled:
        print("stopped: run the same command again to go on", file=sys.stderr)
        return 130
    return 0 if report.ok else 1
