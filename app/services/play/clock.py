"""Turn clocks: the deadline each change sets, and what happens when one runs out.

Every change goes through `stamp_clocks` inside the ledger's decision, so the
deadline is written by the same compare-and-swap as the change that started
the turn. When a deadline passes, `expire` decides the next step on the table
as it stands: first a TURN_TIMED_OUT change (the seat), then the basic bot's
move for that seat (a reveal first if the hand is withheld, never BLIND_NIL),
each its own change; after the second consecutive timeout, a bot takes the
seat instead (PLAYER_REPLACED) and the human becomes its away player. Each step
is a compare-and-swap like any move, so a deadline fired by two processes, or
racing a late human move, applies once.
"""

from __future__ import annotations

import random

from app.rules.bots import basic_move
from app.rules.movelog import move_entry
from app.rules.moves import PlaceBid, ReplacePlayer, RevealHand
from app.rules.seats import Seat
from app.services.tables.change import Change
from app.services.tables.events import GameEvent, LobbyEvent
from app.services.tables.snapshot import NO_TIMEOUTS, Occupant, TableSnapshot, TableStatus

# Replaced after this many consecutive timeouts of one seat (RULES.md).
TIMEOUTS_BEFORE_REPLACEMENT = 2

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


def reset_timeouts(change: Change, seat: Seat) -> None:
    """A human acted for `seat`: its count of consecutive timeouts starts again."""
    for message in change.steps:
        table = message.table
        if table.timeouts[seat]:
            counts = list(table.timeouts)
            counts[seat] = 0
            message.table = table.evolve(timeouts=tuple(counts))


def due(table: TableSnapshot, now: float) -> Seat | None:
    """The seat whose clock has run out at `now`, if any."""
    seat = table.clock_seat
    deadline = table.turn_deadline
    if seat is None or deadline is None or deadline > now:
        return None
    return seat


def expire(table: TableSnapshot, now: float, rng: random.Random) -> Change:
    """The next step for a table whose clock ran out (an empty change if none is due)."""
    from app.services.play.games import apply_move  # the move path of every game change

    seat = due(table, now)
    if seat is None or table.game is None:
        return Change()
    if table.timed_out is seat:
        move = basic_move(table.game, seat, rng)
        if isinstance(move, PlaceBid) and table.game.hand.withheld[seat]:
            move = RevealHand(seat)  # never BLIND_NIL for an absent player
        return apply_move(table, move)
    counts = list(table.timeouts or NO_TIMEOUTS)
    counts[seat] += 1
    timed = table.evolve(version=table.version + 1, timeouts=tuple(counts), timed_out=seat)
    change = Change()
    change.add(GameEvent.TURN_TIMED_OUT, timed, seat)
    change.log_entry(timed.version, 1, {"type": "timeout", "seat": seat.name})
    if counts[seat] >= TIMEOUTS_BEFORE_REPLACEMENT:
        replace_absent(timed, seat, change)
    return change


def replace_absent(table: TableSnapshot, seat: Seat, change: Change) -> TableSnapshot:
    """A bot takes the seat of an absent human, who becomes the seat's away player
    (PLAYER_REPLACED, one more step of `change`)."""
    assert table.game is not None
    human = table.occupants[seat]
    assert human is not None and not human.is_bot
    game = table.game.copy()
    move = ReplacePlayer(seat, seat.bot_id)
    steps = game.apply_steps(move)
    occupants = list(table.occupants)
    occupants[seat] = Occupant.bot(seat, table.replacement_bot)
    away = list(table.away)
    away[seat] = human
    counts = list(table.timeouts)
    counts[seat] = 0
    replaced = table.evolve(
        occupants=tuple(occupants),
        game=steps[-1].state,
        version=table.version + 1,
        away=tuple(away),
        timeouts=tuple(counts),
        timed_out=None,
        turn_deadline=None,
    )
    change.add(GameEvent.PLAYER_REPLACED, replaced, seat)
    change.log_entry(replaced.version, 1, {**move_entry(move), "away": human.player_id})
    change.lobby_event = LobbyEvent.TABLE_UPDATED
    return replaced
