"""Fast-slow vs A* vs fast-only on synthetic scenes: tool calls, tool seconds, quality.

    python -m benchmarks.modes [--seeds 3] [--alphas 0,1,2]

Prints a markdown table, one row per (mode, alpha), summed over every task and seed.
Quality per subtask is the checker's score (0 when the subtask failed).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time

from benchmarks.scenes import make_scene
from layerpath.engine.executor import Engine
from layerpath.engine.types import EditRequest, Mode
from layerpath.tools.registry import Registry

TASKS = (
    "remove the ball",
    "recolor the wall to yellow",
    "recolor the wall to white",
    "replace the sign text with OPEN",
    "remove the ball, recolor the wall to navy and replace the sign text with OPEN",
    "redact the text and sharpen the photo",
    "highlight the word '{sign}' and recolor the ball to green",
)
SIGNS = ("SALE", "CLOSED", "EXIT")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--alphas", default="0,1,2")
    args = parser.parse_args()
    os.environ.setdefault("LAYERPATH_DATA_DIR", tempfile.mkdtemp())
    registry = Registry.from_catalogue()
    alphas = [float(a) for a in args.alphas.split(",")]
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, python {platform.python_version()}, "
        f"{args.seeds} seeds x {len(TASKS)} tasks"
    )
    print(
        "| mode | alpha | subtasks ok | mean quality | tool calls | tool seconds | fallbacks | wall s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for mode in Mode:
        for alpha in alphas:
            ok = total = calls = fallbacks = 0
            quality = seconds = 0.0
            started = time.perf_counter()
            for seed in range(args.seeds):
                scene = make_scene(seed, sign_text=SIGNS[seed % len(SIGNS)])
                for task in TASKS:
                    prompt = task.format(sign=scene.sign_text)
                    request = EditRequest(prompt, scene.snapshot(), alpha=alpha, mode=mode)
                    result = Engine(registry).run(request)
                    total += len(result.outcomes)
                    ok += sum(o.ok for o in result.outcomes)
                    quality += sum(o.quality for o in result.outcomes)
                    calls += len(result.calls)
                    seconds += sum(c.seconds for c in result.calls)
                    fallbacks += sum(1 for o in result.outcomes if o.fallback_reason)
            wall = time.perf_counter() - started
            print(
                f"| {mode.value} | {alpha:g} | {ok}/{total} | {quality / total:.3f} | {calls} | "
                f"{seconds:.2f} | {fallbacks} | {wall:.1f} |"
            )


if __name__ == "__main__":
    main()
