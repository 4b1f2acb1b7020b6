"""Turn deadlines: the one each change of a table sets, inside the ledger's decision, so
the deadline is written by the same compare-and-swap as the change that started the
turn. What happens when one runs out is the play context's (app/services/play/clock.py).
"""

from __future__ import annotations

from app.services.tables.change import Change
from app.services.tables.events import GameEvent
from app.services.tables.snapshot import TableSnapshot, TableStatus

# Changes that leave a running clock as it is when the same seat stays on turn: a reveal
# is part of the bid turn, a timeout's deadline stays due until its move is made, and
# another seat changing hands does not give the seat on turn more time. (A reclaimed
# seat on turn gets a fresh clock: before, a bot was on turn, untimed.)
_KEEPS_CLOCK = frozenset(
    {
        GameEvent.HAND_REVEALED,
        GameEvent.TURN_TIMED_OUT,
        GameEvent.PLAYER_REPLACED,
        GameEvent.SEAT_RECLAIMED,
        GameEvent.TABLE_UPDATED,
        GameEvent.HOST_CHANGED,
    }
)


# A bot's turn carries a watchdog deadline instead of a clock: if nobody moved for this
# long (the process driving the bot died), the sweep of any process wakes the bots. It is
# never shown (a bot's turn has no clock) and never times the bot out.
BOT_WATCHDOG_SECONDS = 1.5


def bot_on_turn(table: TableSnapshot) -> bool:
    """A bot is to move in a game in play."""
    game = table.game
    if table.status is not TableStatus.PLAYING or game is None:
        return False
    seat = game.turn
    occupant = table.occupants[seat] if seat is not None else None
    return occupant is not None and occupant.is_bot


def stamp_clocks(before: TableSnapshot, change: Change, now: float, scale: float = 1.0) -> None:
    """Give each table of `change` its turn deadline: a fresh one when a human's turn
    starts, the running one when the same turn goes on, none when nothing is timed.
    A timed-out seat's owed move is forgotten once the turn passed on."""
    deadline = before.turn_deadline
    seat = before.clock_seat
    for message in change.steps:
        table = message.table
        on_turn = table.clock_seat
        if on_turn is None:
            fresh = now + BOT_WATCHDOG_SECONDS if bot_on_turn(table) else None
        elif on_turn is seat and deadline is not None and message.event in _KEEPS_CLOCK:
            fresh = deadline
        else:
            fresh = now + table.turn_seconds * scale
        timed_out = table.timed_out if table.timed_out is on_turn else None
        if fresh != table.turn_deadline or timed_out is not table.timed_out:
            message.table = table.evolve(turn_deadline=fresh, timed_out=timed_out)
        deadline, seat = fresh, on_turn


def clocked(table: TableSnapshot, now: float, scale: float = 1.0) -> TableSnapshot:
    """A table that starts outside a change (a rematch table) with its first clock."""
    deadline = None
    if table.clock_seat is not None:
        deadline = now + table.turn_seconds * scale
    elif bot_on_turn(table):
        deadline = now + BOT_WATCHDOG_SECONDS
    return table.evolve(turn_deadline=deadline)
