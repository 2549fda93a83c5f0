"""The files a command is given and the stores layerpath keeps, handled one way.

Every file argument is looked at before it is read: a pipe, a device, a folder, a link
that loops, an unreadable or oversized file is a clear BadInput naming it, never a hang
or a traceback. Every store (actions, rules, learning, settings, journals) is read with
limits (size, nesting, UTF-8, the shape its reader expects) and changed under a lock,
read-modify-write, through a temporary file renamed over it: two commands at once both
land, and a crash leaves the old file or the new one whole. A command that writes is
told where, and never writes over layerpath's own stores, one of its inputs, or an
existing file it was not told to replace.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from filelock import FileLock, Timeout

from layerpath.errors import BadInput, shown

#: the largest JSON store or document read (a real one is kilobytes; learning.json and a
#: run report of a long batch a few megabytes)
MAX_JSON_BYTES = 64_000_000
#: the deepest nesting a JSON file of ours may have (ours nest five levels)
MAX_DEPTH = 64
#: how long a command waits for another one changing the same store
LOCK_WAIT_S = 30.0


def _said(path: Path | str) -> str:
    return shown(str(path), 200)


#: what to do with a pipe or a device given as a file
SAVE_AS_FILE = "save what it holds as a file and give that"


def regular_file(path: Path, what: str = "file", instead: str = SAVE_AS_FILE) -> os.stat_result:
    """The file's status once it is known to be a regular, readable file; else a
    BadInput saying what it is instead (missing, a folder, a pipe or device, a link
    that loops or leads nowhere, unreadable) and, for a pipe or device, what to do
    (`instead`)."""
    path = Path(path)
    try:
        status = os.stat(path)
    except FileNotFoundError as exc:
        dangling = os.path.islink(path)
        raise BadInput(
            f"The {what} {_said(path)} "
            + ("is a link to a file that does not exist." if dangling else "does not exist.")
        ) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadInput(
                f"The {what} {_said(path)} is a link that leads back to itself."
            ) from exc
        raise BadInput(f"Cannot look at the {what} {_said(path)}: {exc.strerror or exc}.") from exc
    if stat.S_ISDIR(status.st_mode):
        raise BadInput(f"The {what} {_said(path)} is a folder; give a file.")
    if not stat.S_ISREG(status.st_mode):
        raise BadInput(
            f"The {what} {_said(path)} is not a regular file (a pipe, socket or device); {instead}."
        )
    if not os.access(path, os.R_OK):
        raise BadInput(
            f"The {what} {_said(path)} cannot be read (permission denied); check its permissions."
        )
    return status


def read_bytes(
    path: Path, what: str = "file", max_bytes: int = MAX_JSON_BYTES, store: bool = False
) -> bytes:
    """A regular file's bytes, at most `max_bytes` of them (a larger file is refused
    before it is read, and one that grows while read stops at the limit); a `store` of
    layerpath's own says so when something else stands in its place."""
    status = regular_file(
        path, what, "layerpath keeps its own file there" if store else SAVE_AS_FILE
    )
    too_big = BadInput(
        f"The {what} {_said(path)} is {status.st_size / 1e6:.1f} MB; layerpath reads "
        f"{what}s of at most {max_bytes / 1e6:.1f} MB."
    )
    if status.st_size > max_bytes:
        raise too_big
    try:
        with open(path, "rb") as file:
            data = file.read(max_bytes + 1)
    except OSError as exc:
        raise BadInput(f"Cannot read the {what} {_said(path)}: {exc.strerror or exc}.") from exc
    if len(data) > max_bytes:
        raise too_big
    return data


def depth(value: Any) -> int:
    """How deeply a parsed JSON value nests (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def parse_json(data: bytes | str, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """JSON text (UTF-8 bytes or a string) parsed, or a BadInput naming `where`: not
    UTF-8, not JSON, or nested deeper than `max_depth`."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise BadInput(f"{where} is not UTF-8 text; it is not a file layerpath wrote.") from exc
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise BadInput(f"{where} nests deeper than any file layerpath writes.") from exc
    except ValueError as exc:
        if "digits" in str(exc):  # (a number thousands of digits long)
            raise BadInput(f"{where} holds a number thousands of digits long.") from exc
        raise BadInput(f"{where} is not JSON ({shown(str(exc), 120)}).") from exc
    if depth(value) > max_depth:
        raise BadInput(f"{where} nests deeper than any file layerpath writes.")
    return value


def read_json(
    path: Path,
    what: str = "file",
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_DEPTH,
    store: bool = False,
) -> Any:
    """A JSON file read whole, every limit checked (BadInput names the file)."""
    data = read_bytes(path, what, max_bytes, store)
    return parse_json(data, f"The {what} {_said(path)}", max_depth)


def read_store(path: Path, what: str) -> dict[str, Any]:
    """One of layerpath's JSON stores: {} when there is none yet; a BadInput naming it
    and saying what to do when it cannot be read or is not a JSON object."""
    if not os.path.lexists(path):
        return {}
    try:
        data = read_json(path, what, store=True)
    except BadInput as exc:
        raise BadInput(f"{exc} Fix it, or delete it to start afresh.") from exc
    if not isinstance(data, dict):
        raise BadInput(
            f"The {what} {_said(path)} is not a JSON object, as layerpath writes it. "
            "Fix it, or delete it to start afresh."
        )
    return data


