"""`layerpath batch`: photos, masks, journal and resume, jobs, summary and contact sheet.

Real parts only: scikit-image's photos (the `bench` extra) written as files, the real
CLI (in process, and as a process that is killed with SIGKILL), real SQLite, the real
engine with its offline tools; results read back with layerpath's own ORA reader.
"""

from __future__ import annotations

import csv
import html.parser
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from filelock import FileLock
from PIL import Image

from layerpath.engine.files.io import LayeredImage, PixelLayer, composite, read_layered
from layerpath.engine.hosts.batch import (
    JOURNAL,
    LOCK,
    SHEET,
    SUMMARY,
    BatchSpec,
    collect,
    run_batch,
)
from layerpath.errors import BadInput
from layerpath.plugin.cli import main

skimage_data = pytest.importorskip("skimage.data")

PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "retina", "hubble_deep_field")
WARMER = "make it warmer"


def photos(folder: Path, names: tuple[str, ...] = PHOTOS, side: int = 320) -> list[Path]:
    """scikit-image's photos, made `side` pixels on the long side, as JPEGs."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        picture = Image.fromarray(getattr(skimage_data, name)()).convert("RGB")
        picture.thumbnail((side, side))
        path = folder / f"{name}.jpg"
        picture.save(path, quality=92)
        paths.append(path)
    return paths


def original(result: LayeredImage) -> np.ndarray:
    """The user's own layer of a result file (the bottom one)."""
    layer = result.layers[0]
    assert isinstance(layer, PixelLayer) and layer.name == "Original"
    return layer.pixels


def journal_rows(out: Path) -> dict[str, tuple[str, int]]:
    with sqlite3.connect(out / JOURNAL) as db:
        return {
            Path(s).name: (state, writes)
            for s, state, writes in db.execute("SELECT source, state, writes FROM photos")
        }


class SheetImages(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs)["src"] or "")


def test_a_batch_edits_every_photo_and_lists_a_bad_one_without_stopping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources = photos(tmp_path / "in", PHOTOS[:3])
    broken = tmp_path / "in" / "broken.jpg"  # a photo that is not one: listed, not fatal
    broken.write_bytes(b"\xff\xd8\xff\xe0 this is not a JPEG")
    before = {p: p.read_bytes() for p in sources}
    out = tmp_path / "out"

    code = main(["batch", str(tmp_path / "in"), "--instruction", WARMER, "-o", str(out)])

    assert code == 1  # one photo failed
    said = capsys.readouterr()
    assert "3 done, 0 partly done, 1 failed of 4 photos" in said.out
    assert "broken.jpg: FAILED" in said.err
    for source in sources:
        assert source.read_bytes() == before[source]  # the photos are never changed
        result = read_layered(out / f"{source.stem}.ora")
        mine = original(result)
        assert np.array_equal(mine, np.asarray(Image.open(source).convert("RGBA")))
        blue = lambda rgba: float(rgba[..., 2].mean()) - float(rgba[..., 0].mean())  # noqa: E731
        assert blue(composite(result)) < blue(mine)  # warmer: less blue against red
    assert not (out / "broken.ora").exists()
    with open(out / SUMMARY, newline="") as table:
        rows = {Path(r["photo"]).name: r for r in csv.DictReader(table)}
    assert [rows[p.name]["status"] for p in sources] == ["done"] * 3
    assert rows["broken.jpg"]["status"] == "failed"
    assert rows["broken.jpg"]["message"]  # why, in the summary
    sheet = SheetImages()
    sheet.feed((out / SHEET).read_text(encoding="utf-8"))
    assert len(sheet.images) == 6  # before and after for each done photo
    for src in sheet.images:
        assert Image.open(out / src).size[0] <= 360


