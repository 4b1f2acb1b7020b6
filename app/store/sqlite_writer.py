"""Game moves committed to SQLite in one trip to a dedicated connection thread.

Through SQLAlchemy and aiosqlite one move cost ~11 hops between the event loop and
the driver thread (check-out, BEGIN, UPDATE, INSERT, COMMIT, cursors, reset on
check-in) and ~1 ms of CPU, a third of all the server's work per move. Here the
whole transaction (compare-and-swap of the table row, then the move-log rows) runs
as one function on the writer's own thread; the change that ends a game writes its
careers in that transaction too (`career_sqlite`). Its SQL is compiled from the same
SQLAlchemy tables, so the schema has one source of truth.

Both this and the general session path (`Database.transaction`) run under the
process write lock, and `BEGIN IMMEDIATE` keeps other processes out as before.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy import bindparam, exc, insert, select, update
from sqlalchemy.dialects import sqlite

from app.rules.rating import Skill

from . import career_sqlite
from .career import GameEnd
from .models import MoveRow, TableRow, now
from .writers import MOVE_COLUMNS, TABLE_COLUMNS, driver_error

T = TypeVar("T")

_TABLES = TableRow.__table__  # type: ignore[attr-defined]
_MOVES = MoveRow.__table__  # type: ignore[attr-defined]
_DIALECT = sqlite.dialect(paramstyle="named")


def _sql(statement: Any) -> str:
    return str(statement.compile(dialect=_DIALECT))


_COMPARE_AND_SET = _sql(
    update(_TABLES)
    .where(_TABLES.c.id == bindparam("id_"), _TABLES.c.version == bindparam("expected_"))
    .values({name: bindparam(name) for name in TABLE_COLUMNS})
)
_APPEND_MOVE = _sql(
    insert(_MOVES).values({name: bindparam(name) for name in ("table_id", *MOVE_COLUMNS)})
)
_VERSION = _sql(select(_TABLES.c.version).where(_TABLES.c.id == bindparam("id_")))


def configure_connection(execute: Callable[[str], object], busy_timeout_ms: int) -> None:
    """The settings of every SQLite connection of the server: WAL (readers run while one
    writes), NORMAL sync (safe in WAL), a busy timeout, and enforced foreign keys."""
    for pragma in (
        "PRAGMA journal_mode=WAL",
        "PRAGMA synchronous=NORMAL",
        f"PRAGMA busy_timeout={busy_timeout_ms}",
        "PRAGMA foreign_keys=ON",
    ):
        execute(pragma)


def _wrap(error: sqlite3.Error, statement: str) -> exc.DBAPIError:
    return driver_error(error, statement, isinstance(error, sqlite3.IntegrityError))


class SqliteMoveWriter:
    """One SQLite connection on its own thread, for the per-move writes."""

    def __init__(self, path: str, busy_timeout_ms: int) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-writer")
        self._connection: sqlite3.Connection | None = None

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, work)

    def _call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        # Runs on the writer thread only, so the connection never changes threads.
        if self._connection is None:
            self._connection = self._open()
        return work(self._connection)

    def _open(self) -> sqlite3.Connection:
        try:
            connection = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as error:
            raise _wrap(error, "connect") from error
        try:
            configure_connection(connection.execute, self.busy_timeout_ms)
        except sqlite3.Error as error:
            connection.close()
            raise _wrap(error, "PRAGMA") from error
        return connection

    async def commit(
        self,
        table_id: str,
        expected_version: int,
        values: dict[str, Any],
        moves: Sequence[dict[str, Any]],
        finish: GameEnd | None = None,
    ) -> bool:
        """See `MoveWriter.commit`."""
        params = {"updated_at": now(), **values, "id_": table_id, "expected_": expected_version}
        return await self._run(lambda connection: _commit(connection, params, moves, finish))

    async def prefetch_ratings(self, player_ids: Sequence[str]) -> dict[str, Skill]:
        """See `MoveWriter.prefetch_ratings`: nothing to gain here, the game's end reads
        the ratings in its own transaction on this process's writer thread (no trip)."""
        return {}

    async def version(self, table_id: str) -> int | None:
        """See `MoveWriter.version`."""
        return await self._run(lambda connection: _version(connection, table_id))

    async def close(self) -> None:
        """Close the connection and stop the thread."""
        if self._connection is not None:
            await self._run(lambda connection: connection.close())
            self._connection = None
        self._executor.shutdown(wait=True)


def _commit(
    connection: sqlite3.Connection,
    params: dict[str, Any],
    moves: Sequence[dict[str, Any]],
    finish: GameEnd | None,
) -> bool:
    statement = "BEGIN IMMEDIATE"
    try:
        connection.execute(statement)
        try:
            statement = _COMPARE_AND_SET
            if connection.execute(statement, params).rowcount != 1:
                connection.execute("ROLLBACK")
                return False
            statement = _APPEND_MOVE
            connection.executemany(statement, moves)
            if finish is not None:
                statement = "the careers of a finished game"
                career_sqlite.record_game(connection, finish)
            statement = "COMMIT"
            connection.execute(statement)
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
    except sqlite3.Error as error:
        raise _wrap(error, statement) from error
    return True


def _version(connection: sqlite3.Connection, table_id: str) -> int | None:
    try:
        row = connection.execute(_VERSION, {"id_": table_id}).fetchone()
    except sqlite3.Error as error:
        raise _wrap(error, _VERSION) from error
    return None if row is None else int(row[0])
