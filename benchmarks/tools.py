"""Per tool: load time, seconds per call and peak memory at 1 and 24 megapixels, on the
current device.

    python -m layerpath.benchmarks.tools [--sizes 1,24] [--tools lama_inpaint,opencv_telea] [--stand-ins]

Every tool that can run here is measured (model tools once their weights are downloaded:
`layerpath models download NAME`; with --stand-ins, on each model's real architecture
and size with random weights, built here: real cost, no quality — benchmarks/stand_ins.py). Load = first call minus a warm call (model loading,
session creation); per call = the fastest of the warm calls; peak = the largest numpy /
Python allocation during a warm call (tracemalloc), and CUDA memory when a GPU ran it.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from layerpath.benchmarks.scenes import Scene, make_scene
from layerpath.kit.imaging import mask_box
from layerpath.kit.types import ArtifactKind, SubtaskKind, ToolContext
from layerpath.tools.base import Tool
from layerpath.tools.device import RESIDENT, accelerators
from layerpath.tools.ocr import read_text
from layerpath.tools.registry import Registry

A = ArtifactKind
K = SubtaskKind
WORDS: Mapping[SubtaskKind, tuple[str | None, str | None]] = {
    K.OBJECT_RECOLORATION: ("wall", "navy"),
    K.OBJECT_REMOVAL: ("ball", None),
    K.TEXT_REPLACEMENT: ("text", "OPEN"),
    K.TEXT_ADDITION: (None, "SALE"),
    K.OBJECT_SEGMENTATION: ("ball", None),
    K.OBJECT_DETECTION: ("ball", None),
    K.OBJECT_ADDITION: ("hat", None),
    K.CHANGING_SCENERY: ("scenery", "night"),
}


def scaled_scene(megapixels: float) -> Scene:
    """The synthetic scene scaled to about `megapixels` (4:3), masks with it."""
    base = make_scene()
    width = int(round((megapixels * 1e6 * 4 / 3) ** 0.5))
    height = int(round(width * 3 / 4))
    image = cv2.resize(base.image, (width, height), interpolation=cv2.INTER_CUBIC)
    masks = {
        name: cv2.resize(m.astype(np.uint8), (width, height), interpolation=cv2.INTER_NEAREST) > 0
        for name, m in base.masks.items()
    }
    return Scene(image, masks, base.sign_text)


def tool_inputs(
    tool: Tool, scene: Scene, text_boxes: Any
) -> tuple[ToolContext, dict[ArtifactKind, Any]]:
    kind = tool.spec.subtasks[0] if tool.spec.subtasks else tool.spec.helps[0]
    target, to = WORDS.get(kind, (None, None))
    mask = scene.masks["wall" if kind == K.OBJECT_RECOLORATION else "ball"]
    box = mask_box(mask)
    values: dict[ArtifactKind, Any] = {
        A.IMAGE: scene.image,
        A.MASK: mask,
        A.BOXES: (box,),
        A.TEXT_BOXES: text_boxes,
        A.TEXT: scene.sign_text,
    }
    by_kind: dict[SubtaskKind, dict[str, Any]] = {
        K.KEYWORD_HIGHLIGHTING: {"match": scene.sign_text},
        K.QUESTION_ANSWERING: {"question": "what does the sign say?"},
        K.CAPTION_CONSISTENCY: {"caption": "a red ball on a beige wall"},
        K.IMAGE_UPSCALING: {"factor": 2},
    }
    params = by_kind.get(kind, {})
    context = ToolContext(kind, target=target, to=to, subtask_params=params, masks=scene.masks)
    return context, {a: values[a] for a in tool.spec.inputs}


def measure(
    tool: Tool, scene: Scene, text_boxes: Any, warm_runs: int, stand_in: bool = False
) -> dict[str, float]:
    """Load, per-call and peak figures of one tool; the models other tools left loaded are
    unloaded first, so the CUDA peak is this tool's own (weights + work). A stand-in's
    scores are noise, so a detector keeps every box (threshold 0: the most work)."""
    RESIDENT.clear()
    context, inputs = tool_inputs(tool, scene, text_boxes)
    params = dict(tool.spec.param_schedule()[0])
    if stand_in and "threshold" in params:
        params["threshold"] = 0.0
    cuda = "cuda" in accelerators() and tool.spec.model is not None
    start = time.perf_counter()
    tool.run(context, inputs, params)
    first = time.perf_counter() - start
    warm, peak, cuda_peak = [], 0.0, 0.0
    for _ in range(warm_runs):
        if cuda:
            import torch

            torch.cuda.reset_peak_memory_stats()
        tracemalloc.start()
        start = time.perf_counter()
        tool.run(context, inputs, params)
        warm.append(time.perf_counter() - start)
        peak = max(peak, tracemalloc.get_traced_memory()[1] / 1e6)
        tracemalloc.stop()
        if cuda:
            import torch

            cuda_peak = max(cuda_peak, torch.cuda.max_memory_allocated() / 1e6)
    best = min(warm)
    return {"load": max(0.0, first - best), "call": best, "peak": peak, "cuda": cuda_peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,24", help="megapixels, comma separated")
    parser.add_argument("--tools", default="", help="only these tools (comma separated)")
    parser.add_argument("--runs", type=int, default=2, help="warm calls per size")
    parser.add_argument(
        "--stand-ins",
        action="store_true",
        help="time the model tools on random-weight models of the real architectures",
    )
    args = parser.parse_args()
    os.environ.setdefault("LAYERPATH_DATA_DIR", tempfile.mkdtemp())
    wanted = {t for t in args.tools.split(",") if t}
    models = None
    if args.stand_ins:
        from layerpath.benchmarks.stand_ins import BUILDERS, install_stand_ins

        wanted_models = {
            t.spec.model for t in Registry.from_catalogue() if not wanted or t.name in wanted
        }
        names = [name for name in BUILDERS if name in wanted_models]
        if names:
            models = install_stand_ins(Path(tempfile.mkdtemp()) / "models", names)
    registry = Registry.from_catalogue(models=models)
    sizes = [float(s) for s in args.sizes.split(",")]
    device = "+".join(accelerators()) or "cpu"
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, device {device}, "
        f"python {platform.python_version()}"
    )
    header = ["tool", "state"]
    for size in sizes:
        header += [f"{size:g} MP load s", f"{size:g} MP s/call", f"{size:g} MP peak MB"]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    scenes = {size: scaled_scene(size) for size in sizes}
    text: dict[float, Any] = {}  # OCR'd once, for the first tool that needs text boxes
    for tool in registry:
        if wanted and tool.name not in wanted:
            continue
        found = tool.availability()
        if not found.ok:
            print(f"| {tool.name} | {found.reason} |" + " — |" * (len(header) - 2))
            continue
        stand_in = models is not None and tool.spec.model is not None
        cells = [tool.name, "ran (stand-in)" if stand_in else "ran"]
        for size in sizes:
            try:
                if A.TEXT_BOXES in tool.spec.inputs and size not in text:
                    text[size] = read_text(scenes[size].image)
                m = measure(tool, scenes[size], text.get(size, ()), args.runs, stand_in)
            except Exception as exc:  # a tool that fails here is a row, not a crash
                cells += [f"failed: {str(exc)[:40]}", "—", "—"]
                continue
            peak = f"{m['peak']:.0f}" + (f" (+{m['cuda']:.0f} CUDA)" if m["cuda"] else "")
            cells += [f"{m['load']:.2f}", f"{m['call']:.3f}", peak]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
