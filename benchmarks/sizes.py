"""`layerpath bench sizes`: the demo edit at camera sizes, each in a fresh process.

For each size the README's demo (recolour the saucer, remove the spoon, replace the
sign's text) runs through the real command, `layerpath edit ... -o OUT.ora --report`,
in its own process: reading the PNG and its masks, planning, the tools, the checks and
writing the layered file are all in the wall time. The table gives the wall seconds,
the tools' own seconds (from the report), the share of the wall spent outside the tools,
and the process's peak resident memory (its own, from wait4).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from layerpath.benchmarks.demo import demo_scene
from layerpath.errors import BadInput

INSTRUCTION = "recolor the saucer to teal, remove the spoon and replace the sign text with OPEN"
DEFAULT_SIZES = (1.0, 6.0, 12.0, 24.0, 48.0)
PHOTO_PIXELS = 600 * 400  # the coffee photo's own size


@dataclass
class SizeRun:
    megapixels: float
    width: int
    height: int
    wall: float  # the whole command, start-up included
    run_wall: float  # the engine's run (the report's wall_seconds)
    tools: float  # the tools' own seconds
    peak_mb: float
    done: int
    subtasks: int
    exit_code: int

    @property
    def overhead_share(self) -> float:
        return max(0.0, 1.0 - self.tools / self.wall) if self.wall > 0 else 0.0


def parse_sizes(text: str) -> tuple[float, ...]:
    try:
        sizes = tuple(float(s) for s in text.split(",") if s.strip())
    except ValueError as exc:
        raise BadInput(f"--sizes takes megapixels, e.g. 1,6,24 (got {text!r}).") from exc
    if not sizes or any(s <= 0 or s > 400 for s in sizes):
        raise BadInput(f"--sizes takes megapixels between 0 and 400 (got {text!r}).")
    return sizes


def write_demo(megapixels: float, folder: Path) -> tuple[Path, dict[str, Path], tuple[int, int]]:
    """The demo scene at about `megapixels`, as a PNG and its mask PNGs."""
    scene = demo_scene(scale=(megapixels * 1e6 / PHOTO_PIXELS) ** 0.5)
    folder.mkdir(parents=True, exist_ok=True)
    image = folder / "coffee.png"
    Image.fromarray(scene.image[..., :3]).save(image, compress_level=1)
    masks = {}
    for name in ("saucer", "spoon"):
        masks[name] = folder / f"{name}.png"
        Image.fromarray(scene.masks[name].astype(np.uint8) * 255).save(masks[name])
    h, w = scene.image.shape[:2]
    return image, masks, (w, h)


def run_size(megapixels: float, folder: Path, instruction: str = INSTRUCTION) -> SizeRun:
    """One size, through the real command in a fresh process."""
    image, masks, (w, h) = write_demo(megapixels, folder)
    report = folder / "run.json"
    command = [sys.executable, "-m", "layerpath", "edit", str(image), instruction]
    for name, path in masks.items():
        command += ["--mask", f"{name}={path}"]
    command += ["-o", str(folder / "out.ora"), "--report", str(report), "--no-traces"]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    errors = child.stderr.read()  # drained while it runs: a full pipe would stall it
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1) or not report.exists():
        raise RuntimeError(
            f"layerpath edit at {megapixels} MP ended {child.returncode}: {errors.decode()[-2000:]}"
        )
    data = json.loads(report.read_text())
    totals = data["totals"]
    return SizeRun(
        megapixels,
        w,
        h,
        wall,
        totals["wall_seconds"],
        totals["seconds"],
        usage.ru_maxrss / 1024.0,  # kilobytes on Linux
        totals["subtasks_ok"],
        totals["subtasks_ok"] + totals["subtasks_failed"],
        child.returncode,
    )


def markdown(runs: Sequence[SizeRun], machine: str, instruction: str = INSTRUCTION) -> str:
    from layerpath.benchmarks.bench import table

    lines = [
        f"`{instruction}` through `layerpath edit ... -o OUT.ora --report`, "
        f"a fresh process per size; {machine}; {date.today().isoformat()}.",
        "",
    ]
    lines += table(
        "",
        ("MP", "pixels", "wall s", "run s", "tool s", "outside tools", "peak RSS MB", "done"),
        (
            (
                f"{r.megapixels:g}",
                f"{r.width}x{r.height}",
                f"{r.wall:.1f}",
                f"{r.run_wall:.1f}",
                f"{r.tools:.1f}",
                f"{r.overhead_share:.0%}",
                f"{r.peak_mb:.0f}",
                f"{r.done}/{r.subtasks}",
            )
            for r in runs
        ),
    )
    return "\n".join(lines).rstrip()


def bench_sizes(
    sizes: Sequence[float], out: Path, instruction: str = INSTRUCTION
) -> dict[str, Any]:
    """Every size in turn (one at a time: they would share the cores), the table on
    stdout, the JSON in `out`. `instruction`: another edit of the demo photo (its
    saucer and spoon masks are given)."""
    from layerpath.benchmarks.bench import machine

    runs = []
    with tempfile.TemporaryDirectory(prefix="layerpath-sizes-") as tmp:
        for megapixels in sizes:
            print(f"{megapixels:g} MP ...", file=sys.stderr, flush=True)
            runs.append(run_size(megapixels, Path(tmp) / f"{megapixels:g}", instruction))
    data = {
        "suite": "sizes",
        "instruction": instruction,
        "machine": machine(),
        "date": date.today().isoformat(),
        "runs": [{**asdict(r), "overhead_share": r.overhead_share} for r in runs],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench-sizes.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(markdown(runs, data["machine"], instruction))
    return data
