"""The one check that keeps a player from being seated at two unfinished tables by quick
play, whatever races with it.

Every transaction that seats a human (a table created with its host, a join, a reclaim,
a rematch table, a quick-play table) first takes a shared lock on the player's row
(`hold_for_seating`: PostgreSQL's FOR KEY SHARE, which conflicts with nothing but FOR
UPDATE). A transaction that must know a player is seated nowhere before seating them
(the match) or before taking their seats away (a ban) takes the exclusive lock
(`claim_players`: FOR UPDATE, in id order) and then reads their seats: any seating
that committed first is seen, and any that comes later waits for its commit. On
SQLite every write transaction is `BEGIN IMMEDIATE` (one writer), which orders them
the same way; the locking clauses are left out there.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.store.models import PlayerRow, SeatRow, TableRow
from app.store.moderation import banned_among

# The statuses of unfinished tables: a seat there is "held" (docs/rules.md, Quick play).
OPEN_STATUSES = ("WAITING", "PLAYING")


async def hold_for_seating(session: AsyncSession, player_ids: Collection[str]) -> None:
    """Take the shared seating lock on the players about to be seated (humans only)."""
    humans = sorted({p for p in player_ids if not p.startswith("bot:")})
    if humans:
        # SQLite's compiler leaves the locking clause out (its writers are serialised).
        await session.exec(
            select(PlayerRow.id)
            .where(col(PlayerRow.id).in_(humans))
            .order_by(col(PlayerRow.id))
            .with_for_update(read=True, key_share=True)
        )


async def claim_players(session: AsyncSession, player_ids: Collection[str]) -> set[str]:
    """Lock the players against being seated by anyone else until this transaction ends;
    the ones among them who may not be seated: those who hold a seat at a WAITING or
    PLAYING table (an away player's seat is held by its bot, not them), and those banned
    (a ban is stored under the same lock on the player's row, so one that committed
    first is seen)."""
    players = sorted(set(player_ids))
    if not players:
        return set()
    await session.exec(
        select(PlayerRow.id)
        .where(col(PlayerRow.id).in_(players))
        .order_by(col(PlayerRow.id))
        .with_for_update()
    )
    return await seated_among(session, players) | await banned_among(session, players)


async def seated_among(session: AsyncSession, player_ids: Collection[str]) -> set[str]:
    """The players among `player_ids` who hold a seat at a WAITING or PLAYING table."""
    if not player_ids:
        return set()
    rows = await session.exec(
        select(SeatRow.player_id)
        .join(TableRow, col(TableRow.id) == col(SeatRow.table_id))
        .where(col(SeatRow.player_id).in_(list(player_ids)))
        .where(col(TableRow.status).in_(OPEN_STATUSES))
    )
    return set(rows.all())
