"""Traces: one SQLite row per subtask attempt (WAL), the raw material of learning.

Rows hold the subtask (its kind, object, new value and parameters: the user's own
words), the tool path, params, probed features, cost, quality, failures and mode; never
image pixels, never secrets, never text read from the image (features hold no text).

Traces are a by-product: a database that cannot be used (a read-only folder, a full
disk, a file that is not a database or holds other tables) is said once, as a warning,
and the run goes on without recording.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from layerpath.engine.types import SubtaskKind
from layerpath.settings import Settings, data_dir

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    created REAL NOT NULL,
    subtask_kind TEXT NOT NULL,
    route TEXT NOT NULL,
    mode TEXT NOT NULL,
    alpha REAL NOT NULL,
    tool_path TEXT NOT NULL,
    params TEXT NOT NULL,
    features TEXT NOT NULL,
    cost REAL NOT NULL,
    quality REAL NOT NULL,
    ok INTEGER NOT NULL,
    failures TEXT NOT NULL,
    subtask_id TEXT NOT NULL DEFAULT '',
    subtask TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS tool_stats (
    tool TEXT NOT NULL,
    subtask_kind TEXT NOT NULL,
    n INTEGER NOT NULL,
    cost_sum REAL NOT NULL,
    quality_sum REAL NOT NULL,
    PRIMARY KEY (tool, subtask_kind)
);
"""


#: columns later versions added, with what an older row holds there
ADDED_COLUMNS = {
    "subtask_id": "TEXT NOT NULL DEFAULT ''",  # the attempts of one subtask share it
    "subtask": "TEXT NOT NULL DEFAULT '{}'",  # its kind, target, new value and params
}


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """A store an earlier layerpath made gets the columns added since (its rows keep
    their values; the new columns are empty for them)."""
    have = {row[1] for row in db.execute("PRAGMA table_info(attempts)")}
    for name, kind in ADDED_COLUMNS.items():
        if name not in have:
            db.execute(f"ALTER TABLE attempts ADD COLUMN {name} {kind}")


class TraceStore:
    """The trace database (traces.sqlite in the data folder)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        #: why the store records nothing (None while it works)
        self.problem: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(SCHEMA)
                _add_missing_columns(db)
                db.execute("SELECT run_id, subtask_kind, tool_path, failures FROM attempts LIMIT 0")
                db.execute("SELECT tool, n, cost_sum, quality_sum FROM tool_stats LIMIT 0")
        except (sqlite3.Error, OSError) as exc:
            self._give_up(exc)

    def _give_up(self, exc: BaseException) -> None:
        """Stop recording, and say so once."""
        if self.problem is None:
            self.problem = str(exc) or type(exc).__name__
            log.warning(
                "the trace database %s cannot be used (%s); the run goes on without "
                "recording traces",
                self.path,
                self.problem,
            )

    @property
    def usable(self) -> bool:
        return self.problem is None

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10)
        try:
            with db:
                yield db
        finally:
            db.close()

    def record_attempt(
        self,
        run_id: str,
        kind: SubtaskKind,
        route: str,
        mode: str,
        alpha: float,
        tool_path: Sequence[str],
        params: Sequence[Mapping[str, Any]],
        features: Mapping[str, Any],
        cost: float,
        quality: float,
        ok: bool,
        failures: Sequence[str],
        subtask: Mapping[str, Any] | None = None,
    ) -> None:
        """One attempt at a subtask. `subtask`: its JSON (kind, target, to, params, id);
        the attempts of one subtask in one run share its id."""
        if not self.usable:
            return
        described = dict(subtask or {})
        try:
            self._insert_attempt(
                (
                    run_id,
                    time.time(),
                    kind.value,
                    route,
                    mode,
                    alpha,
                    json.dumps(list(tool_path)),
                    json.dumps(list(params), default=str),
                    json.dumps(dict(features), default=str),
                    cost,
                    quality,
                    int(ok),
                    json.dumps(list(failures)),
                    f"{run_id}:{described.get('id', '')}" if described else "",
                    json.dumps(described, default=str),
                )
            )
        except (sqlite3.Error, OSError) as exc:
            self._give_up(exc)

    def _insert_attempt(self, row: tuple[Any, ...]) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO attempts (run_id, created, subtask_kind, route, mode, alpha, tool_path,"
                " params, features, cost, quality, ok, failures, subtask_id, subtask)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                row,
            )

    def record_tool(self, tool: str, kind: SubtaskKind, cost: float, quality: float) -> None:
        if not self.usable:
            return
        try:
            with self._connect() as db:
                db.execute(
                    "INSERT INTO tool_stats VALUES (?,?,1,?,?) ON CONFLICT(tool, subtask_kind)"
                    " DO UPDATE SET n = n + 1, cost_sum = cost_sum + excluded.cost_sum,"
                    " quality_sum = quality_sum + excluded.quality_sum",
                    (tool, kind.value, cost, quality),
                )
        except (sqlite3.Error, OSError) as exc:
            self._give_up(exc)

    def tool_stats(self) -> dict[tuple[str, SubtaskKind], tuple[int, float, float]]:
        """What the recorded calls measured per tool and subtask kind (nothing when the
        store cannot be read)."""
        if not self.usable:
            return {}
        try:
            with self._connect() as db:
                rows = db.execute(
                    "SELECT tool, subtask_kind, n, cost_sum, quality_sum FROM tool_stats"
                ).fetchall()
            kinds = {k.value for k in SubtaskKind}
            return {
                (str(t), SubtaskKind(k)): (int(n), float(c), float(q))
                for t, k, n, c, q in rows
                if k in kinds
            }
        except (sqlite3.Error, OSError, TypeError, ValueError) as exc:
            self._give_up(exc)
            return {}

    def runs(self) -> int:
        """How many runs left attempts here (0 when the store cannot be read)."""
        if not self.usable:
            return 0
        try:
            with self._connect() as db:
                return int(db.execute("SELECT COUNT(DISTINCT run_id) FROM attempts").fetchone()[0])
        except (sqlite3.Error, OSError) as exc:
            self._give_up(exc)
            return 0

    def attempts(self) -> list[dict[str, Any]]:
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute("SELECT * FROM attempts ORDER BY id")]


_stores: dict[Path, TraceStore] = {}
_stores_lock = threading.Lock()


def user_traces(settings: Settings | None) -> TraceStore | None:
    """The user's trace store (traces.sqlite in the data folder), one per process and
    folder, shared by every front end; None when the settings record no traces (with no
    settings, the store whatever they say: learning reads what was recorded)."""
    if settings is not None and not settings.record_traces:
        return None
    path = data_dir() / "traces.sqlite"
    with _stores_lock:
        if path not in _stores:
            _stores[path] = TraceStore(path)
        return _stores[path]
