"""The table a match opens (docs/rules.md, Quick play): PUBLIC, INVITE_ONLY, spectating on,
30 s turns, STANDARD replacement bots, rated as its tickets, named "Quick play", hosted
by the human in the first seat from NORTH, its game started at once."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.game import Game
from app.rules.levels import BotLevel
from app.rules.matchmaking import Match
from app.rules.seats import SEATS
from app.services.lobby.service import start_entry
from app.services.tables.deadlines import clocked
from app.services.tables.ledger import insert_table
from app.services.tables.snapshot import (
    JoinPolicy,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)
from app.store import table_rows as repo

TABLE_NAME = "Quick play"
TURN_SECONDS = 30
BOTS = BotLevel.STANDARD


def quick_play_table(
    match: Match, usernames: Mapping[str, str], now: float, clock_scale: float = 1.0
) -> TableSnapshot:
    """The new table of `match`, its game started (version 1) and its first clock set;
    `usernames` by player id."""
    occupants: list[Occupant] = []
    for seat, ticket in zip(SEATS, match.seats, strict=True):
        if ticket is None:
            occupants.append(Occupant.bot(seat, BOTS))
        else:
            occupants.append(Occupant(ticket.player_id, usernames.get(ticket.player_id)))
    host = next(o for o in occupants if not o.is_bot)
    game, _ = Game.start([o.player_id for o in occupants])
    table = TableSnapshot(
        id=uuid.uuid4().hex,
        name=TABLE_NAME,
        host_id=host.player_id,
        host_name=host.username or "?",
        visibility=Visibility.PUBLIC,
        join_policy=JoinPolicy.INVITE_ONLY,
        spectating=True,
        status=TableStatus.PLAYING,
        version=1,
        occupants=tuple(occupants),
        game=game,
        created_at=now,
        turn_seconds=TURN_SECONDS,
        replacement_bot=BOTS,
        rated=match.rated,
    )
    return clocked(table, now, clock_scale)


async def store_table(session: AsyncSession, table: TableSnapshot) -> None:
    """Insert the table, its seats and its game's start in the move log (inside the
    match's transaction)."""
    assert table.game is not None
    await insert_table(session, table)
    await repo.append_moves(session, table.id, [(1, 1, start_entry(table.game))])
