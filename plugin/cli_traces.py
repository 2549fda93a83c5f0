"""`layerpath traces export|finetune`: what runs recorded, as training data for a planner."""

from __future__ import annotations

import math
from typing import Any

from layerpath.engine.learn.traces import user_traces
from layerpath.engine.learn.trajectories import as_lines, export
from layerpath.errors import BadInput
from layerpath.files import check_output, write_atomically
from layerpath.plugin.cli_actions import rule_book


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
