"""The database: async engine, sessions, and write transactions that cannot interleave.

SQLite allows one writer. Write transactions take a process-wide lock and
start with `BEGIN IMMEDIATE`, so a transaction that reads then writes never
fails with "database is locked"; WAL mode lets readers run meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlmodel.ext.asyncio.session import AsyncSession

from app.store import schema  # noqa: F401  (registers every table)
from app.store.postgres_writer import PostgresMoveWriter
from app.store.sqlite_writer import SqliteMoveWriter, configure_connection
from app.store.writers import MoveWriter

BUSY_TIMEOUT_MS = 10_000
POOL_SIZE = 32  # SQLite, per process
# PostgreSQL, per process: with the move writer's own pool (postgres_writer.POOL_SIZE,
# 8) a process holds at most 32 connections, so the default max_connections (100, some
# reserved for superusers) fits 3 processes.
POSTGRES_POOL_SIZE = 24
# PostgreSQL's turn to write: none to wait for (reusable: it holds no state).
_NO_TURN: AbstractAsyncContextManager[None] = nullcontext()


class Database:
    """An async engine plus the session helpers every repository uses."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        kwargs: dict[str, Any] = {}
        # Fixed pools: overflow connections were opened and closed under load, each with
        # its own setup (an aiosqlite thread and PRAGMAs; a PostgreSQL handshake, SSL
        # negotiation and type introspection, a fifth of the server's CPU at saturation).
        if self.is_sqlite:
            kwargs.update(
                connect_args={"timeout": BUSY_TIMEOUT_MS / 1000},
                pool_size=POOL_SIZE,
                max_overflow=0,
            )
        else:
            kwargs.update(pool_size=POSTGRES_POOL_SIZE, max_overflow=0, pool_pre_ping=True)
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        self._write_lock = asyncio.Lock() if self.is_sqlite else None
        # Game moves take a one-trip path (see writers), on SQLite files and PostgreSQL.
        self.move_writer: MoveWriter | None = None
        if url.startswith("postgresql"):
            self.move_writer = PostgresMoveWriter(url)
        if self.is_sqlite:
            _configure_sqlite(self.engine)
            path = make_url(url).database
            if path and path != ":memory:" and not path.startswith("file:"):
                self.move_writer = SqliteMoveWriter(path, BUSY_TIMEOUT_MS)

    async def dispose(self) -> None:
        """Close every pooled connection (and the move writer's)."""
        if self.move_writer is not None:
            await self.move_writer.close()
        await self.engine.dispose()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A session for reads (no write lock; WAL readers see the last commit)."""
        async with AsyncSession(self.engine, expire_on_commit=False) as session:
            yield session

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """A write transaction, committed on success and rolled back on any error."""
        async with self.writing(), self.transaction() as session:
            yield session

    def writing(self) -> AbstractAsyncContextManager[None]:
        """This process's turn to write (SQLite has one writer; PostgreSQL needs no turn).
        Hold it around `transaction()` and the move writer's commits."""
        # The lock itself, not an async generator around it: every move takes this turn,
        # and a generator cost its frames and the loop's registration of it.
        return self._write_lock if self._write_lock is not None else _NO_TURN

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A write transaction inside `writing()`: committed on success, rolled back on
        any error."""
        if not self.is_sqlite:
            async with (
                AsyncSession(self.engine, expire_on_commit=False) as session,
                session.begin(),
            ):
                yield session
            return
        async with AsyncSession(self.engine, expire_on_commit=False) as session:
            await session.connection(execution_options={"sqlite_immediate": True})
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise


def _configure_sqlite(engine: AsyncEngine) -> None:
    sync_engine = engine.sync_engine

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below issue BEGIN itself (pysqlite's own
        # implicit BEGIN is always DEFERRED).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        configure_connection(cursor.execute, BUSY_TIMEOUT_MS)
        cursor.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("sqlite_immediate", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
