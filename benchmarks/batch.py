"""`layerpath bench --suite batch`: photos per minute and what batching costs per photo.

The same batch (scikit-image's photos enlarged to camera size, as JPEGs; one edit) runs
through the real `layerpath batch` command, each configuration in a fresh process and a
fresh output folder: one job and two on this machine, then one and two on a local Ray
(when Ray is installed). For each: photos per minute over the whole command (start-up
included), the start-up (from the command's start to the first photo begun: Python,
layerpath, worker processes, Ray), the engine's building in each worker (its tools and
their models), and per photo once warm (every photo but each worker's first): the tools'
seconds, the edit's other work (planning, probing, the quality checks), the photo's file
work in its worker (decoding, encoding the result, thumbnails) and the batch's own work
(the result travelling to the driver, the journal, the summary, waiting).
"""

from __future__ import annotations

import json
import os
import sqlite3
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

from layerpath.engine.hosts.batch import JOURNAL

INSTRUCTION = "reduce the noise and make it warmer"
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "retina", "hubble_deep_field")
MEGAPIXELS = 6.0


@dataclass
class BatchRun:
    runner: str  # "local" or "ray"
    jobs: int
    photos: int
    wall: float  # the whole command
    startup: float  # command start -> first photo begun
    engine_build: float  # mean per worker
    tools: float  # per warm photo
    edit_other: float  # per warm photo: planning, probing, checks
    file_work: float  # per warm photo, in its worker
    batch_work: float  # per warm photo: transfer, journal, summary, waiting
    exit_code: int

    @property
    def per_minute(self) -> float:
        return 60.0 * self.photos / self.wall if self.wall > 0 else 0.0

    @property
    def batch_share(self) -> float:
        """The batch's own cost per warm photo against its tools' time."""
        return self.batch_work / self.tools if self.tools > 0 else 0.0

    @property
    def all_share(self) -> float:
        """Everything but the tools, per warm photo, against the tools' time."""
        extra = self.edit_other + self.file_work + self.batch_work
        return extra / self.tools if self.tools > 0 else 0.0


def write_photos(folder: Path, megapixels: float, names: Sequence[str] = PHOTOS) -> list[Path]:
    """scikit-image's photos enlarged (Lanczos) to about `megapixels`, as JPEGs."""
    from skimage import data

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        picture = Image.fromarray(getattr(data, name)()).convert("RGB")
        scale = (megapixels * 1e6 / (picture.width * picture.height)) ** 0.5
        size = (round(picture.width * scale), round(picture.height * scale))
        path = folder / f"{name}.jpg"
        picture.resize(size, Image.Resampling.LANCZOS).save(path, quality=92)
        paths.append(path)
    return paths


def run_one(
    photos: Path,
    out: Path,
    jobs: int,
    ray: bool,
    instruction: str,
    env: dict[str, str],
    fmt: str = "ora",
) -> BatchRun:
    command = [
        sys.executable, "-m", "layerpath", "batch", str(photos), "-i", instruction,
        "-o", str(out), "--jobs", str(jobs), "--format", fmt,
    ]  # fmt: skip
    if ray:
        command += ["--ray", "auto"]
    begun = time.time()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.time() - begun
    if done.returncode not in (0, 1):
        print(done.stderr[-2000:], file=sys.stderr)
    with sqlite3.connect(out / JOURNAL) as db:
        db.row_factory = sqlite3.Row
        timings = [
            dict(r)
            for r in db.execute(
                "SELECT began AS started, finished, seconds, tool_seconds, run_seconds,"
                " engine_seconds, worker FROM photos WHERE state IN ('done', 'partial')"
            )
        ]
    by_worker: dict[int, list[dict[str, Any]]] = {}
    for t in sorted(timings, key=lambda t: t["started"]):
        by_worker.setdefault(t["worker"], []).append(t)
    warm = [t for photos_of in by_worker.values() for t in photos_of[1:]]
    first_start = min((t["started"] for t in timings), default=begun)
    builds = [photos_of[0]["engine_seconds"] for photos_of in by_worker.values()]
    mean = lambda values: float(np.mean(values)) if values else 0.0  # noqa: E731
    # the batch's own work per warm photo: the wall each photo took in the batch (its
    # share of the pace once warm) less what its worker spent on it
    span = max(t["finished"] for t in timings) - first_start if timings else 0.0
    pace = span * jobs / len(timings) if timings else 0.0
    worker_time = mean([t["seconds"] for t in warm]) or mean([t["seconds"] for t in timings])
    return BatchRun(
        runner="ray" if ray else "local",
        jobs=jobs,
        photos=len(timings),
        wall=wall,
        startup=first_start - begun,
        engine_build=mean(builds),
        tools=mean([t["tool_seconds"] for t in warm]),
        edit_other=mean([t["run_seconds"] - t["tool_seconds"] for t in warm]),
        file_work=mean([t["seconds"] - t["run_seconds"] for t in warm]),
        batch_work=max(0.0, pace - worker_time),
        exit_code=done.returncode,
    )


