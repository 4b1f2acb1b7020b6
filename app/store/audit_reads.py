"""Tables and their move logs read for an audit (`spades verify`), a batch at a time.

Each batch is read in one transaction on one snapshot of the database (REPEATABLE READ
on PostgreSQL; on SQLite a read transaction is one already), so a server writing
meanwhile can never make a table row and its log look out of step.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.rules.audit import LogRow, StoredTable
from app.store.db import Database
from app.store.models import MoveRow, TableRow

_TABLES = TableRow.__table__  # type: ignore[attr-defined]
_MOVES = MoveRow.__table__  # type: ignore[attr-defined]

AuditedTable = tuple[StoredTable, list[LogRow]]


async def audit_batch(db: Database, after: str | None, limit: int) -> list[AuditedTable]:
    """Up to `limit` tables whose id sorts after `after` (ids in order), each with its
    whole move log, read on one snapshot."""
    async with db.engine.connect() as connection:
        if not db.is_sqlite:
            connection = await connection.execution_options(isolation_level="REPEATABLE READ")
        async with connection.begin():
            tables = await _tables(connection, after, limit)
            logs = await _logs(connection, [t.id for t in tables])
    return [(table, logs.get(table.id, [])) for table in tables]


async def _tables(connection: AsyncConnection, after: str | None, limit: int) -> list[StoredTable]:
    query = select(_TABLES.c.id, _TABLES.c.version, _TABLES.c.status, _TABLES.c.game_state)
    if after is not None:
        query = query.where(_TABLES.c.id > after)
    rows = await connection.execute(query.order_by(_TABLES.c.id).limit(limit))
    return [StoredTable(r.id, r.version, r.status, r.game_state) for r in rows]


async def _logs(connection: AsyncConnection, table_ids: Sequence[str]) -> dict[str, list[LogRow]]:
    if not table_ids:
        return {}
    rows = await connection.execute(
        select(_MOVES.c.table_id, _MOVES.c.seq, _MOVES.c.changes, _MOVES.c.move)
        .where(_MOVES.c.table_id.in_(table_ids))
        .order_by(_MOVES.c.table_id, _MOVES.c.seq)
    )
    logs: dict[str, list[LogRow]] = defaultdict(list)
    for row in rows:
        logs[row.table_id].append(LogRow(row.seq, row.changes, row.move))
    return logs