def test_the_batch_is_refused_before_anything_runs_when_it_cannot_be_done(
    tmp_path: Path,
) -> None:
    a, b = photos(tmp_path / "a", PHOTOS[:1])[0], photos(tmp_path / "b", PHOTOS[:1])[0]
    with pytest.raises(BadInput, match="would both be written as astronaut.ora"):
        collect([a, b], tmp_path / "out")
    with pytest.raises(BadInput, match="does not exist"):
        collect([tmp_path / "missing.jpg"], tmp_path / "out")
    with pytest.raises(BadInput, match="No photos found"):
        collect([str(tmp_path / "a" / "*.png")], tmp_path / "out")
    with pytest.raises(BadInput, match="Unknown format 'gif'"):
        collect([a], tmp_path / "out", "gif")
    out = tmp_path / "out"
    out.mkdir()
    (out / "astronaut.ora").write_bytes(b"the user's own file")  # never overwritten
    with pytest.raises(BadInput, match="not written by this batch"):
        run_batch(collect([a], out), BatchSpec(WARMER), out)
    assert (out / "astronaut.ora").read_bytes() == b"the user's own file"
    other = tmp_path / "other"
    run_batch(collect([a], other), BatchSpec(WARMER), other)
    with pytest.raises(BadInput, match="holds another batch"):  # a journal of another batch
        run_batch(collect([a], other), BatchSpec("make it cooler"), other)


def test_a_name_template_names_each_result_and_a_clash_is_refused_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--name '{n:03}-{name}-web': each result named from its photo and its number; a
    template that gives two photos one name, or holds a field it cannot, or a folder, is
    refused before anything runs, saying which fields it may hold."""
    sources = photos(tmp_path / "in", PHOTOS[:2])
    out = tmp_path / "out"
    args = ["batch", str(tmp_path / "in"), "-i", WARMER, "--format", "jpg"]
    assert main([*args, "-o", str(out), "--name", "{n:03}-{name}-web"]) == 0, (
        capsys.readouterr().err
    )
    capsys.readouterr()
    made = sorted(p.name for p in out.glob("*.jpg"))
    assert made == [f"{n:03}-{p.stem}-web.jpg" for n, p in enumerate(sorted(sources), 1)]
    for template, said in (("edited", "would both be written as edited.jpg"),
                           ("{name}-{camera}", "{name}, {n}, {date}"),
                           ("../{name}", "not a file name")):  # fmt: skip
        assert main([*args, "-o", str(tmp_path / "other"), "--name", template]) == 2
        assert said in capsys.readouterr().err
    assert not (tmp_path / "other").exists() or not any((tmp_path / "other").glob("*.jpg"))


def test_masks_come_from_the_masks_folder_by_photo_and_name(tmp_path: Path) -> None:
    source = photos(tmp_path / "in", ("coffee",))[0]
    width, height = Image.open(source).size
    masks = tmp_path / "masks"
    masks.mkdir()
    cup = np.zeros((height, width), dtype=np.uint8)
    cup[height // 4 : height // 2, width // 4 : width // 2] = 255
    Image.fromarray(cup).save(masks / "coffee.cup.png")
    items = collect([source], tmp_path / "out", "png", masks)
    assert {n: p.name for n, p in items[0].masks.items()} == {"cup": "coffee.cup.png"}

    out = tmp_path / "out"
    code = main(
        [
            "batch",
            str(source),
            "-i",
            "blur the cup",
            "--masks",
            str(masks),
            "-o",
            str(out),
            "--format",
            "png",
        ]
    )
    assert code == 0
    result = np.asarray(Image.open(out / "coffee.png").convert("RGB")).astype(int)
    photo = np.asarray(Image.open(source).convert("RGB")).astype(int)
    inside, outside = cup > 0, cup == 0
    assert np.abs(result - photo)[inside].mean() > 1.0  # blurred where the mask is
    assert np.abs(result - photo)[outside].max() <= 1  # nothing else (8-bit rounding)


def test_two_jobs_make_the_same_pixels_as_one(tmp_path: Path) -> None:
    sources = photos(tmp_path / "in", PHOTOS[:4])
    args = ["batch", str(tmp_path / "in"), "-i", "lift the shadows and add a vignette"]
    assert main([*args, "-o", str(tmp_path / "one")]) == 0
    assert main([*args, "-o", str(tmp_path / "two"), "--jobs", "2"]) == 0
    for source in sources:
        one = composite(read_layered(tmp_path / "one" / f"{source.stem}.ora"))
        two = composite(read_layered(tmp_path / "two" / f"{source.stem}.ora"))
        assert np.array_equal(one, two)


def test_a_reference_grades_every_photo_of_a_batch_alike(tmp_path: Path) -> None:
    """'match the colours of ref' with --ref, on two worker processes: every photo's
    colours move to the reference's, as one photo edited alone."""
    from layerpath.engine.plan.references import colour_stats

    sources = photos(tmp_path / "in", ("astronaut", "chelsea", "rocket"))
    reference = photos(tmp_path / "ref", ("coffee",))[0]
    words = ["-i", "match the colours of ref", f"--ref=ref={reference}"]
    assert main(["batch", str(tmp_path / "in"), *words, "-o", str(tmp_path / "out"), "--jobs", "2"]) == 0  # fmt: skip
    target = np.array(colour_stats(np.asarray(Image.open(reference)))["mean"])
    for source in sources:
        result = composite(read_layered(tmp_path / "out" / f"{source.stem}.ora"))
        before = np.array(colour_stats(np.asarray(Image.open(source)))["mean"])
        after = np.array(colour_stats(result[..., :3])["mean"])
        assert np.linalg.norm(after - target) < 0.5 * np.linalg.norm(before - target), source
    alone = tmp_path / "alone.ora"
    assert main(["edit", str(sources[0]), "match the colours of ref", f"--ref=ref={reference}", "-o", str(alone)]) == 0  # fmt: skip
    batch = composite(read_layered(tmp_path / "out" / f"{sources[0].stem}.ora"))
    assert np.array_equal(composite(read_layered(alone)), batch)


