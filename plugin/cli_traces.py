"""`layerpath traces export|finetune`: what runs recorded, as training data for a planner."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from layerpath.engine.learn.traces import user_traces
from layerpath.engine.learn.trajectories import FORMATS, as_lines, export
from layerpath.errors import BadInput
from layerpath.files import check_output, write_atomically
from layerpath.plugin.cli_actions import rule_book


def add_parser(sub: Any) -> None:
    traces = sub.add_parser("traces", help="export what runs recorded as training data")
    action = traces.add_subparsers(dest="traces_command", required=True)
    export = action.add_parser("export", help="trajectories, chat examples or preference pairs")
    export.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl: a trajectory step per line; sft: chat examples of accepted paths; "
        "dpo: accepted over turned-down paths of one subtask",
    )
    export.add_argument("-o", "--out", required=True, type=Path, metavar="FILE")
    export.add_argument("--force", action="store_true", help="replace FILE if it exists")
    export.add_argument(
        "--min-reward", type=float, default=0.5, help="sft: the reward an example needs"
    )
    export.add_argument(
        "--weighted", action="store_true", help="sft: every accepted path, weighted by reward"
    )
    tune = action.add_parser("finetune", help="fine-tune a local model on an sft export")
    tune.add_argument("--data", required=True, type=Path, metavar="FILE")
    tune.add_argument("--model", required=True, type=Path, metavar="DIR")
    tune.add_argument("-o", "--out", required=True, type=Path, metavar="DIR")
    tune.add_argument("--force", action="store_true", help="write into DIR though it is not empty")
    tune.add_argument("--epochs", type=int, default=3, help="passes over the data, 1 to 100")
    tune.add_argument("--learning-rate", type=float, default=5e-4)


def cmd_traces(args: Any) -> int:
    if args.traces_command == "finetune":
        from layerpath.plugin.finetune import finetune

        if not 0.0 < args.learning_rate <= 1.0:
            raise BadInput(f"--learning-rate {args.learning_rate} is outside 0..1.")
        summary = finetune(
            args.data, args.model, args.out, args.epochs, args.learning_rate, replace=args.force
        )
        losses = summary["losses"]
        print(
            f"fine-tuned on {summary['examples']} examples, loss {losses[0]:.3f} -> "
            f"{losses[-1]:.3f} -> {args.out}"
        )
        return 0
    if not math.isfinite(args.min_reward):
        raise BadInput(f"--min-reward is a number (rewards run up to 1), not {args.min_reward}.")
    check_output(args.out, replace=args.force)
    store = user_traces(None)
    if store is None or not store.usable:
        where = store.path if store is not None else "the data folder"
        raise BadInput(
            f"The trace database {where} cannot be read (it is damaged, or no run was "
            "recorded here); move it aside and layerpath starts a new one."
        )
    records, judged = export(
        store.attempts(), rule_book().table(), args.format, args.min_reward, args.weighted
    )
    lines = as_lines(records)
    write_atomically(args.out, lambda file: file.write(lines))
    print(f"{len(records)} {args.format} records from {judged} judged attempts -> {args.out}")
    return 0
