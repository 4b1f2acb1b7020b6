"""Broker messages as bytes between processes: a table's live state (clock, replacement
level, deadline, away players, timeouts, the seat whose move is owed), chat messages,
presence and the rematch facts of a table arrive as they were sent."""

from __future__ import annotations

import json
import random

from app.rules.bots import basic_move
from app.rules.game import Game, Phase
from app.rules.levels import BotLevel
from app.rules.seats import SEATS, Seat
from app.rules.serialize import game_to_data
from app.rules.simulate import play_game
from app.services import broker_codec as wire
from app.services.accounts.auth import Player
from app.services.chat.model import ChatChannel, ChatMessage
from app.services.live.presence import PresenceMessage
from app.services.tables.events import GameEvent
from app.services.tables.snapshot import GameMessage, Occupant, TableSnapshot, TableStatus
from tests.support.tables import table_snapshot

PLAYERS = ["p1", "bot:east", "p3", "p4"]


def a_live_table() -> TableSnapshot:
    """A table in play with every live-table field away from its default."""
    game, _ = Game.start(PLAYERS, seed=3)
    return table_snapshot(
        name="live",
        host_id="p1",
        host_name="one",
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
    sent = GameMessage(GameEvent.TURN_TIMED_OUT, Seat.SOUTH, a_live_table())
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
    body = json.loads(wire.encode(GameMessage(GameEvent.BID_PLACED, Seat.NORTH, a_live_table())))
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


def test_a_chat_message_crosses_processes_unchanged_text_included() -> None:
    message = ChatMessage(
        id="m1",
        table_id="t1",
        channel=ChatChannel.SPECTATORS,
        sender=Player("p1", "Ann"),
        text='<b>"quoted"</b> & \u2660 \\n',
        sent_at=1234.5,
    )
    assert wire.decode(wire.encode(message)) == message


def test_a_finished_table_keeps_its_rematch_facts_on_the_wire() -> None:
    game, _ = play_game(seed=3)
    table = table_snapshot(
        id="old1",
        name=None,
        host_id="p1",
        host_name="Ann",
        status=TableStatus.FINISHED,
        version=250,
        occupants=tuple(Occupant.bot(s) for s in SEATS),
        game=game,
        finished_at=99.5,
        rematch_requests=(Seat.NORTH, Seat.WEST),
        rematch_of="older",
        next_table_id="new1",
    )
    decoded = wire.decode(wire.encode(GameMessage(GameEvent.REMATCH_STARTED, None, table)))
    assert isinstance(decoded, GameMessage)
    got = decoded.table
    assert (got.finished_at, got.rematch_requests, got.rematch_of, got.next_table_id) == (
        99.5,
        (Seat.NORTH, Seat.WEST),
        "older",
        "new1",
    )
    assert got.version == 250 and got.status is TableStatus.FINISHED


def test_every_state_of_a_whole_game_crosses_processes_exactly() -> None:
    """At every move of a game (finished hands, tricks, a game over), the table another
    process decodes holds the very game that was sent, and the message reads as the
    game's own data (`game_to_data`), however its JSON was put together."""
    rng = random.Random(11)
    game, _ = Game.start([s.bot_id for s in SEATS], seed=11)
    version = 0
    while game.phase is not Phase.GAME_OVER:
        seat = game.turn
        assert seat is not None
        game.apply(basic_move(game, seat, rng))
        version += 1
        table = table_snapshot(status=TableStatus.PLAYING, version=version, game=game.copy())
        data = wire.encode(GameMessage(GameEvent.CARD_PLAYED, Seat.NORTH, table, 1.0))
        got = wire.decode(data)
        assert isinstance(got, GameMessage) and got.table.game is not None
        assert game_to_data(got.table.game) == game_to_data(game)
        body = json.loads(data)["table"]["game"]
        assert body["head"] == game_to_data(game, with_finished=False)
        assert [json.loads(f) for f in body["finished"]] == game_to_data(game)["finished"]
