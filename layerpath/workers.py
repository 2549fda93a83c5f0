"""The processes that edit photos at once (`layerpath batch --jobs N`): on Linux, in
layerpath's own Python, forked from a fork server that has loaded the engine, so a
worker is ready at once instead of loading it afresh (0.4 s of a core each); the server
is started as soon as the command knows it will want workers, and loads beside the
command's own start-up. In a host's Python (Krita), on macOS or Windows they are
spawned.

Light on purpose: the command line imports it before the engine."""

from __future__ import annotations

import sys
from multiprocessing.context import BaseContext

#: what a worker needs loaded before its first photo
WORKER_MODULE = "layerpath.engine.hosts.batch"


def worker_context(python: str) -> BaseContext:
    """How workers running `python` start: forked from the engine-loaded fork server
    where `python` is this process's own interpreter and the platform forks; else
    spawned by `python`."""
    import multiprocessing

    # (Linux only: macOS's system libraries are not safe to fork once loaded)
    if python == sys.executable and sys.platform.startswith("linux"):
        forking = multiprocessing.get_context("forkserver")
        forking.set_forkserver_preload([WORKER_MODULE])
        return forking
    spawning = multiprocessing.get_context("spawn")
    if python != sys.executable:  # (a host's Python: not the host itself)
        spawning.set_executable(python)
    return spawning


def start_early() -> bool:
    """Start the fork server now, before this process loads the engine itself, so
    both load side by side; whether there is one to start."""
    if worker_context(sys.executable).get_start_method() != "forkserver":
        return False
    from multiprocessing import forkserver

    forkserver.ensure_running()
    return True
