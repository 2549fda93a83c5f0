"""Where the command line's log goes: a line a photographer can read on the terminal
(warnings only; with -v the details and tracebacks; with -q errors only), and everything
— tracebacks of contained crashes, numerical warnings — in a rotating log file in the
data folder, whose path the terminal's line names. No API key reaches either."""

from __future__ import annotations

import logging
import sys
import threading
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType

from layerpath.settings import data_dir
from layerpath.settings.secrets import redact

#: the log file's size before it is rolled over, and the old ones kept
LOG_BYTES, LOG_KEPT = 2_000_000, 3
_OURS = "_layerpath_cli"  # (marks the handlers set up here, replaced on the next call)


class Redacted(logging.Filter):
    """Hides API keys in log records (a server may echo the key it refused)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = redact(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True


class _Full(logging.Formatter):
    """Every detail, the traceback's text redacted too."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class _Brief(logging.Formatter):
    """One line in words: 'warning: ...', and where the details are when there are any."""

    def __init__(self, log_file: Path | None) -> None:
        super().__init__()
        self.log_file = log_file

    def format(self, record: logging.LogRecord) -> str:
        text = f"{record.levelname.lower()}: {redact(record.getMessage())}"
        if record.exc_info and self.log_file is not None:
            text += f" (details in {self.log_file})"
        return text


def log_path() -> Path:
    return data_dir() / "logs" / "layerpath.log"


def setup_logging(verbose: bool = False, quiet: bool = False) -> Path | None:
    """The terminal's handler and the log file's; the log file's path (None when the
    data folder cannot hold one). Warnings from numerical code go to the file only."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(handler)
        handler.close()
    warned = logging.getLogger("py.warnings")
    for handler in [h for h in warned.handlers if getattr(h, _OURS, False)]:
        warned.removeHandler(handler)
    root.setLevel(logging.INFO)
    file: logging.Handler | None = None
    path: Path | None = None
    try:
        log_path().parent.mkdir(parents=True, exist_ok=True)
        file = RotatingFileHandler(
            log_path(), maxBytes=LOG_BYTES, backupCount=LOG_KEPT, encoding="utf-8"
        )
        path = log_path()
    except OSError:
        pass
    terminal = logging.StreamHandler(sys.stderr)
    terminal.setLevel(logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING)
    full = "%(levelname)s %(name)s: %(message)s"
    terminal.setFormatter(_Full(full) if verbose else _Brief(path))
    handlers: list[logging.Handler] = [terminal]
    if file is not None:
        file.setLevel(logging.INFO)
        file.setFormatter(_Full("%(asctime)s %(process)d " + full))
        handlers.append(file)
    for handler in handlers:
        handler.addFilter(Redacted())
        setattr(handler, _OURS, True)
        root.addHandler(handler)
    # numpy's RuntimeWarnings and the like: into the log, not onto the terminal
    logging.captureWarnings(False)  # (installed afresh: whoever replaced it since)
    logging.captureWarnings(True)
    warned.propagate = False
    for handler in handlers if verbose else handlers[1:]:
        warned.addHandler(handler)
    threading.excepthook = _thread_fault
    return path


def _thread_fault(args: threading.ExceptHookArgs) -> None:
    """A thread that stopped on an exception: a line, its traceback in the log."""
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    trace: tuple[type[BaseException], BaseException, TracebackType | None] = (
        args.exc_type,
        args.exc_value,
        args.exc_traceback,
    )
    logging.getLogger("layerpath").error(
        "a background task stopped: %s", args.exc_value, exc_info=trace
    )
