"""When to learn: after every `learn_every` runs (settings), `layerpath learn` starts as a
process of its own, so no run or window waits for it (the CLI, the editor, the Krita
docker); one at a time (a lock file in the data folder, taken over when a killed one left
it an hour ago)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from layerpath.engine.learn.rulebook import RuleBook
from layerpath.engine.learn.traces import TraceStore
from layerpath.errors import BadInput
from layerpath.settings import Settings, data_dir
from layerpath.tools.registry import Registry

LOCK = "learn.lock"
LOG = "learning.log"
#: a lock older than this was left by a learner that was killed
STALE_S = 3600.0


@contextmanager
def learning_lock(folder: Path) -> Iterator[None]:
    """Held while one `layerpath learn` runs; a second is told so."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK
    try:
        if time.time() - path.stat().st_mtime > STALE_S:
            path.unlink(missing_ok=True)
    except FileNotFoundError:
        pass
    try:
        handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError as exc:
        raise BadInput(
            "layerpath is already learning from your runs (in the background); "
            f"try again when it is done (its log: {folder / LOG})."
        ) from exc
    try:
        os.write(handle, str(os.getpid()).encode())
        os.close(handle)
        yield
    finally:
        path.unlink(missing_ok=True)


#: how a host's Python (below) starts the learner: layerpath's environment first on its
#: path, its .pth files read (an editable install's finder), as the host's plugin does
_BOOT = """import json, site, sys
before = list(sys.path)
for folder in json.loads(sys.argv[1]):
    site.addsitedir(folder)
sys.path[:] = [p for p in sys.path if p not in before] + before
from layerpath.plugin.app import main
sys.exit(main(["learn"]))
"""


def host_python() -> str | None:
    """A Python interpreter for a process of layerpath's own: this one, or inside a host
    that embeds Python (Krita: sys.executable may be Krita itself) the interpreter of
    the same version on PATH. None when there is none."""
    python: str | None = sys.executable
    if not python or not Path(python).name.lower().startswith("python"):
        python = shutil.which(f"python{sys.version_info[0]}.{sys.version_info[1]}")
    return python


def learner_command() -> list[str] | None:
    """How to start `layerpath learn`: `host_python()` given this process's path, where
    layerpath was found (a host adds its environment at run time). None when there is
    no interpreter."""
    python = host_python()
    if python is None:
        return None
    return [python, "-c", _BOOT, json.dumps([p for p in sys.path if p and Path(p).is_dir()])]


def learn_in_background(settings: Settings, store: TraceStore | None) -> Path | None:
    """Start `layerpath learn` when `learn_every` runs were recorded since the last
    induction; the log it writes, or None when it is not due (or already running, or no
    Python to run it is found)."""
    if store is None or not store.usable or settings.learn_every <= 0:
        return None
    folder = data_dir()
    book = RuleBook(Registry.from_catalogue(), folder)
    if (folder / LOCK).exists() or not book.learning_due(store.runs(), settings.learn_every):
        return None
    command = learner_command()
    if command is None:
        return None
    log = folder / LOG
    with open(log, "ab") as out:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            cwd=folder,  # (no folder of the caller's shadows layerpath)
            start_new_session=True,  # Ctrl-C in the terminal does not reach it
        )
    return log
