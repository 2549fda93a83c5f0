"""`layerpath bench speed`: everyday edits on one camera-sized photo, side by side with
the tools a photographer already batches with, in one run (and a region edit, blurring
the background, which none of them makes by itself).

Each edit runs through the real command, `layerpath edit IN.jpg "..." -o OUT.jpg`, in a
fresh process (start-up, reading, planning, the tool, the checks and writing are all in
the wall time), and so does each peer on the same file in and out, JPEG quality 95 at
4:4:4 like layerpath's:

- ImageMagick's `convert` (when installed): channel gains for warmer, `-colorspace Gray`,
  a sigmoidal contrast, a radial gradient multiplied in for the vignette;
- Pillow applying a 3D LUT (`ImageFilter.Color3DLUT`): the .cube layerpath writes for
  the edit (`--cube`), worked out on a small copy; a vignette has no LUT.

Rounds go round-robin (the machine's noise falls on all alike); each cell is the fastest
of its rounds, the ratio layerpath's wall over the fastest peer's. Peak memory is each
process's own (wait4).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from layerpath.errors import BadInput

#: the edits timed: the instruction, and the ImageMagick arguments that make it
EDITS: dict[str, list[str] | None] = {
    # layerpath's warmer at 0.35: red x1.0875, blue x0.9125
    "make it warmer": ["-channel", "R", "-evaluate", "multiply", "1.0875", "-channel", "B",
                       "-evaluate", "multiply", "0.9125", "+channel"],
    "make it black and white": ["-colorspace", "Gray"],
    "make it look like golden hour": None,  # a look: its LUT is the peer
    "add contrast": ["-sigmoidal-contrast", "3x50%"],
    # a radial gradient multiplied in (ImageMagick's own -vignette blurs a mask with a
    # sigma of the frame's size: minutes at 24 MP)
    "add a vignette": ["(", "-size", "{size}", "radial-gradient:white-gray45", ")",
                       "-compose", "multiply", "-composite"],
    # a region edit: the background found, then blurred (no peer finds a background)
    "blur the background": None,
}  # fmt: skip
#: the photo's size: a 24 MP camera file
SIZE = (6000, 4000)
PHOTO_PACKAGE, PHOTO_FILE = (
    "plasma-workspace-wallpapers",
    "FallenLeaf/contents/images/2560x1600.jpg",
)
ROUNDS = 3
JPEG = ["-quality", "95", "-sampling-factor", "1x1"]


@dataclass
class Timing:
    seconds: float = float("inf")
    peak_mb: float = 0.0
    ok: bool = True

    def keep(self, seconds: float, peak_mb: float, ok: bool) -> None:
        if seconds < self.seconds:
            self.seconds = seconds
        self.peak_mb = max(self.peak_mb, peak_mb)
        self.ok = self.ok and ok


@dataclass
class EditRow:
    instruction: str
    layerpath: Timing = field(default_factory=Timing)
    imagemagick: Timing | None = None
    pillow_lut: Timing | None = None
    tools: float = float("inf")  # layerpath's tools' own seconds in its fastest run

    def fastest_peer(self) -> tuple[str, Timing] | None:
        peers = [("ImageMagick", self.imagemagick), ("Pillow 3D LUT", self.pillow_lut)]
        found = [(name, t) for name, t in peers if t is not None and t.ok]
        return min(found, key=lambda p: p[1].seconds) if found else None

    def ratio(self) -> float | None:
        peer = self.fastest_peer()
        return None if peer is None else self.layerpath.seconds / peer[1].seconds


def imagemagick() -> tuple[str, str] | None:
    """ImageMagick's convert and its version line; None when it is not installed (a
    stand-in that is not ImageMagick does not count)."""
    for name in ("magick", "convert"):
        path = shutil.which(name)
        if path is None:
            continue
        try:
            shown = subprocess.run([path, "-version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            continue
        first = shown.stdout.splitlines()[0] if shown.stdout else ""
        if shown.returncode == 0 and "ImageMagick" in first:
            return path, first.removeprefix("Version: ").split(" https")[0]
    return None


def camera_photo(folder: Path, cache: Path, given: Path | None = None) -> tuple[Path, str]:
    """The JPEG timed and where it comes from: the user's own, else a photograph of KDE's
    wallpapers (Debian's plasma-workspace-wallpapers, fetched once; the package's 5K
    pictures are drawings) enlarged to 24 MP, else scikit-image's astronaut enlarged.
    (An enlarged photo is smoother than a camera's: a little faster to decode and code.)"""
    from PIL import Image

    if given is not None:
        if not given.is_file():
            raise BadInput(f"No photo at {given}.")
        return given, given.name
    from layerpath.benchmarks.sources import fetched

    root = fetched(cache, PHOTO_PACKAGE)
    source = None if root is None else root / "usr/share/wallpapers" / PHOTO_FILE
    if source is not None and source.is_file():
        picture, name = (
            Image.open(source).convert("RGB"),
            f"KDE's photo {PHOTO_FILE.split('/')[0]}",
        )
    else:
        from skimage import data

        picture, name = Image.fromarray(data.astronaut()), "scikit-image's astronaut, enlarged"
    path = folder / "photo.jpg"
    picture.resize(SIZE, Image.Resampling.LANCZOS).save(path, quality=92)
    return path, f"{name}, {SIZE[0]}x{SIZE[1]}"


def timed(command: Sequence[str]) -> tuple[float, float, bool, str]:
    """Wall seconds, peak resident MB, whether it succeeded, and its errors."""
    # as installed: Python's compiled modules kept (a checkout's environment may say not)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert child.stderr is not None
    errors = child.stderr.read()  # drained while it runs: a full pipe would stall it
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    ok = os.waitstatus_to_exitcode(status) == 0
    return wall, usage.ru_maxrss / 1024.0, ok, errors.decode(errors="replace")[-2000:]


def layerpath_command(photo: Path, instruction: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "layerpath", "edit", str(photo), instruction, "-o", str(out),
            "--no-traces", "--report", str(out.with_suffix(".json"))]  # fmt: skip


def tool_seconds(report: Path) -> float:
    """The tools' own seconds in a run's report (the rest is start-up, files, checks)."""
    try:
        return float(json.loads(report.read_text())["totals"]["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return float("inf")


def lut_of(photo: Path, instruction: str, folder: Path) -> Path | None:
    """The edit's .cube, as layerpath writes it (--cube) on a small copy of the photo;
    None when the edit depends on where a pixel lies (a vignette)."""
    from PIL import Image

    small = folder / "small.jpg"
    if not small.exists():
        with Image.open(photo) as image:
            image.convert("RGB").resize((600, 400)).save(small, quality=92)
    cube = folder / f"{abs(hash(instruction))}.cube"
    command = [sys.executable, "-m", "layerpath", "edit", str(small), instruction, "-o",
               str(folder / "small-out.png"), "--cube", str(cube), "--no-traces"]  # fmt: skip
    subprocess.run(command, capture_output=True, timeout=600, check=False)
    return cube if cube.exists() else look_cube(instruction, cube)


#: a look's steps that change every colour alike (what a LUT of the look can hold)
COLOUR_STEPS = {"temperature", "tint", "exposure", "contrast", "curve", "fade", "split_tone",
                "hue_shift", "saturation", "vibrance", "black_and_white"}  # fmt: skip


def look_cube(instruction: str, path: Path) -> Path | None:
    """For a look layerpath keeps out of a .cube (a sunset's glow and vignette depend on
    where a pixel lies), the LUT a photographer would have of it: its colour steps
    alone, through layerpath's own arithmetic. None when the words name no look."""
    import numpy as np

    from layerpath.engine.files.cube import SIZE, Cube, lattice, write_cube
    from layerpath.kit.looks import find_look
    from layerpath.tools.adjust import render

    found = find_look(instruction)
    if found is None:
        return None
    look = found[0]
    colour = look.model_copy(update={"recipe": [s for s in look.recipe if s["op"] in COLOUR_STEPS]})
    grid = lattice(SIZE)[..., :3].astype(np.float32) / 255.0
    table = render(colour, 1.0, grid, {}).reshape(-1, 3).astype(np.float64)
    return write_cube(path, Cube(table, (look.label,), ()), f"{look.label}, its colours")


#: the Pillow peer: read each JPEG, apply the .cube as a 3D LUT, write the JPEG
#: (arguments: the .cube, then pairs of photo and result)
PILLOW = """
import sys
from PIL import Image, ImageFilter
size, table = 0, []
for line in open(sys.argv[1]):
    parts = line.split()
    if parts[:1] == ["LUT_3D_SIZE"]:
        size = int(parts[1])
    elif len(parts) == 3:
        try:
            table += [float(p) for p in parts]
        except ValueError:
            pass
lut = ImageFilter.Color3DLUT(size, table)
for source, target in zip(sys.argv[2::2], sys.argv[3::2]):
    Image.open(source).convert("RGB").filter(lut).save(target, quality=95, subsampling=0)
"""


def bench_speed(
    out: Path, rounds: int = ROUNDS, photo: Path | None = None, edits: Sequence[str] = ()
) -> dict[str, Any]:
    """Every edit and its peers, round-robin; the table on stdout, the JSON in `out`."""
    from layerpath.benchmarks.bench import machine

    names = list(edits) or list(EDITS)
    magick = imagemagick()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="layerpath-speed-") as tmp:
        folder = Path(tmp)
        source, described = camera_photo(folder, out / "photos", photo)
        from PIL import Image

        with Image.open(source) as image:
            width, height = image.size
        rows = [EditRow(name) for name in names]
        cubes = {}
        for row in rows:
            cubes[row.instruction] = lut_of(source, row.instruction, folder)
            args = EDITS.get(row.instruction)
            row.imagemagick = Timing() if magick and args is not None else None
            row.pillow_lut = Timing() if cubes[row.instruction] else None
        for turn in range(rounds):
            for row in rows:
                print(f"round {turn + 1}/{rounds}: {row.instruction} ...", file=sys.stderr)
                target = folder / "out.jpg"
                wall, peak, ok, errors = timed(layerpath_command(source, row.instruction, target))
                if not ok:
                    print(f"layerpath failed: {errors}", file=sys.stderr)
                if ok and wall < row.layerpath.seconds:
                    row.tools = tool_seconds(target.with_suffix(".json"))
                row.layerpath.keep(wall, peak, ok)
                args = EDITS.get(row.instruction)
                if row.imagemagick is not None and magick and args is not None:
                    made = [a.replace("{size}", f"{width}x{height}") for a in args]
                    command = [magick[0], str(source), *made, *JPEG, str(folder / "im.jpg")]
                    row.imagemagick.keep(*timed(command)[:3])
                cube = cubes[row.instruction]
                if row.pillow_lut is not None and cube is not None:
                    command = [sys.executable, "-c", PILLOW, str(cube), str(source),
                               str(folder / "lut.jpg")]  # fmt: skip
                    row.pillow_lut.keep(*timed(command)[:3])
    import PIL

    data = {
        "suite": "speed",
        "machine": machine(),
        "date": date.today().isoformat(),
        "photo": described,
        "peers": {
            "ImageMagick": magick[1] if magick else None,
            "Pillow": PIL.__version__,
        },
        "rounds": rounds,
        "rows": [
            {**asdict(r), "ratio": r.ratio(), "fastest_peer": (r.fastest_peer() or ("",))[0]}
            for r in rows
        ],
    }
    (out / "bench-speed.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(markdown(rows, data))
    return data


def _cell(timing: Timing | None) -> str:
    if timing is None:
        return "—"
    return f"{timing.seconds:.2f} s" if timing.ok else "failed"


def markdown(rows: Sequence[EditRow], data: dict[str, Any]) -> str:
    from layerpath.benchmarks.bench import table

    peers = data["peers"]
    lines = [
        f"{data['photo']} JPEG in and out (quality 95, 4:4:4); fastest of {data['rounds']} "
        f"rounds, round-robin; {data['machine']}; {data['date']}; "
        f"{peers['ImageMagick'] or 'ImageMagick not installed'}, Pillow {peers['Pillow']}.",
        "",
    ]
    body = []
    for r in rows:
        peer = r.fastest_peer()
        ratio = r.ratio()
        body.append(
            (
                r.instruction,
                _cell(r.layerpath),
                f"{r.tools:.2f} s" if r.tools != float("inf") else "—",
                f"{r.layerpath.peak_mb:.0f} MB",
                _cell(r.imagemagick),
                _cell(r.pillow_lut),
                f"{ratio:.1f}× {peer[0]}" if ratio is not None and peer else "—",
            )
        )
    header = ("edit", "layerpath", "of it tools", "peak memory", "ImageMagick", "Pillow 3D LUT",
              "vs fastest")  # fmt: skip
    lines += table("", header, body)
    return "\n".join(lines).rstrip()
