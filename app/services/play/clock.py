"""Turn clocks: what happens when one runs out (the deadline each change sets is
app/services/tables/deadlines.py).

When a deadline passes, `expire` decides the next step on the table
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
from app.services.play.moves import apply_move
from app.services.tables.change import Change
from app.services.tables.events import GameEvent, LobbyEvent
from app.services.tables.snapshot import NO_TIMEOUTS, Occupant, TableSnapshot

# Replaced after this many consecutive timeouts of one seat (docs/rules.md).
TIMEOUTS_BEFORE_REPLACEMENT = 2


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
