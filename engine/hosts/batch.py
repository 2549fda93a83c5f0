"""Batch: one instruction or one saved action over many photos, without Qt.

`layerpath batch`, the editor's and the Krita docker's batch dialog and `--ray` all run
through `run_batch`. Each photo is a RunSession over its file, written to
`OUT_DIR/<stem>.<format>`. A journal (SQLite, in OUT_DIR) says which photos are done,
so the same command run again after a kill or a cancel goes on where it stopped and
makes no finished file twice. A photo that fails is listed and the batch goes on. At
the end (and after every photo) `batch.csv` and `contact-sheet.html` (before/after
thumbnails, status, seconds) describe the whole batch.

Only the driver writes: workers (processes here, or Ray's) return the file's bytes and
the thumbnails, and the driver marks the photo 'writing', writes the file atomically
and marks it 'done'. A kill between the two leaves a whole file and a 'writing' row,
which the next run takes as done.
"""

from __future__ import annotations

import csv
import dataclasses
import glob
import hashlib
import html
import io
import json
import logging
import os
import signal
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

import numpy as np
from filelock import FileLock, Timeout
from PIL import Image

from layerpath.choices import BATCH_FORMATS, SHEET, SUMMARY
from layerpath.engine.files.io import (
    HEIF_SUFFIXES,
    IMAGE_SUFFIXES,
    LAYERED_SUFFIXES,
    RAW_SUFFIXES,
    composite,
    read_layered,
)
from layerpath.engine.hosts.document import LayeredDocument
from layerpath.engine.types import Mode
from layerpath.errors import BadInput, LayerpathError, shown
from layerpath.files import output_refusal, regular_file, sweep_leftovers, write_atomically
from layerpath.settings import Settings

log = logging.getLogger(__name__)

PHOTO_SUFFIXES = IMAGE_SUFFIXES | RAW_SUFFIXES | HEIF_SUFFIXES | LAYERED_SUFFIXES
FORMATS = BATCH_FORMATS
JOURNAL = "layerpath-batch.sqlite"
LOCK = "layerpath-batch.lock"  # held while a batch runs in the folder
THUMBS = "contact-sheet"  # the thumbnails' folder, beside the sheet
THUMB_SIDE = 360  # the thumbnails' files (sharp on a high-density screen)
SHOWN_SIDE = 220  # as the sheet shows them: a few photos to a row


# --- what to do ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchItem:
    """One photo: its file, its masks by name, where its result goes."""

    source: Path
    masks: Mapping[str, Path]
    output: Path

    @property
    def stem(self) -> str:
        return self.source.stem

    def inputs(self) -> str:
        """What the photo's result was made from: the photo's size and time, its masks'
        contents. A photo or mask changed since its result was written is done again."""
        digest = hashlib.sha256()
        status = self.source.stat()
        digest.update(f"{status.st_size}:{status.st_mtime_ns}".encode())
        for name, path in sorted(self.masks.items()):
            digest.update(name.encode("utf-8") + b"\0" + path.read_bytes())
        return digest.hexdigest()[:32]


@dataclass(frozen=True)
class BatchSpec:
    """The same edit for every photo: an instruction, or a saved action (its JSON)."""

    instruction: str | None = None
    action: Mapping[str, Any] | None = None
    format: str = "ora"
    alpha: float = 1.0
    mode: Mode = Mode.FAST_SLOW
    settings: Settings = field(default_factory=Settings)
    # the references the instruction names, the same for every photo (by name: a
    # Reference of engine/plan/references.py, read once, sent with the spec)
    references: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        if self.action is not None:
            return f"action '{self.action.get('name', '?')}'"
        return f"'{self.instruction}'"

    def fingerprint(self) -> str:
        """What makes two batches the same batch (the journal keeps it)."""
        return json.dumps(
            {
                "instruction": self.instruction,
                "action": self.action,
                "format": self.format,
                "alpha": self.alpha,
                "mode": self.mode.value,
                "references": {n: _digest_of(r) for n, r in self.references.items()},
            },
            sort_keys=True,
        )


def _digest_of(reference: Any) -> str:
    """A reference's file name and what it holds (its pixels, words or sound): a
    reference replaced under the same name is another batch."""
    digest = hashlib.sha256()
    for part in (reference.pixels, reference.text, reference.sound):
        if isinstance(part, np.ndarray):
            digest.update(repr(part.shape).encode() + part.tobytes())
        elif isinstance(part, str):
            digest.update(part.encode("utf-8"))
        elif isinstance(part, bytes):
            digest.update(part)
    return f"{reference.source}:{digest.hexdigest()[:32]}"


#: what a result's name template may hold: the photo's name (without its suffix), its
#: number in the batch (from 1; "{n:03}" pads it), and the day
NAME_FIELDS = ("name", "n", "date")