def listed(data: dict[str, Any], key: str, path: Path, what: str) -> list[Any]:
    """A store's list under `key` ([] when absent); a BadInput naming the file when it
    is something else."""
    value = data.get(key, [])
    if value is None or not isinstance(value, list):
        raise BadInput(
            f'In the {what} {_said(path)}, "{shown(key, 40)}" should be a list. '
            "Fix it, or delete the file to start afresh."
        )
    return value


def backed_up(path: Path) -> Path:
    """Move a store that must be reset aside (NAME.bad-TIME) and say where it went."""
    backup = path.with_name(f"{path.name}.bad-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(path, backup)
    return backup


_LOCKS: dict[str, FileLock] = {}


@contextmanager
def store_lock(path: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Held while a store is read, changed and written back: a second command changing
    the same store waits for the first (up to `wait_s`, then a clear error)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    name = str(path.with_name(f".{path.name}.lock").resolve())
    # one lock object a file, so a holder may take it again (FileLock counts holds; two
    # objects on one file would wait for each other)
    lock = _LOCKS.setdefault(name, FileLock(name))
    try:
        with lock.acquire(timeout=wait_s):
            yield
    except Timeout as exc:
        raise BadInput(
            f"Another layerpath has been changing {_said(path)} for {wait_s:.0f} s; "
            "try again when it is done."
        ) from exc


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path: Path, write: Callable[[BinaryIO], object]) -> Path:
    """Write a file through a temporary one beside it (an unpredictable name, created
    exclusively: nothing planted there is followed), renamed over `path` once complete,
    and removed on any failure, Ctrl-C included: `path` is either what it was or whole."""
    path = Path(path)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o666 & ~_umask())  # (mkstemp makes it private to the owner)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    sweep_leftovers(path)
    return path


def write_json(path: Path, data: Any) -> Path:
    """A store written whole and atomically (call it under `store_lock`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2).encode("utf-8")
    return write_atomically(path, lambda file: file.write(text))


#: a temporary file of ours older than this was left by a process that was killed
#: (kill -9 or a power cut: no handler runs); a live write keeps its file fresher
STALE_SECONDS = 120.0


def sweep_leftovers(path: Path, older_than: float = STALE_SECONDS) -> None:
    """Remove the temporary files a killed write of this same file left behind: those
    older than `older_than` seconds (0 where the caller knows no write of it is alive,
    as a batch holding its folder's lock does)."""
    now = time.time()
    for left in path.parent.glob(f".{glob.escape(path.name)}.*.partial"):
        try:
            if (
                left.is_file()
                and not left.is_symlink()
                and now - left.stat().st_mtime >= older_than
            ):
                left.unlink()
        except OSError:  # (gone already, or not ours to remove)
            pass


def own_folders() -> list[Path]:
    """layerpath's own folders (settings; traces, rules, actions, models): no command
    writes a user's file into them."""
    from layerpath.settings.paths import config_dir, data_dir

    return [config_dir(), data_dir()]


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def output_refusal(
    path: Path,
    inputs: Iterable[Path] = (),
    replace: bool = False,
    folder: bool = False,
    example: str = "out.json",
) -> str | None:
    """Why a command must not write `path` (None when it may), in a sentence that starts
    with a word (never with the path, whose case matters): it lies in layerpath's own
    folders, it is one of the command's inputs (or, for an output folder, holds one or
    lies in one), it is a device or a pipe, a folder where a file is asked for (or a
    file where a folder is), a folder on its way is a file, a link loops, or it exists
    and the command was not told to replace it (`replace`)."""
    path = Path(path)
    said = _said(path)
    try:
        where = path.resolve()
        for own in own_folders():
            if _inside(where, own.resolve()):
                return (
                    f"Cannot write {said}: it is inside layerpath's own folder {_said(own)}, "
                    "where its stores live; write it somewhere else"
                )
        for given in inputs:
            source = Path(given).resolve()
            if where == source or (folder and (_inside(source, where) or _inside(where, source))):
                return (
                    f"Cannot write {said}: it is one of this command's inputs; choose another name"
                )
        for parent in where.parents:  # (the first one there must be a folder)
            if parent.exists():
                if not parent.is_dir():
                    return f"Cannot write {said}: {_said(parent)} is a file, not a folder"
                break
        if where.exists() and not where.is_dir() and not where.is_file():
            return f"Cannot write {said}: it is a device or a pipe, not a file; choose a file name"
        if folder:
            if where.exists() and not where.is_dir():
                return f"Cannot write into {said}: it is a file; give a folder"
            if where.is_dir() and any(where.iterdir()) and not replace:
                return (
                    f"The folder {said} is not empty; choose a new folder, or add --force "
                    "to write over what is there"
                )
            return None
        if where.is_dir():
            return f"Cannot write {said}: it is a folder; give a file name, e.g. {_said(path / example)}"
        if os.path.lexists(path) and not replace:
            return f"The file {said} exists; choose another name, or add --force to replace it"
    except (OSError, RuntimeError) as exc:  # (a name too long to look up; a link that loops)
        why = (
            "a link on its way leads back to itself"
            if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP
            else (exc.strerror or str(exc))
        )
        return f"Cannot write into {_said(path.parent)} ({why}); choose another (shorter) name"
    return None


def check_output(
    path: Path, inputs: Iterable[Path] = (), replace: bool = False, folder: bool = False
) -> Path:
    """`path` made ready to write (its folder created), or a BadInput saying why not
    (`output_refusal`)."""
    problem = output_refusal(path, inputs, replace, folder)
    if problem is not None:
        raise BadInput(problem + ".")
    path = Path(path)
    try:
        (path if folder else path.parent).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"Cannot make the folder for {_said(path)}: {exc.strerror or exc}.") from exc
    return path
