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
        self._cancel = threading.Event()
        self._current: tuple[QtCore.QThread, _Worker] | None = None

    @property
    def running(self) -> bool:
        return self._current is not None

    def start(self, job: Job) -> None:
        if self._current is not None:
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
        self._current = (thread, worker)
        self.running_changed.emit(True)
        thread.start()

    def cancel(self) -> None:
        """Ask the run to stop between tool calls; finished steps stay."""
        self._cancel.set()

    def shutdown(self, ms: int = 30000) -> None:
        """Cancel and wait for the worker (before the host closes)."""
        self.cancel()
        if self._current is not None:
            self._current[0].wait(ms)

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
        """The job has returned: stop its thread now (it only has to leave its event loop),
        so no QThread object is ever destroyed while running."""
        assert self._current is not None
        thread, worker = self._current
        self._current = None
        thread.quit()
        thread.wait()
        worker.deleteLater()
        thread.deleteLater()
        self.running_changed.emit(False)
