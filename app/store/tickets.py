"""Quick-play tickets: reads and writes inside a caller's session (app/store/quickplay.py
describes the rows)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import and_, exists, func, update
from sqlalchemy.orm import aliased
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.matchmaking import TicketStatus
from app.rules.rating import NEW_PLAYER
from app.store.career import RatingRow
from app.store.models import BlockRow, PlayerRow, SeatRow, TableRow
from app.store.quickplay import TicketRow
from app.store.seat_guard import OPEN_STATUSES

SEARCHING = TicketStatus.SEARCHING.value
_TICKETS = TicketRow.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Searching:
    """A searching ticket as the matchmaker reads it: with its player's name and shown
    rating, and whether they hold a seat at an unfinished table."""

    row: TicketRow
    username: str
    rating: int
    seated: bool


async def insert_searching(
    session: AsyncSession, ticket_id: str, player_id: str, rated: bool, now: float
) -> None:
    """A new SEARCHING ticket (IntegrityError if the player already has one)."""
    session.add(
        TicketRow(id=ticket_id, player_id=player_id, rated=rated, status=SEARCHING, started_at=now)
    )
    await session.flush()


async def searching_of(session: AsyncSession, player_id: str) -> TicketRow | None:
    """The player's SEARCHING ticket, if any."""
    result = await session.exec(
        select(TicketRow).where(TicketRow.player_id == player_id, TicketRow.status == SEARCHING)
    )
    return result.first()


async def latest_of(session: AsyncSession, player_id: str) -> TicketRow | None:
    """The player's latest ticket, if any."""
    result = await session.exec(
        select(TicketRow)
        .where(TicketRow.player_id == player_id)
        .order_by(col(TicketRow.started_at).desc(), col(TicketRow.id).desc())
        .limit(1)
    )
    return result.first()


async def by_ids(session: AsyncSession, ticket_ids: Collection[str]) -> list[TicketRow]:
    """The tickets of `ticket_ids` (unknown ids left out)."""
    if not ticket_ids:
        return []
    result = await session.exec(select(TicketRow).where(col(TicketRow.id).in_(list(ticket_ids))))
    return list(result.all())


async def count_searching(session: AsyncSession) -> int:
    """How many tickets are SEARCHING."""
    result = await session.exec(
        select(func.count()).select_from(TicketRow).where(TicketRow.status == SEARCHING)
    )
    return int(result.one())


async def end_searching(
    session: AsyncSession,
    status: TicketStatus,
    now: float,
    *,
    player_id: str | None = None,
    ticket_ids: Collection[str] = (),
    table_id: str | None = None,
) -> int:
    """End the player's SEARCHING ticket, or those of `ticket_ids` still SEARCHING, with
    `status` (MATCHED with `table_id`); how many it ended. It stays to be announced."""
    if player_id is not None:
        which = _TICKETS.c.player_id == player_id
    else:
        which = _TICKETS.c.id.in_(list(ticket_ids))
    statement = (
        update(_TICKETS)
        .where(which, _TICKETS.c.status == SEARCHING)
        .values(status=status.value, ended_at=now, table_id=table_id, announced=False)
    )
    connection = await session.connection()
    result = await connection.execute(statement)
    return int(result.rowcount)


async def searching(session: AsyncSession) -> list[Searching]:
    """Every SEARCHING ticket, oldest first, with its player's name, shown rating (a new
    player's without a rating row) and whether they sit at an unfinished table."""
    seated = exists().where(
        and_(
            col(SeatRow.player_id) == col(TicketRow.player_id),
            col(TableRow.id) == col(SeatRow.table_id),
            col(TableRow.status).in_(OPEN_STATUSES),
        )
    )
    result = await session.exec(
        select(TicketRow, PlayerRow.username, RatingRow.value, seated)
        .join(PlayerRow, col(PlayerRow.id) == col(TicketRow.player_id))
        .join(RatingRow, col(RatingRow.player_id) == col(TicketRow.player_id), isouter=True)
        .where(TicketRow.status == SEARCHING)
        .order_by(col(TicketRow.started_at))
    )
    return [
        Searching(row, name, value if value is not None else NEW_PLAYER.value, bool(sits))
        for row, name, value, sits in result.all()
    ]


async def blocks_among_searching(session: AsyncSession) -> list[tuple[str, str]]:
    """Every block (blocker, blocked) between two players who both search."""
    blocker = aliased(TicketRow)
    blocked = aliased(TicketRow)
    blocker_searches = and_(
        col(blocker.player_id) == col(BlockRow.blocker_id), col(blocker.status) == SEARCHING
    )
    blocked_searches = and_(
        col(blocked.player_id) == col(BlockRow.blocked_id), col(blocked.status) == SEARCHING
    )
    result = await session.exec(
        select(BlockRow.blocker_id, BlockRow.blocked_id)
        .join(blocker, blocker_searches)
        .join(blocked, blocked_searches)
    )
    return [(a, b) for a, b in result.all()]


async def unannounced(session: AsyncSession, ended_before: float) -> list[TicketRow]:
    """Tickets that ended before `ended_before` and whose end was never published."""
    result = await session.exec(
        select(TicketRow).where(~col(TicketRow.announced), col(TicketRow.ended_at) < ended_before)
    )
    return list(result.all())


async def mark_announced(session: AsyncSession, ticket_ids: Sequence[str]) -> None:
    """Their ends have been published."""
    if ticket_ids:
        connection = await session.connection()
        await connection.execute(
            update(_TICKETS).where(_TICKETS.c.id.in_(list(ticket_ids))).values(announced=True)
        )
