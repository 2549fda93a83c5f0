"""A run's whole-picture colour steps as a 3D LUT (.cube, Adobe/Resolve format), for
Krita, Photoshop, Resolve, darktable and Lightroom's profiles to apply themselves.

A LUT maps each colour to a colour, wherever it lies in the frame: a step fits one only
when it is a colour-to-colour change of the whole picture (warmer, shadows, black and
white, a look without a vignette or clarity). Which steps do is not assumed: each
step's tool is run on a lattice of colours (33 a side), and the table it gives is put
to the test on the photo itself: the step's own picture, made again through the table
(trilinear, as the programs that read .cube files apply it), must match what the step
made within CLOSE levels on average and NEAR at the 99th percentile. A step whose
result depends on where a pixel lies (a vignette, clarity, a region) or on the picture's
own statistics fails that test and is left out, said by name; the steps that pass are
chained in the run's order into one table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

from layerpath.engine.files.blends import CLOSE, NEAR
from layerpath.engine.files.io import picture_beneath
from layerpath.engine.kinds import kind_spec
from layerpath.engine.types import ArtifactKind, LayerKind, RunResult, SubtaskOutcome
from layerpath.errors import BadInput
from layerpath.files import write_atomically
from layerpath.tools.registry import Registry

#: points a side of the lattice (the common size; Resolve and Photoshop read it)
SIZE = 33


@dataclass(frozen=True)
class Cube:
    """The chained table (SIZE³ x 3, red fastest, 0..1), the steps in it and the steps
    left out with why."""

    table: np.ndarray
    included: tuple[str, ...]
    left_out: tuple[tuple[str, str], ...]


def lattice(size: int = SIZE) -> np.ndarray:
    """Every lattice colour once, as an RGBA picture (size² rows of size, red fastest):
    8 bits, the depth the tools work at."""
    levels = np.rint(np.linspace(0.0, 255.0, size)).astype(np.uint8)
    b, g, r = np.meshgrid(levels, levels, levels, indexing="ij")
    rgb = np.stack([r, g, b], axis=-1).reshape(size * size, size, 3)
    return np.dstack([rgb, np.full(rgb.shape[:2], 255, np.uint8)])


def applied(table: np.ndarray, picture: np.ndarray, size: int = SIZE) -> np.ndarray:
    """`picture` (RGB or RGBA, 8 bits) through the table, trilinear (Pillow's
    Color3DLUT, as programs apply a .cube): RGB."""
    rgb = Image.fromarray(np.ascontiguousarray(picture[..., :3]))
    lut = ImageFilter.Color3DLUT(size, table.reshape(-1).tolist())
    return np.asarray(rgb.filter(lut))


def colour_step(outcome: SubtaskOutcome, registry: Registry) -> str | None:
    """Why a subtask cannot be a LUT from its kind and tools alone (None: try it)."""
    if not outcome.ok:
        return "it did not pass its check"
    if kind_spec(outcome.subtask.kind).frame is not None:
        return "it changes the frame"
    if len(outcome.tools) != 1 or outcome.start_image is None:
        return "it takes more than one tool step (a region found first)"
    spec = registry.get(outcome.tools[0]).spec if outcome.tools[0] in registry else None
    if spec is None or set(spec.inputs) != {ArtifactKind.IMAGE}:
        return "its tool works on more than the picture's colours"
    if spec.model is not None:  # (and running it on a table of colours takes minutes)
        return "its tool is a model, which paints a new picture rather than a colour change"
    pixels = [s for s in outcome.steps if s.kind == LayerKind.PIXELS]
    if len(pixels) != 1 or pixels[0].blend != "normal":
        return "it cuts out or adds more than one layer of pixels"
    return None


def through(
    registry: Registry, outcome: SubtaskOutcome, result: RunResult
) -> Callable[[np.ndarray], np.ndarray]:
    """The step's tool, with the parameters it ran with, on a picture of colours."""
    tool = registry.get(outcome.tools[0])
    params = {
        **(outcome.params[0] if outcome.params else {}),
        **(outcome.settled[0] if outcome.settled else {}),  # (as it chose on the photo)
    }
    ctx = result.request.context(outcome.subtask)

    def run(colours: np.ndarray) -> np.ndarray:
        picture: np.ndarray = tool.run(ctx, {ArtifactKind.IMAGE: colours}, params).outputs[
            ArtifactKind.IMAGE
        ]
        return picture

    return run


def after_of(outcome: SubtaskOutcome, result: RunResult) -> np.ndarray:
    """The picture after a subtask: the next subtask's start, or the run's picture (the
    run carries its picture on from step to step), where that is there and the same
    size; else its start with its step layers over it."""
    start = outcome.start_image
    assert start is not None
    index = next(i for i, o in enumerate(result.outcomes) if o is outcome)
    later = result.outcomes[index + 1 :]
    after = later[0].start_image if later else result.image
    if after is not None and after.shape == start.shape:
        return after
    steps = [s for s in outcome.steps if s.kind == LayerKind.PIXELS and s.visible]
    return picture_beneath(start, steps)


def cube_of(result: RunResult, registry: Registry) -> Cube:
    """The run's whole-picture colour steps chained into one table, each put to the test
    on the photo first (see the module's words)."""
    identity = lattice()
    chained = identity.copy()
    included: list[str] = []
    left_out: list[tuple[str, str]] = []
    for outcome in result.outcomes:
        name = outcome.subtask.describe()
        why = colour_step(outcome, registry)
        if why is None:
            run = through(registry, outcome, result)
            try:
                table = run(identity)[..., :3].reshape(-1, 3).astype(np.float64) / 255.0
            except Exception as exc:  # (a tool that needs a photo, not a table of colours)
                left_out.append((name, f"its tool cannot work on a table of colours ({exc})"))
                continue
            start = outcome.start_image
            assert start is not None
            own = after_of(outcome, result)
            diff = np.abs(applied(table, start).astype(int) - own[..., :3].astype(int))
            if diff.mean() > CLOSE or np.percentile(diff, 99) > NEAR:
                why = "its change depends on where a pixel lies or on the picture itself"
            else:
                chained = run(chained)
                included.append(name)
        if why is not None:
            left_out.append((name, why))
    table = chained[..., :3].reshape(-1, 3).astype(np.float64) / 255.0
    return Cube(table, tuple(included), tuple(left_out))


def write_cube(path: Path, cube: Cube, title: str) -> Path:
    """The .cube file: its title, its size, then one line per lattice point (red
    fastest), values 0..1."""
    if not cube.included:
        raise BadInput(
            "No step of this run changes every colour alike, so there is no LUT to write ("
            + "; ".join(f"{name}: {why}" for name, why in cube.left_out)
            + ")."
        )
    lines = [
        f'TITLE "{_title(title)}"',
        f"LUT_3D_SIZE {SIZE}",
        "DOMAIN_MIN 0 0 0",
        "DOMAIN_MAX 1 1 1",
    ]
    lines += [f"{r:.6f} {g:.6f} {b:.6f}" for r, g, b in cube.table]
    text = "\n".join(lines) + "\n"
    write_atomically(Path(path), lambda file: file.write(text.encode("utf-8")))
    return Path(path)


def _title(text: str) -> str:
    return " ".join(text.replace('"', "'").split())[:120]


def said(cube: Cube) -> Sequence[str]:
    """What the command line says of the table: the steps in it and those left out."""
    lines = [f"LUT of: {', '.join(cube.included)}"]
    lines += [f"left out of the LUT: {name} ({why})" for name, why in cube.left_out]
    return lines
