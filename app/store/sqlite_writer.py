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

A move's transaction runs on the event loop itself, on a connection of its own that
never waits: the hand-off to the thread and back (a queue put that wakes it, a
`call_soon_threadsafe` that wakes the loop, the GIL passed twice) cost the server more
than the transaction (~50 µs of SQLite in WAL mode without fsync). Whatever could
block goes to the thread instead: a transaction that finds the database locked by
another connection (another process) is retried there with the busy timeout, the
change that ends a game (its careers) is written there, and so are the WAL
checkpoints, which fsync (the loop's connection never checkpoints by itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import sqlite3
import threading
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from sqlalchemy import bindparam, exc, insert, select, update
from sqlalchemy.dialects import sqlite

from app.rules.rating import Skill
from app.store import career_sqlite
from app.store.career import GameEnd
from app.store.models import MoveRow, TableRow, now
from app.store.writers import ALWAYS_SET, MOVE_COLUMNS, TABLE_COLUMNS, driver_error

T = TypeVar("T")

_TABLES = TableRow.__table__  # type: ignore[attr-defined]
_MOVES = MoveRow.__table__  # type: ignore[attr-defined]
_DIALECT = sqlite.dialect(paramstyle="named")
# The loop's connection hands a checkpoint to the thread every this many commits (a move
# writes a few pages: about SQLite's own 1,000-page autocheckpoint).
CHECKPOINT_EVERY = 250
_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


def _sql(statement: Any) -> str:
    return str(statement.compile(dialect=_DIALECT))


@functools.lru_cache(maxsize=256)
def _compare_and_set(changed: frozenset[str] | None) -> str:
    """The row's compare-and-swap, setting `ALWAYS_SET` and the `changed` columns (None:
    all): a move changes the same few, so a handful of texts, each prepared once by
    sqlite3's statement cache."""
    names = [n for n in TABLE_COLUMNS if changed is None or n in ALWAYS_SET or n in changed]
    return _sql(
        update(_TABLES)
        .where(_TABLES.c.id == bindparam("id_"), _TABLES.c.version == bindparam("expected_"))
        .values({name: bindparam(name) for name in names})
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


# A job for the writer thread: the work, the future that awaits it and its loop.
_Job = tuple[Callable[[sqlite3.Connection], Any], "asyncio.Future[Any]", asyncio.AbstractEventLoop]


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    # On the event loop: the awaiting coroutine may have been cancelled meanwhile.
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class SqliteMoveWriter:
    """One SQLite connection on its own thread, for the per-move writes.

    The thread takes jobs from a queue and answers each on its loop with one
    `call_soon_threadsafe`: a ThreadPoolExecutor's submit, work item, concurrent future
    and its chaining to an asyncio future cost more Python than the transaction itself
    (profiled at saturation: submit alone 4.6% of the server's samples, the SQLite
    work 2.9%)."""

    def __init__(self, path: str, busy_timeout_ms: int) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._connection: sqlite3.Connection | None = None
        self._inline: sqlite3.Connection | None = None  # the event loop's, never waits
        self._since_checkpoint = 0  # commits made inline since the last checkpoint
        self._checkpoint: asyncio.Future[Any] | None = None
        self.checkpoints = 0  # checkpoints the thread ran for inline commits (tests)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="sqlite-writer", daemon=True)
            self._thread.start()
        self._jobs.put((work, future, loop))
        return future

    def _serve(self) -> None:
        # The writer thread: the connection never changes threads.
        while (job := self._jobs.get()) is not None:
            work, future, loop = job
            if future.cancelled():
                continue  # its caller is gone and it had not started: as an executor does
            result: Any = None
            error: BaseException | None = None
            try:
                if self._connection is None:
                    self._connection = self._open()
                result = work(self._connection)
            except BaseException as caught:  # handed to the caller, whatever it is
                error = caught
            # A closed loop (RuntimeError): nobody awaits it any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future, result, error)
            del job, work, future, result, error  # nothing of a move outlives it here

    def _open(self, busy_timeout_ms: int | None = None) -> sqlite3.Connection:
        try:
            connection = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as error:
            raise _wrap(error, "connect") from error
        timeout = self.busy_timeout_ms if busy_timeout_ms is None else busy_timeout_ms
        try:
            configure_connection(connection.execute, timeout)
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
        changed: Collection[str] | None = None,
    ) -> bool:
        """See `MoveWriter.commit`: the columns not `changed` are left as they are."""
        params = {"updated_at": now(), **values, "id_": table_id, "expected_": expected_version}
        update = _compare_and_set(None if changed is None else frozenset(changed))
        if finish is None:
            try:
                committed = _commit(self._loop_connection(), update, params, moves, None)
            except _Busy:
                pass  # another connection writes: wait for it on the thread
            else:
                self._count_inline_commit()
                return committed
        return await self._run(
            lambda connection: _commit(connection, update, params, moves, finish)
        )

    def _loop_connection(self) -> sqlite3.Connection:
        if self._inline is None:
            self._inline = self._open(busy_timeout_ms=0)
            self._inline.execute("PRAGMA wal_autocheckpoint=0")
        return self._inline

    def _count_inline_commit(self) -> None:
        self._since_checkpoint += 1
        if self._since_checkpoint < CHECKPOINT_EVERY or self._checkpoint is not None:
            return
        self._since_checkpoint = 0
        self._checkpoint = self._run(_passive_checkpoint)
        self._checkpoint.add_done_callback(self._checkpointed)

    def _checkpointed(self, done: asyncio.Future[Any]) -> None:
        self._checkpoint = None
        if not done.cancelled() and done.exception() is None:
            self.checkpoints += 1

    async def prefetch_ratings(self, player_ids: Sequence[str]) -> dict[str, Skill]:
        """See `MoveWriter.prefetch_ratings`: nothing to gain here, the game's end reads
        the ratings in its own transaction on this process's writer thread (no trip)."""
        return {}

    async def version(self, table_id: str) -> int | None:
        """See `MoveWriter.version`."""
        return await self._run(lambda connection: _version(connection, table_id))

    async def close(self) -> None:
        """Close the connection and stop the thread."""
        if self._inline is not None:
            self._inline.close()
            self._inline = None
        if self._checkpoint is not None:
            await asyncio.gather(self._checkpoint, return_exceptions=True)
        thread = self._thread
        if thread is None:
            return
        if self._connection is not None:
            await self._run(lambda connection: connection.close())
            self._connection = None
        self._jobs.put(None)
        await asyncio.to_thread(thread.join)
        self._thread = None


class _Busy(Exception):
    """The loop's connection found the database locked (it never waits): nothing was
    written, try on the thread."""


def _passive_checkpoint(connection: sqlite3.Connection) -> None:
    # PASSIVE: copies what no reader still needs, waits for nobody, blocks no writer.
    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()


def _commit(
    connection: sqlite3.Connection,
    update: str,
    params: dict[str, Any],
    moves: Sequence[dict[str, Any]],
    finish: GameEnd | None,
) -> bool:
    statement = "BEGIN IMMEDIATE"
    try:
        try:
            connection.execute(statement)
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode in _BUSY_CODES:
                raise _Busy from error
            raise
        try:
            statement = update
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
