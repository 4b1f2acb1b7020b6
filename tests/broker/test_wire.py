"""Broker messages as bytes between processes: chat messages and the rematch facts of a
table arrive as they were sent."""

from __future__ import annotations

from app.rules.seats import SEATS, Seat
from app.rules.simulate import play_game
from app.services import wire
from app.services.auth import Player
from app.services.chat.model import ChatChannel, ChatMessage
from app.services.model import (
    GameMessage,
    JoinPolicy,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)


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
    table = TableSnapshot(
        id="old1",
        name=None,
        host_id="p1",
        host_name="Ann",
        visibility=Visibility.PUBLIC,
        join_policy=JoinPolicy.OPEN,
        spectating=True,
        status=TableStatus.FINISHED,
        version=250,
        occupants=tuple(Occupant.bot(s) for s in SEATS),
        game=game,
        finished_at=99.5,
        rematch_requests=(Seat.NORTH, Seat.WEST),
        rematch_of="older",
        next_table_id="new1",
    )
    decoded = wire.decode(wire.encode(GameMessage("REMATCH_STARTED", None, table)))
    assert isinstance(decoded, GameMessage)
    got = decoded.table
    assert (got.finished_at, got.rematch_requests, got.rematch_of, got.next_table_id) == (
        99.5,
        (Seat.NORTH, Seat.WEST),
        "older",
        "new1",
    )
    assert got.version == 250 and got.status is TableStatus.FINISHED
