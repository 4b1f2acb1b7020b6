"""Table, seat and move-log reads and writes (inside a caller's session)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, update
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.compact_json import dumps
from app.store.models import MoveRow, PlayerRow, SeatRow, TableRow, now


async def table_version(session: AsyncSession, table_id: str) -> int | None:
    """The current version of a table, or None if there is no such table."""
    result = await session.exec(select(TableRow.version).where(TableRow.id == table_id))
    return result.first()


async def load_table(
    session: AsyncSession, table_id: str
) -> tuple[TableRow, list[SeatRow], dict[str, str]] | None:
    """A table row, its seats, and the usernames of its host and seated players."""
    table = await session.get(TableRow, table_id)
    if table is None:
        return None
    seats = list((await session.exec(select(SeatRow).where(SeatRow.table_id == table_id))).all())
    names = await usernames(session, [table.host_id, *(s.player_id for s in seats)])
    return table, seats, names


async def load_tables(
    session: AsyncSession, statuses: Sequence[str]
) -> list[tuple[TableRow, list[SeatRow], dict[str, str]]]:
    """Every table in one of `statuses`, with seats and usernames, oldest first."""
    tables = list(
        (
            await session.exec(
                select(TableRow)
                .where(col(TableRow.status).in_(statuses))
                .order_by(col(TableRow.created_at))
            )
        ).all()
    )
    if not tables:
        return []
    ids = [t.id for t in tables]
    seats = (await session.exec(select(SeatRow).where(col(SeatRow.table_id).in_(ids)))).all()
    by_table: dict[str, list[SeatRow]] = {i: [] for i in ids}
    for seat in seats:
        by_table[seat.table_id].append(seat)
    names = await usernames(session, [t.host_id for t in tables] + [s.player_id for s in seats])
    return [(t, by_table[t.id], names) for t in tables]


async def usernames(session: AsyncSession, player_ids: Sequence[str]) -> dict[str, str]:
    """Usernames by player id (bots and unknown ids are left out)."""
    ids = sorted({p for p in player_ids if not p.startswith("bot:")})
    if not ids:
        return {}
    result = await session.exec(
        select(PlayerRow.id, PlayerRow.username).where(col(PlayerRow.id).in_(ids))
    )
    return dict(result.all())


# The per-move statements are Core statements on the tables: the ORM's unit of work and
# bulk-update machinery cost more than the SQL itself on this hot path.
_TABLES = TableRow.__table__  # type: ignore[attr-defined]
_MOVES = MoveRow.__table__  # type: ignore[attr-defined]


async def compare_and_set(
    session: AsyncSession, table_id: str, expected_version: int, values: dict[str, Any]
) -> bool:
    """Update the table only if it is still at `expected_version`; False if it moved on."""
    statement = (
        update(_TABLES)
        .where(_TABLES.c.id == table_id, _TABLES.c.version == expected_version)
        .values({"updated_at": now(), **values})
    )
    connection = await session.connection()
    result = await connection.execute(statement)
    return bool(result.rowcount == 1)


async def replace_seats(
    session: AsyncSession,
    table_id: str,
    seats: dict[str, str | None],
    levels: dict[str, str | None] | None = None,
) -> None:
    """Set the occupant of each named seat (None frees it); `levels` gives a bot seat's
    level."""
    for seat in seats:
        await session.exec(
            delete(SeatRow).where(col(SeatRow.table_id) == table_id, col(SeatRow.seat) == seat)
        )
    await session.flush()
    for seat, player_id in seats.items():
        if player_id is not None:
            level = levels.get(seat) if levels is not None else None
            session.add(SeatRow(table_id=table_id, seat=seat, player_id=player_id, bot_level=level))
    await session.flush()


async def append_moves(
    session: AsyncSession, table_id: str, moves: Sequence[tuple[int, int, dict[str, Any]]]
) -> None:
    """Append move-log rows (seq, changes, move); (table, seq) is unique."""
    if not moves:
        return
    connection = await session.connection()
    await connection.execute(insert(_MOVES), move_rows(table_id, moves))


def move_rows(
    table_id: str, moves: Sequence[tuple[int, int, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The column values of move-log rows (seq, changes, move) of one table."""
    created = now()
    return [
        {
            "table_id": table_id,
            "seq": seq,
            "changes": changes,
            "move": dumps(move),
            "created_at": created,
        }
        for seq, changes, move in moves
    ]


async def moves_of(session: AsyncSession, table_id: str) -> list[MoveRow]:
    """The whole move log of a table, in order."""
    result = await session.exec(
        select(MoveRow).where(MoveRow.table_id == table_id).order_by(col(MoveRow.seq))
    )
    return list(result.all())


async def due_deadlines(
    session: AsyncSession, before: float, limit: int = 500
) -> list[tuple[str, float]]:
    """(id, turn deadline) of the tables whose turn deadline is at or before `before`
    (epoch seconds), earliest first; served by the index on `turn_deadline` alone (only a
    game in play has a deadline; a condition on the status would pick its index)."""
    result = await session.exec(
        select(TableRow.id, TableRow.turn_deadline)
        .where(col(TableRow.turn_deadline) <= before)
        .order_by(col(TableRow.turn_deadline))
        .limit(limit)
    )
    return [(table_id, deadline) for table_id, deadline in result.all() if deadline is not None]


async def idle_waiting_tables(session: AsyncSession, unchanged_since: float) -> list[str]:
    """Ids of WAITING tables that have not changed since `unchanged_since` (epoch)."""
    result = await session.exec(
        select(TableRow.id).where(
            TableRow.status == "WAITING", col(TableRow.updated_at) < unchanged_since
        )
    )
    return list(result.all())


async def table_versions(session: AsyncSession, table_ids: Sequence[str]) -> dict[str, int]:
    """The current version of each of `table_ids` that exists."""
    if not table_ids:
        return {}
    result = await session.exec(
        select(TableRow.id, TableRow.version).where(col(TableRow.id).in_(table_ids))
    )
    return dict(result.all())
