"""Deadlines for work that may hang: `within` runs the work on a thread of its own and
stops waiting when the time is up (a request trickling in: the work is left to end on
its own); `limited` runs it on the caller's thread and interrupts it there (a tool)."""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Overdue(TimeoutError):
    """The work did not finish within its deadline."""


class _Interrupted(BaseException):
    """Raised into work past its deadline: a BaseException, so that the work's own
    `except Exception` does not swallow it."""


def within(seconds: float, call: Callable[[], T], stop: Callable[[], object] | None = None) -> T:
    """`call()`'s answer (or its exception), or Overdue once `seconds` have passed;
    `stop` is then called (close a connection, raise a flag the work checks)."""
    answer: dict[str, Any] = {}

    def run() -> None:
        try:
            answer["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            answer["error"] = exc

    worker = threading.Thread(target=run, name="layerpath work", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        if stop is not None:
            try:
                stop()
            except Exception:  # stopping is a courtesy; the answer is already late
                pass
        raise Overdue(f"no answer within {seconds:g} s")
    if "error" in answer:
        raise answer["error"]
    return answer["value"]


class Abandoned(Exception):
    """The work was given up because the user asked to stop (`limited`'s `abandon`)."""


#: how long work told to stop may take to stop on its own before it is interrupted
GRACE_S = 1.0


def limited(
    seconds: float,
    call: Callable[[], T],
    stop: Callable[[], object] | None = None,
    abandon: Callable[[], bool] | None = None,
    grace_s: float = GRACE_S,
) -> T:
    """`call()` run on this thread, given up after `seconds` (Overdue), or `grace_s`
    after `abandon()` turns true (Abandoned: the user asked to stop, and the work did
    not end on its own): then `stop` is called (a flag the work checks) and the
    exception is raised in this thread, which Python delivers as soon as the work runs
    Python code again (a tool stuck inside one long C call is stopped when that call
    returns). The work stays on the caller's thread: libraries that keep state per
    thread (RapidOCR inside Krita read no text about one run in three when each call
    ran on a thread of its own) see the thread they always see."""
    target = threading.get_ident()
    lock = threading.Lock()
    state: dict[str, Any] = {"finished": False, "fired": None}
    done = threading.Event()
    deadline = time.monotonic() + seconds

    def why_stop(asked_at: float | None) -> str | None:
        now = time.monotonic()
        if now >= deadline:
            return "overdue"
        if asked_at is not None and now - asked_at >= grace_s:
            return "abandoned"
        return None

    def watch() -> None:
        asked_at = None
        while True:
            step = deadline - time.monotonic()
            if abandon is not None:
                step = min(step, 0.05)
            if done.wait(max(0.0, step)):
                return
            if asked_at is None and abandon is not None and abandon():
                asked_at = time.monotonic()
                if stop is not None:  # (a tool that checks its flag ends at once)
                    try:
                        stop()
                    except Exception:
                        pass
            reason = why_stop(asked_at)
            if reason is not None:
                break
        with lock:
            if state["finished"]:
                return
            state["fired"] = reason
            if stop is not None:
                try:
                    stop()
                except Exception:  # stopping is a courtesy
                    pass
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(target), ctypes.py_object(_Interrupted)
            )

    def late() -> Exception:
        if state["fired"] == "abandoned":
            return Abandoned("given up: the user asked to stop")
        return Overdue(f"no answer within {seconds:g} s")

    watcher = threading.Thread(target=watch, name="layerpath deadline", daemon=True)
    try:
        watcher.start()  # (inside the try: a deadline that fires at once is caught too)
        answer = call()
        with lock:  # (a deadline that fires from here on is delivered inside this try)
            state["finished"] = True
            fired = state["fired"]
        if fired:  # it fired as the work ended: take it back, the answer is late
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), None)
            raise late()
        return answer
    except _Interrupted:
        raise late() from None
    finally:
        done.set()
