"""Waiting with a deadline for work that cannot be interrupted from outside (a request
trickling in, a tool that hangs): the work runs on a thread of its own and the caller
stops waiting when the time is up. Python cannot stop a thread; the work is left to end
on its own (told through its `stop` hook where it has one)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Overdue(TimeoutError):
    """The work did not finish within its deadline."""


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