def result_name(template: str, stem: str, number: int) -> str:
    """A result's file name (without its suffix) from the template: '{name}-web' ->
    'IMG_0001-web'; a clear error for a field it does not know or a folder in it."""
    import datetime

    try:
        made = template.format(name=stem, n=number, date=datetime.date.today().isoformat())
    except (KeyError, IndexError, ValueError) as exc:
        fields = ", ".join("{" + f + "}" for f in NAME_FIELDS)
        raise BadInput(
            f"The name template {shown(template, 80)} does not work ({exc}); it may hold "
            f"{fields} (e.g. '{{name}}-edited' or '{{n:03}}-{{name}}')."
        ) from exc
    if not made.strip() or any(c in made for c in "/\\\0") or made in (".", ".."):
        raise BadInput(
            f"The name template {shown(template, 80)} makes {shown(made, 80)!r}, which is not a "
            "file name (no folders: the results go into the -o folder)."
        )
    return made


def collect(
    sources: Sequence[str | Path],
    out_dir: Path,
    fmt: str = "ora",
    masks: Path | None = None,
    name: str = "{name}",
) -> list[BatchItem]:
    """The photos that files, folders (their photos, not sub-folders) and globs name, in
    order, each once; their masks from `masks` (`<stem>.<name>.png`); each result named
    by the template `name` (result_name). Refused before anything runs: nothing found, a
    format layerpath does not write, two photos whose results would have one name (they
    would overwrite each other), a result that would overwrite a photo."""
    if fmt not in FORMATS:
        raise BadInput(f"Unknown format '{fmt}'; choose one of {', '.join(FORMATS)}.")
    result_name(name, "IMG_0001", 1)  # (a template that cannot work: said first)
    problem = output_refusal(out_dir.expanduser(), replace=True, folder=True)
    if problem is not None:  # (layerpath's own folders, a file given as the folder)
        raise BadInput(problem + ".")
    found: list[Path] = []
    out_resolved = out_dir.expanduser().resolve()
    for source in sources:
        text = str(source)
        path = Path(text).expanduser()
        if path.is_dir():
            if path.resolve() == out_resolved:
                raise BadInput(
                    f"The results would be written among the photos of {shown(text, 200)}, "
                    "and taken for photos on the next run; give another -o folder."
                )
            for entry in sorted(path.iterdir()):
                if entry.suffix.lower() not in PHOTO_SUFFIXES:
                    continue
                try:  # (a sub-folder, a pipe, a looping link among the photos: passed over)
                    regular_file(entry, "photo")
                except BadInput as exc:
                    log.warning("passed over: %s", exc)
                    continue
                found.append(entry)
        elif os.path.lexists(path) and not glob.has_magic(text):
            found.append(path)
        elif glob.has_magic(text):
            matched = sorted(Path(p) for p in glob.glob(os.path.expanduser(text)))
            found += [p for p in matched if p.suffix.lower() in PHOTO_SUFFIXES]
        else:
            raise BadInput(f"{shown(text, 200)} does not exist.")
    for photo in found:  # a pipe, a device, a link that loops: said before anything runs
        regular_file(photo, "photo")
    photos = list(dict.fromkeys(p.resolve() for p in found))
    if not photos:
        raise BadInput("No photos found in " + ", ".join(shown(str(s), 200) for s in sources) + ".")
    if masks is not None and not masks.is_dir():
        raise BadInput(f"The masks folder {shown(str(masks), 200)} does not exist.")
    stems: dict[str, Path] = {}
    named: dict[str, Path] = {}
    for number, photo in enumerate(photos, 1):
        result = result_name(name, photo.stem, number) + FORMATS[fmt]
        clash = stems.get(photo.stem) or named.get(result.lower())
        if clash is not None:
            raise BadInput(
                f"{shown(str(clash), 200)} and {shown(str(photo), 200)} would both be written "
                f"as {shown(result, 200)}; rename one, put {{n}} in --name, or run them as two "
                "batches."
            )
        stems[photo.stem] = photo
        named[result.lower()] = photo
    out_dir = out_dir.expanduser().resolve()
    items = []
    for number, photo in enumerate(photos, 1):
        output = out_dir / f"{result_name(name, photo.stem, number)}{FORMATS[fmt]}"
        if output == photo:
            raise BadInput(
                f"The result for {shown(str(photo), 200)} would overwrite it; choose another "
                "-o folder."
            )
        items.append(BatchItem(photo, _masks_of(photo.stem, masks, set(stems)), output))
    return items


