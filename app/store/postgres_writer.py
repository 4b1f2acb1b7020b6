"""Game moves committed to PostgreSQL in one statement, on a small asyncpg pool.

The compare-and-swap of the table row and the insert of its move-log rows are one
statement (a data-modifying CTE), so they apply together or not at all without
BEGIN/COMMIT trips. No connection is checked for liveness first: one that fails in
any way but a refused statement is terminated, and the pool opens a new one. Errors
become SQLAlchemy's, as the rest of the server expects (an outage answers
UNAVAILABLE).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg
from sqlalchemy import exc
from sqlalchemy.engine import make_url

from .models import MoveRow, TableRow, now
from .writers import MOVE_COLUMNS, TABLE_COLUMNS, driver_error

_TABLES = str(TableRow.__tablename__)
_MOVES = str(MoveRow.__tablename__)
_MOVE_TYPES = {"seq": "integer", "changes": "integer", "move": "text", "created_at": "float8"}


def _commit_sql() -> str:
    settings = ", ".join(f"{name} = ${i}" for i, name in enumerate(TABLE_COLUMNS, start=3))
    first = 3 + len(TABLE_COLUMNS)
    arrays = ", ".join(
        f"${i}::{_MOVE_TYPES[name]}[]" for i, name in enumerate(MOVE_COLUMNS, start=first)
    )
    columns = ", ".join(MOVE_COLUMNS)
    picked = ", ".join(f"m.{name}" for name in MOVE_COLUMNS)
    # Both data-modifying parts run to completion whatever the final SELECT reads; it
    # counts the updated rows, so a change is told applied even with no log rows.
    return (
        f"WITH updated AS (UPDATE {_TABLES} SET {settings} "
        f"WHERE id = $1 AND version = $2 RETURNING id), "
        f"logged AS (INSERT INTO {_MOVES} (table_id, {columns}) "
        f"SELECT updated.id, {picked} FROM updated, unnest({arrays}) AS m({columns}) "
        f"RETURNING seq) "
        f"SELECT count(*) AS applied FROM updated"
    )


COMMIT_SQL = _commit_sql()
VERSION_SQL = f"SELECT version FROM {_TABLES} WHERE id = $1"
POOL_SIZE = 8
STATEMENT_TIMEOUT = 10.0  # seconds: a silent network must not hold a move forever


async def _no_reset(_connection: asyncpg.Connection) -> None:
    # Only single autocommit statements run here: no session state to reset, and the
    # default reset would cost a trip per move.
    return None


def _wrap(error: Exception, statement: str) -> exc.DBAPIError:
    integrity = isinstance(error, asyncpg.IntegrityConstraintViolationError)
    return driver_error(error, statement, integrity)


class PostgresMoveWriter:
    """One statement per game move on its own asyncpg pool (opened on first use)."""

    def __init__(self, database_url: str) -> None:
        url = make_url(database_url).set(drivername="postgresql")
        self.dsn = url.render_as_string(hide_password=False)
        self._pool: asyncpg.Pool | None = None

    async def _connection_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            self._pool = await asyncpg.create_pool(
                self.dsn, min_size=0, max_size=POOL_SIZE, reset=_no_reset
            )
        return self._pool

    async def _fetch(self, statement: str, *args: Any) -> list[asyncpg.Record]:
        try:
            pool = await self._connection_pool()
            async with pool.acquire() as connection:
                try:
                    return list(await connection.fetch(statement, *args, timeout=STATEMENT_TIMEOUT))
                except asyncpg.PostgresError:
                    raise  # the server refused the statement: the connection is sound
                except BaseException:
                    # Lost, timed out or cancelled mid-statement (or killed by the server
                    # while idle): a connection in an unknown state never goes back.
                    connection.terminate()
                    raise
        except (
            asyncpg.PostgresError,
            asyncpg.InterfaceError,
            asyncpg.InternalClientError,
            OSError,
            TimeoutError,
        ) as error:
            raise _wrap(error, statement) from error

    async def commit(
        self,
        table_id: str,
        expected_version: int,
        values: dict[str, Any],
        moves: Sequence[dict[str, Any]],
    ) -> bool:
        """See `MoveWriter.commit`."""
        row = {"updated_at": now(), **values}
        args = [table_id, expected_version, *(row[name] for name in TABLE_COLUMNS)]
        args += [[move[name] for move in moves] for name in MOVE_COLUMNS]
        rows = await self._fetch(COMMIT_SQL, *args)
        return bool(rows[0]["applied"] == 1)

    async def version(self, table_id: str) -> int | None:
        """See `MoveWriter.version`."""
        rows = await self._fetch(VERSION_SQL, table_id)
        return None if not rows else int(rows[0]["version"])

    async def close(self) -> None:
        """Close the pool."""
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
