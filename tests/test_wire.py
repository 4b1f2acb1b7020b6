"""Broker messages between processes keep the live-table state: clock, replacement
level, deadline, away players, timeouts, the seat whose move is owed; and presence."""

from __future__ import annotations

import json

from app.rules.game import Game
from app.rules.levels import BotLevel
from app.rules.seats import Seat
from app.services import wire
from app.services.events import GameEvent
from app.services.live.presence import PresenceMessage
from app.services.model import (
    GameMessage,
    JoinPolicy,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)

PLAYERS = ["p1", "bot:east", "p3", "p4"]


def a_table() -> TableSnapshot:
    game, _ = Game.start(PLAYERS, seed=3)
    return TableSnapshot(
        id="t1",
        name="live",
        host_id="p1",
        host_name="one",
        visibility=Visibility.PUBLIC,
        join_policy=JoinPolicy.OPEN,
        spectating=True,
        status=TableStatus.PLAYING,
        version=7,
        occupants=(
            Occupant("p1", "one"),
            Occupant.bot(Seat.EAST),
            Occupant("p3", "three"),
            Occupant("p4", "four"),
        ),
        game=game,
        turn_seconds=45,
        replacement_bot=BotLevel.EXPERT,
        turn_deadline=1_800_000_000.25,
        away=(None, Occupant("p2", "two"), None, None),
        timeouts=(0, 0, 1, 0),
        timed_out=Seat.SOUTH,
    )


def test_a_game_message_crosses_processes_with_its_live_table_state() -> None:
    sent = GameMessage(GameEvent.TURN_TIMED_OUT, Seat.SOUTH, a_table())
    got = wire.decode(wire.encode(sent))
    assert isinstance(got, GameMessage)
    assert got.event is GameEvent.TURN_TIMED_OUT
    table = got.table
    assert table.turn_seconds == 45
    assert table.replacement_bot is BotLevel.EXPERT
    assert table.turn_deadline == 1_800_000_000.25
    assert table.away == (None, Occupant("p2", "two"), None, None)
    assert table.timeouts == (0, 0, 1, 0)
    assert table.timed_out is Seat.SOUTH


def test_a_message_of_a_process_without_live_fields_gets_the_defaults() -> None:
    body = json.loads(wire.encode(GameMessage(GameEvent.BID_PLACED, Seat.NORTH, a_table())))
    del body["table"]["clock"], body["table"]["live"]
    table = wire.decode(json.dumps(body)).table  # type: ignore[union-attr]
    assert (table.turn_seconds, table.replacement_bot, table.turn_deadline) == (
        30,
        BotLevel.BASIC,
        None,
    )
    assert table.away == (None, None, None, None) and table.timed_out is None


def test_a_presence_change_crosses_processes() -> None:
    sent = PresenceMessage("t1", "p3", False, 1_800_000_001.5)
    assert wire.decode(wire.encode(sent)) == sent