def _masks_of(stem: str, folder: Path | None, stems: Iterable[str] = ()) -> dict[str, Path]:
    """`<stem>.<name>.png` in the masks folder, by name; a file that begins with a
    longer stem of the batch (`p.v2.cup.png` when both p.jpg and p.v2.jpg are there) is
    that photo's mask, not this one's."""
    if folder is None:
        return {}
    prefix = stem + "."
    longer = [other + "." for other in stems if other != stem and other.startswith(prefix)]
    found = {}
    for p in sorted(folder.iterdir()):
        if (
            p.name.startswith(prefix)
            and p.name.lower().endswith(".png")
            and len(p.name) > len(prefix) + len(".png")
            and not any(p.name.startswith(other) for other in longer)
        ):
            regular_file(p, "mask")
            found[p.name[len(prefix) : -len(".png")]] = p
    return found


# --- the journal --------------------------------------------------------------------------


JOURNAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS batch (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS photos (
    source TEXT PRIMARY KEY,
    output TEXT NOT NULL,
    state TEXT NOT NULL,           -- pending, running, writing, done, partial, failed
    started REAL,
    finished REAL,
    seconds REAL,                  -- the photo's whole job, in its worker
    tool_seconds REAL,             -- of which in the tools
    run_seconds REAL,              -- of which the edit (planning, tools, checks)
    engine_seconds REAL,           -- before it, building the worker's engine (its first)
    worker INTEGER,                -- the worker process
    began REAL,                    -- when its worker began it
    done INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    message TEXT NOT NULL DEFAULT '',
    writes INTEGER NOT NULL DEFAULT 0, -- how many times its result was written
    inputs TEXT NOT NULL DEFAULT ''    -- what it was made from (BatchItem.inputs)
);
"""
FINISHED = ("done", "partial")


class Journal:
    """What the batch in OUT_DIR has done (SQLite; only the driver writes it). It holds
    the folder's lock while open: one batch at a time writes into a folder, so what a
    killed one left half-written there can be swept at once."""

    def __init__(self, out_dir: Path, spec: BatchSpec) -> None:
        self.path = out_dir / JOURNAL
        _check_own_names(out_dir)
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            # the OS frees the lock when its process dies, kill -9 included
            self._lock = FileLock(out_dir / LOCK, timeout=0)
            self._lock.acquire()
        except Timeout as exc:
            raise BadInput(
                f"Another layerpath batch is writing into {out_dir}; let it finish or stop "
                "it, or give another -o folder."
            ) from exc
        except OSError as exc:
            raise BadInput(f"Cannot keep a batch journal in {out_dir}: {exc}.") from exc
        try:
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(JOURNAL_SCHEMA)
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(photos)")}
            if "inputs" not in columns:  # (a journal an earlier layerpath began)
                self._db.execute("ALTER TABLE photos ADD COLUMN inputs TEXT NOT NULL DEFAULT ''")
            row = self._db.execute("SELECT value FROM batch WHERE key = 'spec'").fetchone()
        except (sqlite3.Error, OSError) as exc:
            self._lock.release()
            raise BadInput(f"Cannot keep a batch journal in {out_dir}: {exc}.") from exc
        if row is None:
            self._db.execute("INSERT INTO batch VALUES ('spec', ?)", (spec.fingerprint(),))
        elif row[0] != spec.fingerprint():
            before = json.loads(row[0])
            now = json.loads(spec.fingerprint())
            changed = sorted(
                name
                for name in {*before.get("references", {}), *now["references"]}
                if before.get("references", {}).get(name) != now["references"].get(name)
            )
            self.close()
            if changed and {**before, "references": None} == {**now, "references": None}:
                raise BadInput(
                    f"The reference '{shown(changed[0], 40)}' is not the one the batch in "
                    f"{out_dir} began with; its finished photos were matched to the old "
                    "one. Give another -o folder, put the old reference back, or delete "
                    f"{JOURNAL} there to start it over."
                )
            what = (
                f"action '{before['action'].get('name')}'"
                if before.get("action")
                else f"'{shown(str(before.get('instruction')))}'"
            )
            raise BadInput(
                f"{out_dir} holds another batch ({what}, as {before.get('format')}); give "
                f"another -o folder, or delete {JOURNAL} there to start it over."
            )

    def close(self) -> None:
        self._db.close()
        self._lock.release()

    def rows(self) -> dict[str, dict[str, Any]]:
        cursor = self._db.execute("SELECT * FROM photos")
        names = [d[0] for d in cursor.description]
        return {r[0]: dict(zip(names, r, strict=True)) for r in cursor.fetchall()}

    def to_do(self, items: Sequence[BatchItem]) -> tuple[list[BatchItem], int]:
        """The photos still to do, and how many are finished already. A result caught
        between written and marked (a kill) counts as finished. An existing file the
        batch did not write is never overwritten: refused before anything runs."""
        rows = self.rows()
        todo, finished = [], 0
        for item in items:
            row = rows.get(str(item.source))
            state = row["state"] if row else None
            made_from = item.inputs()
            if row and row["inputs"] and row["inputs"] != made_from:  # changed: done again
                state = "pending"
                self._db.execute(
                    "UPDATE photos SET state = 'pending', inputs = ? WHERE source = ?",
                    (made_from, str(item.source)),
                )
            if state in FINISHED and item.output.exists():
                finished += 1
                continue
            if state == "writing" and item.output.exists() and _readable(item.output):
                self._db.execute(
                    "UPDATE photos SET state = CASE WHEN failed > 0 THEN 'partial' ELSE 'done'"
                    " END, finished = ? WHERE source = ?",
                    (time.time(), str(item.source)),
                )
                finished += 1
                continue
            if item.output.exists() and not (row and row["writes"]):
                raise BadInput(
                    f"{item.output} exists and was not written by this batch; it is not "
                    "overwritten: move it, or give another -o folder."
                )
            todo.append(item)
            if row is None:
                self._db.execute(
                    "INSERT INTO photos (source, output, state, inputs) VALUES (?, ?, 'pending', ?)",
                    (str(item.source), str(item.output), made_from),
                )
        return todo, finished

    def started(self, item: BatchItem) -> None:
        self._db.execute(
            "UPDATE photos SET state = 'running', started = ? WHERE source = ?",
            (time.time(), str(item.source)),
        )

    def writing(self, item: BatchItem, outcome: PhotoOutcome) -> None:
        self._db.execute(
            "UPDATE photos SET state = 'writing', seconds = ?, tool_seconds = ?, done = ?,"
            " failed = ?, message = ?, writes = writes + 1 WHERE source = ?",
            (
                outcome.seconds,
                outcome.tool_seconds,
                outcome.done,
                outcome.failed,
                outcome.message,
                str(item.source),
            ),
        )

    def ended(self, item: BatchItem, outcome: PhotoOutcome, state: str) -> None:
        self._db.execute(
            "UPDATE photos SET state = ?, finished = ?, seconds = ?, tool_seconds = ?,"
            " run_seconds = ?, engine_seconds = ?, worker = ?, began = ?, done = ?,"
            " failed = ?, message = ? WHERE source = ?",
            (
                state,
                time.time(),
                outcome.seconds,
                outcome.tool_seconds,
                outcome.run_seconds,
                outcome.engine_seconds,
                outcome.worker,
                outcome.started,
                outcome.done,
                outcome.failed,
                outcome.message,
                str(item.source),
            ),
        )

    def pending(self, item: BatchItem) -> None:
        """Back to be done (a cancelled photo)."""
        self._db.execute(
            "UPDATE photos SET state = 'pending' WHERE source = ?", (str(item.source),)
        )


def _check_own_names(out_dir: Path) -> None:
    """A batch's own files in its folder (journal, lock, summary, contact sheet and its
    thumbnails) are its own: a link planted under one of their names is not followed
    (it could lead into layerpath's stores or the user's pictures), and a folder a batch
    did not begin (no journal) that already holds one is not written over."""
    names = (JOURNAL, f"{JOURNAL}-wal", f"{JOURNAL}-shm", LOCK, SUMMARY, SHEET, THUMBS)
    for name in names:
        if (out_dir / name).is_symlink():
            raise BadInput(
                f"{shown(str(out_dir / name), 200)} is a link; a batch writes its own file "
                "there and does not follow links. Remove it, or give another -o folder."
            )
    if not (out_dir / JOURNAL).exists():
        there = [n for n in (SUMMARY, SHEET, THUMBS) if os.path.lexists(out_dir / n)]
        if there:
            raise BadInput(
                f"The folder {shown(str(out_dir), 200)} already holds {', '.join(there)}, "
                "which a batch would write over, and no batch began there; give another "
                "-o folder, or move them."
            )


def _readable(path: Path) -> bool:
    try:
        read_layered(path)
    except (LayerpathError, OSError, ValueError):
        return False
    return True


# --- one photo (in a worker) --------------------------------------------------------------


@dataclass(frozen=True)
class PhotoOutcome:
    """What a worker made of one photo. `data` is the result file's bytes (None when
    nothing was made); the thumbnails are JPEG bytes."""

    source: str
    ok: bool
    done: int
    failed: int
    seconds: float
    tool_seconds: float
    message: str
    data: bytes | None = None
    before: bytes | None = None
    after: bytes | None = None
    cancelled: bool = False
    started: float = 0.0  # when the worker began it (time.time())
    engine_seconds: float = 0.0  # building the engine, when this photo was the first
    run_seconds: float = 0.0  # the edit itself (planning, tools, checks), of `seconds`
    worker: int = 0  # the process that made it


_engine_cache: dict[str, Any] = {}


def _engine(settings: Settings) -> tuple[Any, float]:
    """The engine of this process, built once (the models each tool loads stay loaded
    for the next photo); the seconds its building took (0 once built)."""
    key = settings.model_dump_json()
    if key in _engine_cache:
        return _engine_cache[key], 0.0
    from layerpath.engine.factory import engine_for
    from layerpath.engine.learn.traces import user_traces

    start = time.perf_counter()
    engine, _ = engine_for(settings, user_traces(settings))
    _engine_cache.clear()
    _engine_cache[key] = engine
    return engine, time.perf_counter() - start


def thumbnail(pixels: np.ndarray, side: int = THUMB_SIDE) -> bytes:
    """A JPEG no larger than `side` on its long side, on white where transparent."""
    picture = Image.fromarray(pixels, "RGBA")
    picture.thumbnail((side, side), Image.Resampling.LANCZOS)
    flat = Image.new("RGB", picture.size, (255, 255, 255))
    flat.paste(picture, mask=picture.getchannel("A"))
    out = io.BytesIO()
    flat.save(out, "JPEG", quality=85)
    return out.getvalue()


def process(
    item: BatchItem,
    spec: BatchSpec,
    data: Mapping[str, bytes] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> PhotoOutcome:
    """Run the batch's edit on one photo; never raises for the photo's own problems (a
    failed photo is an outcome). `data` holds the photo's and its masks' bytes by name
    when this worker cannot see the driver's files (a Ray node)."""
    started = time.time()
    clock = time.perf_counter()
    with _local_files(item, data) as (source, masks):
        try:
            engine, built = _engine(spec.settings)
            outcome = _edit(source, masks, item, spec, engine, cancel)
        except LayerpathError as exc:
            outcome = PhotoOutcome(str(item.source), False, 0, 0, 0.0, 0.0, str(exc))
            built = 0.0
        except Exception as exc:  # a photo's crash stops no batch
            log.info("batch: %s crashed", item.source, exc_info=True)
            outcome = PhotoOutcome(
                str(item.source), False, 0, 0, 0.0, 0.0, f"crashed: {type(exc).__name__}: {exc}"
            )
            built = 0.0
    return dataclasses.replace(
        outcome,
        seconds=time.perf_counter() - clock,
        started=started,
        engine_seconds=built,
        worker=os.getpid(),
    )


