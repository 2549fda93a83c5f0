"""Ctrl-C and SIGTERM while the command line runs an edit or a batch."""

from __future__ import annotations

import signal
import sys
from typing import Any


class Interrupts:
    """Ctrl-C during a run: the first asks the engine to stop (the step running is
    given up within a second or two, the finished steps are saved), a second (or
    SIGTERM) stops at once, and the finished steps are still saved."""

    def __init__(
        self,
        message: str = "stopping: the step running now is given up, the finished steps are "
        "saved (Ctrl-C again to stop at once)",
    ) -> None:
        self.message = message
        self.asked = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupts:
        for number in (signal.SIGINT, signal.SIGTERM):
            self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def _handle(self, number: int, frame: object) -> None:
        if number == signal.SIGINT and not self.asked:
            self.asked = True
            print(self.message, file=sys.stderr, flush=True)
            return
        raise KeyboardInterrupt
