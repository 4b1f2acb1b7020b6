"""A banned player taken off a table (docs/rules.md, Moderation): mid-game a bot takes
their seat for good, as when they leave (PLAYER_REPLACED, counted as abandoned, never
reclaimed), and a seat a bot holds for them while they are away is given up the same
way; before the game their seat is emptied, the host passing on or the table closing
as when they leave. A change of the ledger like any other, so it races moves safely."""

from __future__ import annotations

from app.services.lobby.service import _free_seat, _give_up_claim, _leave_playing
from app.services.tables.change import Change
from app.services.tables.events import GameEvent
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import TableSnapshot, TableStatus


def expel_decision(table: TableSnapshot, player_id: str) -> Change:
    """The change that takes `player_id` off `table` (none when they hold nothing there)."""
    seat = table.seat_of(player_id)
    if seat is not None and table.status is TableStatus.WAITING:
        return _free_seat(table, seat, GameEvent.SEAT_LEFT)
    if table.status is not TableStatus.PLAYING:
        return Change()
    if seat is not None:
        return _leave_playing(table, seat)
    away = table.away_seat(player_id)
    if away is not None:
        return _give_up_claim(table, away)
    return Change()


async def expel(ledger: Ledger, table_id: str, player_id: str) -> TableSnapshot:
    """Take the player off one table, through the ledger's compare-and-swap."""
    _, after = await ledger.change(table_id, lambda table: expel_decision(table, player_id))
    return after