def test_a_resumed_batch_sweeps_what_a_killed_one_left_half_written(tmp_path: Path) -> None:
    """A kill in the middle of writing the summary or a result leaves its temporary file;
    the next run of the batch, holding the folder's lock, removes it however fresh (a
    stranger's dot-file beside them stays)."""
    photos(tmp_path / "in", PHOTOS[:1])
    out = tmp_path / "out"
    out.mkdir()
    torn = [out / ".batch.csv.k1ll3d.partial", out / ".astronaut.ora.x9q2ab.partial"]
    for path in torn:
        path.write_bytes(b"half a file")
    theirs = out / ".astronaut.ora.notes"
    theirs.write_text("mine")

    assert main(["batch", str(tmp_path / "in"), "-i", WARMER, "-o", str(out)]) == 0

    assert [p for p in torn if p.exists()] == []
    assert theirs.read_text() == "mine"
    assert read_layered(out / "astronaut.ora").layers


def test_a_second_batch_into_a_folder_in_use_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photos(tmp_path / "in", PHOTOS[:1])
    out = tmp_path / "out"
    out.mkdir()
    with FileLock(out / LOCK, timeout=0):  # another batch is writing there
        code = main(["batch", str(tmp_path / "in"), "-i", WARMER, "-o", str(out)])
        assert code == 2
        assert "Another layerpath batch is writing into" in capsys.readouterr().err
        assert not (out / "astronaut.ora").exists()
    assert main(["batch", str(tmp_path / "in"), "-i", WARMER, "-o", str(out)]) == 0


@pytest.mark.slow
def test_a_batch_killed_with_sigkill_resumes_and_makes_every_result_once(
    tmp_path: Path,
) -> None:
    """Killed after a few photos (the driver, and with it its two workers), run again:
    every result is there, reads back, and none finished before the kill was made
    again."""
    sources = photos(tmp_path / "in", PHOTOS, side=640)
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "layerpath", "batch", str(tmp_path / "in"),
        "-i", "reduce the noise and make it warmer", "-o", str(out), "--jobs", "2",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    done: list[str] = []
    while time.monotonic() < deadline and process.poll() is None:
        if (out / JOURNAL).exists():
            try:
                done = [n for n, (s, _) in journal_rows(out).items() if s == "done"]
            except sqlite3.Error:
                done = []
            if len(done) >= 2:
                break
        time.sleep(0.05)
    assert process.poll() is None, "the batch ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert 2 <= len(done) < len(sources)
    made_before = {n: os.stat(out / f"{Path(n).stem}.ora") for n in done}
    assert not any(p.name.startswith(".") for p in out.iterdir() if p.suffix == ".ora")

    again = subprocess.run(command, capture_output=True, text=True, timeout=300)

    assert again.returncode == 0, again.stderr
    assert "finished earlier" in again.stdout
    rows = journal_rows(out)
    assert {n: s for n, (s, _) in rows.items()} == {p.name: "done" for p in sources}
    assert all(writes == 1 for _, writes in rows.values())  # each result written once
    for source in sources:
        result = read_layered(out / f"{source.stem}.ora")  # whole and readable
        assert np.array_equal(original(result), np.asarray(Image.open(source).convert("RGBA")))
    for name, stat in made_before.items():  # what was finished was not made again
        now = os.stat(out / f"{Path(name).stem}.ora")
        assert (now.st_ino, now.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".")]
    assert leftovers == [], leftovers  # no torn temporary files