@dataclass
class PeerRun:
    peer: str
    photos: int
    wall: float

    @property
    def per_minute(self) -> float:
        return 60.0 * self.photos / self.wall if self.wall > 0 else 0.0


def peer_runs(photos: Sequence[Path], instruction: str, folder: Path) -> list[PeerRun]:
    """The same photos, the same edit, by the tools a photographer batches with (see
    benchmarks.speed): ImageMagick's mogrify on copies of the photos, and one Python
    process applying the edit's 3D LUT with Pillow to each; JPEG quality 95 at 4:4:4.
    Those that cannot make the edit (a LUT of a vignette) are left out."""
    import shutil

    from layerpath.benchmarks.speed import EDITS, JPEG, PILLOW, imagemagick, lut_of, timed

    runs = []
    magick, args = imagemagick(), EDITS.get(instruction)
    mogrify = None if magick is None else shutil.which("mogrify")
    if mogrify and args is not None and not any("{" in a for a in args):
        copies = folder / "mogrify"
        copies.mkdir()
        for photo in photos:
            shutil.copy(photo, copies / photo.name)
        wall, _, ok, _ = timed([mogrify, *args, *JPEG, *map(str, sorted(copies.iterdir()))])
        if ok:
            runs.append(PeerRun("ImageMagick mogrify", len(photos), wall))
    cube = lut_of(photos[0], instruction, folder)
    if cube is not None:
        pairs = [str(p) for photo in photos for p in (photo, folder / f"lut-{photo.name}")]
        wall, _, ok, _ = timed([sys.executable, "-c", PILLOW, str(cube), *pairs])
        if ok:
            runs.append(PeerRun("Pillow 3D LUT", len(photos), wall))
    return runs


def markdown(
    runs: Sequence[BatchRun],
    machine: str,
    instruction: str,
    mp: float,
    peers: Sequence[PeerRun] = (),
    fmt: str = "ora",
) -> str:
    lines = [
        f'`layerpath batch -i "{instruction}" --format {fmt}` on '
        f"{runs[0].photos if runs else 0} photos of {mp:g} MP, {machine}",
        "",
        "| runner | jobs | photos / min | start-up s | engine build s | tools s / photo "
        "| edit other s | file work s | batch s | batch / tools | all but tools / tools |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in runs:
        lines.append(
            f"| {r.runner} | {r.jobs} | {r.per_minute:.1f} | {r.startup:.1f} | "
            f"{r.engine_build:.2f} | {r.tools:.2f} | {r.edit_other:.2f} | {r.file_work:.2f} | "
            f"{r.batch_work:.2f} | {r.batch_share:.0%} | {r.all_share:.0%} |"
        )
    if peers:
        lines += ["", "The same photos and edit by the peers, to JPEG:", ""]
        lines += ["| peer | photos / min | wall s |", "| --- | --- | --- |"]
        lines += [f"| {p.peer} | {p.per_minute:.1f} | {p.wall:.1f} |" for p in peers]
    return "\n".join(lines)


def bench_batch(
    out: Path,
    instruction: str = INSTRUCTION,
    megapixels: float = MEGAPIXELS,
    count: int = 6,
    fmt: str = "ora",
) -> list[BatchRun]:
    out.mkdir(parents=True, exist_ok=True)
    import importlib.util

    with_ray = importlib.util.find_spec("ray") is not None
    runs = []
    with tempfile.TemporaryDirectory(prefix="layerpath-bench-batch-") as folder:
        names = [PHOTOS[i % len(PHOTOS)] for i in range(count)]
        photos = write_photos(Path(folder) / "photos", megapixels, names[: len(PHOTOS)])
        for i, name in enumerate(names[len(PHOTOS) :]):  # more photos than names: copies
            copy = Path(folder) / "photos" / f"{name}-{i + 2}.jpg"
            copy.write_bytes((Path(folder) / "photos" / f"{name}.jpg").read_bytes())
            photos.append(copy)
        env = dict(os.environ)
        configs = [(1, False), (2, False)] + ([(1, True), (2, True)] if with_ray else [])
        for jobs, on_ray in configs:
            name = f"{'ray' if on_ray else 'local'}-{jobs}"
            print(f"{name} ...", file=sys.stderr, flush=True)
            runs.append(
                run_one(
                    Path(folder) / "photos",
                    Path(folder) / name,
                    jobs,
                    on_ray,
                    instruction,
                    env,
                    fmt,
                )
            )
        peers = peer_runs(photos, instruction, Path(folder))
    machine = f"{os.cpu_count()} cores, Python {sys.version.split()[0]}"
    data = {
        "date": date.today().isoformat(),
        "machine": machine,
        "instruction": instruction,
        "megapixels": megapixels,
        "format": fmt,
        "runs": [asdict(r) | {"per_minute": r.per_minute} for r in runs],
        "peers": [asdict(p) | {"per_minute": p.per_minute} for p in peers],
    }
    (out / "batch.json").write_text(json.dumps(data, indent=2))
    if not with_ray:
        print("(Ray is not installed: pip install 'layerpath[cluster]')", file=sys.stderr)
    print(markdown(runs, machine, instruction, megapixels, peers, fmt))
    return runs
