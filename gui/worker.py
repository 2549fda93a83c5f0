"""Running the engine off the UI thread; its events reach widgets on the main thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from layerpath.errors import LayerpathError
from layerpath.gui.qt import QtCore, Signal, Slot

log = logging.getLogger(__name__)

#: (emit, cancelled) -> result: the work, run on the worker thread (a run, a re-run,
#: a connection check); its result arrives through `done`.
Job = Callable[[Callable[[object], None], Callable[[], bool]], object]


class _Worker(QtCore.QObject):
    engine_event = Signal(object)  # not `event`: that name is QObject.event()
    done = Signal(object)
    error = Signal(str)

    def __init__(self, job: Job, cancel: threading.Event) -> None:
        super().__init__()
        self._job = job
        self._cancel = cancel

    @Slot()
    def work(self) -> None:
        try:
            result = self._job(self.engine_event.emit, self._cancel.is_set)
        except LayerpathError as exc:
            self.error.emit(str(exc))
        except Exception as exc:  # never let a bug take the host down
            log.exception("run crashed")
            self.error.emit(
                f"Something went wrong inside layerpath ({exc}). Details are in the log."
            )
        else:
            self.done.emit(result)


class RunController(QtCore.QObject):
    """Runs one job at a time on a worker thread. Signals arrive on the main thread."""

    engine_event = Signal(object)  # not `event`: that name is QObject.event()
    done = Signal(object)  # the job's result
    error = Signal(str)  # a message for the user
    running_changed = Signal(bool)

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._active = False
        self._cancel = threading.Event()
        # threads still winding down after their job ended, kept alive until finished
        self._threads: list[tuple[QtCore.QThread, _Worker]] = []

    @property
    def running(self) -> bool:
        return self._active

    def start(self, job: Job) -> None:
        if self._active:
            raise RuntimeError("a run is already in progress")
        self._cancel = threading.Event()
        thread = QtCore.QThread()
        worker = _Worker(job, self._cancel)
        worker.moveToThread(thread)
        thread.started.connect(worker.work)
        # worker signals are emitted on the worker thread; connected to slots of this
        # main-thread object they are queued, so widgets are only touched on the main thread
        worker.engine_event.connect(self._relay_event)
        worker.done.connect(self._relay_done)
        worker.error.connect(self._relay_error)
        worker.done.connect(thread.quit)
        worker.error.connect(thread.quit)
        thread.finished.connect(self._reap)
        self._threads.append((thread, worker))
        self._active = True
        self.running_changed.emit(True)
        thread.start()

    def cancel(self) -> None:
        """Ask the run to stop between tool calls; finished steps stay."""
        self._cancel.set()

    def wait(self, ms: int = 30000) -> bool:
        """Block until every worker thread has ended (for shutdown and tests)."""
        return all(thread.wait(ms) for thread, _ in list(self._threads))

    @Slot(object)
    def _relay_event(self, event: object) -> None:
        self.engine_event.emit(event)

    @Slot(object)
    def _relay_done(self, result: object) -> None:
        self._end()
        self.done.emit(result)

    @Slot(str)
    def _relay_error(self, message: str) -> None:
        self._end()
        self.error.emit(message)

    def _end(self) -> None:
        self._active = False
        self.running_changed.emit(False)

    @Slot()
    def _reap(self) -> None:
        for thread, worker in [pair for pair in self._threads if pair[0].isFinished()]:
            self._threads.remove((thread, worker))
            thread.deleteLater()
            worker.deleteLater()