@pytest.mark.slow
def test_ray_makes_the_same_pixels_as_the_local_run(tmp_path: Path) -> None:
    """A real local Ray (2 CPUs, started by --ray auto when none is running): each photo
    travels to a Ray task as bytes and its result comes back; the pixels are those of
    the run on this machine."""
    ray = pytest.importorskip("ray")
    sources = photos(tmp_path / "in", PHOTOS[:4])
    args = ["batch", str(tmp_path / "in"), "-i", "make it black and white and add a vignette"]
    assert main([*args, "-o", str(tmp_path / "local")]) == 0
    try:
        assert main([*args, "-o", str(tmp_path / "ray"), "--ray", "auto", "--jobs", "2"]) == 0
        assert ray.is_initialized() and ray.cluster_resources()["CPU"] == 2
    finally:
        ray.shutdown()
    for source in sources:
        local = read_layered(tmp_path / "local" / f"{source.stem}.ora")
        remote = read_layered(tmp_path / "ray" / f"{source.stem}.ora")
        assert len(local.layers) == len(remote.layers)
        assert np.array_equal(composite(local), composite(remote))
    rows = journal_rows(tmp_path / "ray")
    assert {s for s, _ in rows.values()} == {"done"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a fork server (POSIX)")
def test_photo_workers_start_with_the_engine_loaded() -> None:
    """Workers for photos at once are forked from a fork server that loaded the engine
    (spawned, each loaded it afresh: 0.4 s of a core apiece); in a host's Python they
    are spawned by that Python."""
    from concurrent.futures import ProcessPoolExecutor

    from layerpath.workers import WORKER_MODULE, worker_context

    context = worker_context(sys.executable)
    assert context.get_start_method() == "forkserver"
    probe = f"{WORKER_MODULE!r} in __import__('sys').modules"
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        assert pool.submit(eval, probe).result(timeout=120) is True
    assert worker_context("/opt/host/bin/python3.11").get_start_method() == "spawn"


#: a fresh `layerpath batch ...` whose command line stops once the arguments are read
#: (the engine's own entry replaced): is the fork server running, and the engine loaded?
EARLY_PROBE = """
import os, sys, types

def main(argv):
    kids = [p for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/stat")
            and open(f"/proc/{p}/stat").read().split(") ")[-1].split()[1] == str(os.getpid())]
    lines = [open(f"/proc/{p}/cmdline", "rb").read() for p in kids]
    print(any(b"multiprocessing.forkserver" in line for line in lines),
          "layerpath.engine.hosts.batch" in sys.modules)
    return 0

sys.modules["layerpath.plugin.cli"] = types.ModuleType("layerpath.plugin.cli")
sys.modules["layerpath.plugin.cli"].main = main
from layerpath.plugin import app
app.main(["batch", "photos", "-i", "make it warmer", "-o", "out", *sys.argv[1:]])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, a fork server")
@pytest.mark.parametrize("jobs,server", [("2", "True"), ("1", "False")])
def test_photos_at_once_start_the_fork_server_before_the_engine(jobs: str, server: str) -> None:
    """`layerpath batch --jobs 2` starts the fork server before it loads the engine
    itself, so the two load side by side; one photo at a time starts none."""
    done = subprocess.run(
        [sys.executable, "-c", EARLY_PROBE, "--jobs", jobs],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [server, "False"]
