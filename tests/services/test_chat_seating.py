"""Who counts as seated for table chat (docs/rules.md, Table chat): an away player, whose seat
a bot holds until they reclaim it, is still a player of the table."""

from __future__ import annotations

from dataclasses import replace

from app.rules.seats import Seat
from app.services.chat.model import ChatChannel
from app.services.chat.service import may_read, may_write, plays_at
from app.services.tables.snapshot import NO_AWAY, Occupant, TableSnapshot, TableStatus
from tests.services.test_rematch_decisions import finished_table


def _playing_with_south_away() -> TableSnapshot:
    table = finished_table({Seat.NORTH: "host", Seat.SOUTH: "sam"})
    away = list(NO_AWAY)
    away[Seat.SOUTH] = Occupant("sam", "Sam")
    occupants = list(table.occupants)
    occupants[Seat.SOUTH] = Occupant.bot(Seat.SOUTH)
    return replace(table, status=TableStatus.PLAYING, occupants=tuple(occupants), away=tuple(away))


def test_an_away_player_does_not_read_the_spectators_channel_mid_game() -> None:
    table = _playing_with_south_away()
    assert plays_at(table, "sam")
    assert not may_read(table, plays_at(table, "sam"), ChatChannel.SPECTATORS)
    assert may_read(table, plays_at(table, "sam"), ChatChannel.PLAYERS)


def test_an_away_player_writes_as_a_player_not_as_a_spectator() -> None:
    table = _playing_with_south_away()
    seated = plays_at(table, "sam")
    assert may_write(seated, ChatChannel.PLAYERS)
    assert not may_write(seated, ChatChannel.SPECTATORS)


def test_a_stranger_is_a_spectator_for_chat() -> None:
    table = _playing_with_south_away()
    assert not plays_at(table, "someone")
    assert may_read(table, False, ChatChannel.SPECTATORS)