@contextmanager
def _local_files(
    item: BatchItem, data: Mapping[str, bytes] | None
) -> Iterator[tuple[Path, dict[str, Path]]]:
    if data is None:
        yield item.source, dict(item.masks)
        return
    with tempfile.TemporaryDirectory(prefix="layerpath-batch-") as folder:
        source = Path(folder) / item.source.name
        source.write_bytes(data["source"])
        masks: dict[str, Path] = {}
        for name in item.masks:
            masks[name] = Path(folder) / f"mask-{len(masks)}.png"
            masks[name].write_bytes(data[f"mask:{name}"])
        yield source, masks


def _edit(
    source: Path,
    masks: Mapping[str, Path],
    item: BatchItem,
    spec: BatchSpec,
    engine: Any,
    cancel: Callable[[], bool] | None,
) -> PhotoOutcome:
    from layerpath.engine.hosts.session import RunSession
    from layerpath.engine.learn.actions import validated

    settings = spec.settings
    document = LayeredDocument.open(source, masks, int(settings.max_megapixels * 1e6))
    session = RunSession(document, settings, engine_factory=lambda: engine)
    action = None
    if spec.action is not None:
        action = validated(spec.action, engine.registry)
    request = session.request(
        spec.instruction or f"action: {action.name if action else ''}",
        alpha=spec.alpha,
        mode=spec.mode,
        action=action,
        references=spec.references,
    )
    clock = time.perf_counter()
    result = session.run(request, cancel=cancel)
    run_seconds = time.perf_counter() - clock
    done = sum(1 for o in result.outcomes if o.ok)
    failed = len(result.plan) - done
    tools = sum(c.seconds for c in result.calls)
    why = "; ".join(
        f"{o.subtask.describe()}: {shown(str(o.error), 200)}" for o in result.outcomes if not o.ok
    )
    if result.cancelled:
        return PhotoOutcome(
            str(item.source), False, done, failed, 0, tools, "cancelled", cancelled=True
        )
    if not session.layers():
        return PhotoOutcome(
            str(item.source), False, done, failed, 0, tools, why or "no step made a layer"
        )
    with tempfile.TemporaryDirectory(prefix="layerpath-batch-") as folder:
        written = document.save(Path(folder) / item.output.name)
        payload = written.read_bytes()
    after = composite(document.image)
    return PhotoOutcome(
        str(item.source),
        failed == 0,
        done,
        failed,
        0,
        tools,
        why,
        data=payload,
        before=thumbnail(request.snapshot.image),  # (the picture before, composited once)
        after=thumbnail(after),
        run_seconds=run_seconds,
    )


