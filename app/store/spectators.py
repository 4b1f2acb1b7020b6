"""Spectators of a table (inside a caller's session): who watched it, and who keeps a
spectator's access to it because they were a spectator of the table it is the rematch of."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Select, bindparam, literal, true
from sqlalchemy import select as core_select
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.store.models import PlayerRow, SpectatorRow


async def remember_spectator(session: AsyncSession, table_id: str, player_id: str) -> None:
    """Note that `player_id` watches `table_id`; watching again (or having kept access
    there) changes nothing."""
    dialect = (await session.connection()).dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    await session.exec(
        insert(SpectatorRow)
        .values(table_id=table_id, player_id=player_id, kept=False)
        .on_conflict_do_nothing(index_elements=["table_id", "player_id"])
    )


async def spectators_of(session: AsyncSession, table_id: str) -> list[tuple[str, str]]:
    """(player id, username) of everyone who watched the table or kept access to it."""
    rows = await session.exec(
        select(SpectatorRow.player_id, PlayerRow.username)
        .join(PlayerRow, col(PlayerRow.id) == col(SpectatorRow.player_id))
        .where(SpectatorRow.table_id == table_id)
        .order_by(col(SpectatorRow.player_id))
    )
    return [(player_id, username) for player_id, username in rows.all()]


def keep_spectators(session: AsyncSession, table_id: str, player_ids: Iterable[str]) -> None:
    """These players keep a spectator's access to `table_id` (a rematch table)."""
    for player_id in player_ids:
        session.add(SpectatorRow(table_id=table_id, player_id=player_id, kept=True))


def kept_access(kind: str) -> Select[str, str]:
    """The tables where the player bound to `:player_id` keeps a spectator's access, as
    (table id, `kind`) rows, to be unioned with the link grants of the same shape."""
    return core_select(col(SpectatorRow.table_id), literal(kind)).where(
        col(SpectatorRow.player_id) == bindparam("player_id"), col(SpectatorRow.kept) == true()
    )