#: what a pool worker started by a host runs first (see _pool_run)
WORKER_BOOT = """import os, site, sys, sysconfig
own = [sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]]
own.append(os.path.join(own[0], "lib-dynload"))
def foreign(folder):  # another Python's standard library, from the host's path
    return folder not in own and (
        os.path.exists(os.path.join(folder, "os.py")) or folder.endswith("lib-dynload")
    )
sys.path[:] = own + [p for p in sys.path if p not in own and not foreign(p)]
for folder in {folders!r}:
    if not foreign(folder):
        site.addsitedir(folder)
from layerpath.engine.hosts.batch import _worker_start
_worker_start({threads})
"""


def _worker_start(threads: int = 0) -> None:
    """A pool worker: Ctrl-C is the driver's to handle, and the worker dies with it. It
    works on `threads` threads (OpenCV's, and the bands a tool makes at once: the
    machine's cores shared among the workers, so side by side they do not crowd them)."""
    from layerpath.memory import reuse_freed_memory

    reuse_freed_memory()
    if threads:
        import cv2

        cv2.setNumThreads(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the worker ends when its queue closes


# --- the driver -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """After each photo: how far the batch is, and what that photo came to."""

    finished: int  # photos finished, those of earlier runs included
    total: int
    outcome: PhotoOutcome | None
    eta_s: float | None  # seconds left at the pace so far (None before the first photo)


@dataclass
class BatchReport:
    total: int
    skipped: int  # finished by an earlier run
    done: int = 0
    partial: int = 0
    failed: int = 0
    cancelled: bool = False
    seconds: float = 0.0
    driver_seconds: float = 0.0  # writing results, the journal and the summary
    outcomes: list[PhotoOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.cancelled and self.partial == 0 and self.failed == 0


#: runs photos: (to do, spec, started(photo), finished(outcome), asked to stop?)
Runner = Callable[
    [
        Sequence[BatchItem],
        BatchSpec,
        Callable[[BatchItem], None],
        Callable[[PhotoOutcome], None],
        Callable[[], bool],
    ],
    None,
]


def run_batch(
    items: Sequence[BatchItem],
    spec: BatchSpec,
    out_dir: Path,
    *,
    jobs: int = 1,
    runner: Runner | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> BatchReport:
    """Run the batch: the photos the journal has not finished, on `jobs` processes (or
    the given runner: Ray's), each result written as it comes; the summary and the
    contact sheet written after every photo."""
    cancel = cancel or (lambda: False)
    out_dir = out_dir.expanduser().resolve()
    journal = Journal(out_dir, spec)
    try:
        _sweep_leftovers(out_dir, items)
        todo, skipped = journal.to_do(items)
        report = BatchReport(len(items), skipped)
        start = time.perf_counter()
        by_source = {str(i.source): i for i in todo}
        stopped: list[str] = []  # why the batch stopped short (a result it cannot write)

        def finished(outcome: PhotoOutcome) -> None:
            item = by_source[outcome.source]
            clock = time.perf_counter()
            if outcome.cancelled:
                journal.pending(item)
                report.cancelled = True
                return
            state = "failed"
            if outcome.data is not None:
                journal.writing(item, outcome)
                try:
                    write_atomically(item.output, lambda file: file.write(outcome.data or b""))
                    _write_thumbs(out_dir, item, outcome)
                except OSError as exc:  # (a full disk: the photo is done again next time)
                    journal.pending(item)
                    stopped.append(
                        f"Cannot write {shown(str(item.output), 200)}: {exc.strerror or exc}. "
                        "Nothing written before was touched; make room and run the same "
                        "command again to go on."
                    )
                    return
                state = "done" if outcome.ok else "partial"
            journal.ended(item, outcome, state)
            report.outcomes.append(outcome)
            setattr(report, state, getattr(report, state) + 1)
            made = len(report.outcomes)
            pace = (time.perf_counter() - start) / made
            left = len(todo) - made
            try:
                write_summary(out_dir, items, journal)
            except OSError as exc:  # (the result is written; the summary waits for room)
                stopped.append(
                    f"Cannot write the batch's summary in {shown(str(out_dir), 200)}: "
                    f"{exc.strerror or exc}. Make room and run the same command again."
                )
            report.driver_seconds += time.perf_counter() - clock
            if on_progress is not None:
                on_progress(Progress(skipped + made, len(items), outcome, pace * left))

        if on_progress is not None:
            on_progress(Progress(skipped, len(items), None, None))
        if todo:
            (runner or local_runner(jobs))(
                todo, spec, journal.started, finished, lambda: cancel() or bool(stopped)
            )
        report.cancelled = report.cancelled or (cancel() and len(report.outcomes) < len(todo))
        report.seconds = time.perf_counter() - start
        try:
            write_summary(out_dir, items, journal)
        except OSError as exc:
            stopped.append(
                f"Cannot write the batch's summary in {shown(str(out_dir), 200)}: "
                f"{exc.strerror or exc}. Make room and run the same command again."
            )
        if stopped:
            raise BadInput(stopped[0])
        return report
    finally:
        journal.close()


def local_runner(jobs: int) -> Runner:
    """This machine: in this process (jobs 1: a cancel stops inside the photo), or on
    `jobs` worker processes."""

    def run(
        todo: Sequence[BatchItem],
        spec: BatchSpec,
        started: Callable[[BatchItem], None],
        finished: Callable[[PhotoOutcome], None],
        cancel: Callable[[], bool],
    ) -> None:
        if jobs <= 1:
            for item in todo:
                if cancel():
                    return
                started(item)
                finished(process(item, spec, cancel=cancel))
            return
        _pool_run(todo, spec, finished, cancel, jobs, started)

    return run


def _pool_run(
    todo: Sequence[BatchItem],
    spec: BatchSpec,
    finished: Callable[[PhotoOutcome], None],
    cancel: Callable[[], bool],
    jobs: int,
    started: Callable[[BatchItem], None],
) -> None:
    """`jobs` worker processes, each building its engine once; a photo is handed out
    when a worker is free, so a cancel leaves the rest untouched."""
    from layerpath.engine.learn.learning import host_python
    from layerpath.workers import worker_context

    python = host_python()
    if python is None:
        raise BadInput(
            f"Photos at once need a Python {sys.version_info[0]}.{sys.version_info[1]} on "
            "PATH (this program embeds Python); do one photo at a time meanwhile."
        )
    # forked from a fork server with the engine loaded (never from this process, which
    # has threads), or in a host spawned by its Python
    context = worker_context(python)
    # A host's Python may hand its children no `site` (-S), its own standard library
    # (of another build of this Python version) and find layerpath only through folders
    # it added itself: each worker first puts its own standard library first and reads
    # this process's other folders as sites (their .pth files: an editable install's
    # finder), before anything of layerpath is unpickled (`exec`, the initializer, is a
    # builtin).
    folders = [p for p in sys.path if p and Path(p).is_dir()]
    boot: tuple[str, dict[str, Any]] = (
        WORKER_BOOT.format(folders=folders, threads=max(1, (os.cpu_count() or 1) // jobs)),
        {},
    )  # (exec with globals of its own)
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=exec, initargs=boot) as pool:

        def ready(futures: list[Future[PhotoOutcome]]) -> list[Future[PhotoOutcome]]:
            return list(wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)[0])

        hand_out(
            todo,
            jobs,
            lambda item: pool.submit(process, item, spec),
            ready,
            lambda future: future.result(),
            "its worker stopped",  # (memory, a signal)
            started,
            finished,
            cancel,
        )


def hand_out(
    todo: Sequence[BatchItem],
    width: int,
    submit: Callable[[BatchItem], Any],
    ready: Callable[[list[Any]], list[Any]],
    result: Callable[[Any], PhotoOutcome],
    lost: str,
    started: Callable[[BatchItem], None],
    finished: Callable[[PhotoOutcome], None],
    cancel: Callable[[], bool],
) -> None:
    """Hand photos to workers (a process pool's, Ray's), at most `width` at once, a new
    one when one is free, so a cancel leaves the rest untouched; each outcome as it
    comes. A worker that goes away (`result` raises) fails its photo with `lost`."""
    queue = list(todo)
    running: dict[Any, BatchItem] = {}
    while queue or running:
        while queue and len(running) < width and not cancel():
            item = queue.pop(0)
            started(item)
            running[submit(item)] = item
        if not running:
            return
        for handle in ready(list(running)):
            item = running.pop(handle)
            try:
                outcome = result(handle)
            except Exception as exc:
                outcome = PhotoOutcome(str(item.source), False, 0, 0, 0.0, 0.0, f"{lost}: {exc}")
            finished(outcome)


def _sweep_leftovers(out_dir: Path, items: Sequence[BatchItem]) -> None:
    """The temporary files a killed batch left half-written in its folder, of any age:
    with the folder's lock held, no write of them is alive."""
    for path in (out_dir / SUMMARY, out_dir / SHEET):
        sweep_leftovers(path, older_than=0)
    for item in items:
        sweep_leftovers(item.output, older_than=0)
        for which in ("before", "after"):
            sweep_leftovers(out_dir / THUMBS / f"{item.stem}.{which}.jpg", older_than=0)


def _put(data: bytes, file: BinaryIO) -> None:
    file.write(data)


def _write_thumbs(out_dir: Path, item: BatchItem, outcome: PhotoOutcome) -> None:
    folder = out_dir / THUMBS
    folder.mkdir(exist_ok=True)
    for which, data in (("before", outcome.before), ("after", outcome.after)):
        if data is not None:
            write_atomically(folder / f"{item.stem}.{which}.jpg", partial(_put, data))


# --- the summary ------------------------------------------------------------------------------

STATUS_WORDS = {
    "done": "done",
    "partial": "partly done",
    "failed": "failed",
    "pending": "not done yet",
    "running": "not done yet",
    "writing": "not done yet",
}


def write_summary(out_dir: Path, items: Sequence[BatchItem], journal: Journal) -> None:
    """batch.csv and contact-sheet.html for every photo of the batch, in order."""
    rows = journal.rows()
    lines = []
    for item in items:
        row = rows.get(str(item.source)) or {"state": "pending"}
        lines.append((item, row))
    table = io.StringIO()
    writer = csv.writer(table)
    writer.writerow(
        [
            "photo",
            "status",
            "result",
            "seconds",
            "tool_seconds",
            "steps_done",
            "steps_failed",
            "message",
        ]
    )
    for item, row in lines:
        made = row["state"] in FINISHED
        writer.writerow(
            [
                str(item.source),
                STATUS_WORDS.get(row["state"], row["state"]),
                str(item.output) if made else "",
                f"{row['seconds']:.2f}" if row.get("seconds") is not None else "",
                f"{row['tool_seconds']:.2f}" if row.get("tool_seconds") is not None else "",
                row.get("done", 0),
                row.get("failed", 0),
                row.get("message", ""),
            ]
        )
    write_atomically(out_dir / SUMMARY, lambda file: file.write(table.getvalue().encode("utf-8")))
    sheet = contact_sheet(out_dir, lines)
    write_atomically(out_dir / SHEET, lambda file: file.write(sheet.encode("utf-8")))


def contact_sheet(out_dir: Path, lines: Sequence[tuple[BatchItem, Mapping[str, Any]]]) -> str:
    """The HTML page: a row per photo, before and after side by side."""
    counts: dict[str, int] = {}
    for _, row in lines:
        word = STATUS_WORDS.get(row["state"], row["state"])
        counts[word] = counts.get(word, 0) + 1
    summary = ", ".join(f"{n} {word}" for word, n in counts.items())
    cells = []
    for item, row in lines:
        state = row["state"]
        name = html.escape(item.source.name)
        thumbs = []
        for which in ("before", "after"):
            thumb = out_dir / THUMBS / f"{item.stem}.{which}.jpg"
            if thumb.exists() and state in FINISHED:
                src = html.escape(f"{THUMBS}/{quote(thumb.name)}", quote=True)
                thumbs.append(
                    f'<figure><img src="{src}" alt="{which}"><figcaption>{which}</figcaption></figure>'
                )
            else:
                thumbs.append(f'<figure class="none"><div>no {which}</div></figure>')
        seconds = f"{row['seconds']:.1f} s" if row.get("seconds") is not None else ""
        link = (
            f'<a href="{html.escape(quote(item.output.name), quote=True)}">{html.escape(item.output.name)}</a>'
            if state in FINISHED
            else ""
        )
        message = html.escape(row.get("message") or "")
        cells.append(
            f'<section class="{html.escape(state)}"><h2>{name}</h2>'
            f'<div class="pair">{"".join(thumbs)}</div>'
            f"<p><b>{STATUS_WORDS.get(state, html.escape(state))}</b> {seconds} {link}</p>"
            + (f'<p class="why">{message}</p>' if message else "")
            + "</section>"
        )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>layerpath batch</title>
<style>
body {{ font-family: sans-serif; margin: 1em; background: #fafafa; }}
main {{ display: flex; flex-wrap: wrap; gap: 1em; }}
section {{ background: white; border: 1px solid #ddd; border-left: 6px solid #2e7d32; padding: .5em; }}
section.partial {{ border-left-color: #f9a825; }}
section.failed {{ border-left-color: #b00020; }}
section.pending, section.running, section.writing {{ border-left-color: #999; }}
h2 {{ font-size: 1em; margin: 0 0 .4em; }}
.pair {{ display: flex; gap: .4em; }}
figure {{ margin: 0; }}
figure img {{ max-width: {SHOWN_SIDE}px; max-height: {SHOWN_SIDE}px; display: block; }}
figure.none div {{ width: 160px; height: 120px; background: #eee; color: #777; display: flex; align-items: center; justify-content: center; }}
figcaption {{ font-size: .8em; color: #555; }}
.why {{ color: #b00020; max-width: {2 * SHOWN_SIDE}px; font-size: .9em; }}
</style></head>
<body><h1>layerpath batch</h1><p>{len(lines)} photos: {html.escape(summary)}</p>
<main>
{chr(10).join(cells)}
</main></body></html>
"""
