"""A table row checked against its move log (`spades verify`): a row that is what its log
replays to passes; a row or log changed anywhere is named, without any card shown."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.compact_json import dumps
from app.rules.audit import LogRow, MismatchKind, StoredTable, audit_table, first_difference
from app.rules.bots import random_move
from app.rules.game import Game, Phase
from app.rules.movelog import move_entry
from app.rules.moves import ReplacePlayer
from app.rules.seats import Seat
from app.rules.serialize import game_to_json

PLAYERS = ["p-north", "p-east", "p-south", "p-west"]
CARD_CODE = re.compile(r"\b(?:[2-9]|10|[JQKA])[SHDC]\b")


@dataclass
class Table:
    """A table as the server keeps it: a move log written change by change, and the row
    those changes left."""

    log: list[LogRow] = field(default_factory=list)
    version: int = 0
    game: Game | None = None
    status: str = "WAITING"

    def write(self, entry: dict[str, Any], changes: int = 1) -> None:
        self.log.append(LogRow(self.version + 1, changes, dumps(entry)))
        self.version += changes

    def row(self) -> StoredTable:
        state = game_to_json(self.game) if self.game is not None else None
        return StoredTable("t1", self.version, self.status, state)


def seated_and_started(seed: int) -> Table:
    """Three players sit down beside the host; the fourth seat starts the game."""
    table = Table()
    for seat, player in zip(("EAST", "SOUTH", "WEST"), PLAYERS[1:], strict=True):
        table.write({"type": "sit", "seat": seat, "player": player})
    game, _ = Game.start(PLAYERS, seed=seed)
    table.write({"type": "start", "seed": str(seed), "public": True, "players": PLAYERS})
    table.game, table.status = game, "PLAYING"
    return table


def play(table: Table, moves: int, rng: random.Random) -> Table:
    """Up to `moves` moves, each logged with the changes it made (as the server does); a
    turn timed out and a bot taking a seat among them."""
    game = table.game
    assert game is not None
    for number in range(moves):
        if game.phase is Phase.GAME_OVER:
            table.status = "FINISHED"
            break
        seat = game.turn
        assert seat is not None
        if number == 7:
            table.write({"type": "timeout", "seat": seat.name})
            replaced = ReplacePlayer(seat, seat.bot_id)
            game.apply(replaced)
            table.write({**move_entry(replaced), "away": PLAYERS[seat]})
            continue
        move = random_move(game, seat, rng)
        table.write(move_entry(move), changes=len(game.apply_steps(move)))
    if game.phase is Phase.GAME_OVER:
        table.status = "FINISHED"
    return table


def played(seed: int, moves: int) -> Table:
    return play(seated_and_started(seed), moves, random.Random(seed))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), moves=st.integers(0, 400))
def test_a_row_that_is_what_its_log_replays_to_has_no_mismatch(seed: int, moves: int) -> None:
    table = played(seed, moves)
    assert audit_table(table.row(), table.log) == []


def test_a_table_that_never_started_holds_no_game() -> None:
    table = Table()
    table.write({"type": "sit", "seat": "EAST", "player": "p-east"})
    assert audit_table(table.row(), table.log) == []
    with_game = replace(table.row(), game_state=game_to_json(Game.start(PLAYERS, seed=1)[0]))
    (mismatch,) = audit_table(with_game, table.log)
    assert mismatch.kind is MismatchKind.GAME


def test_a_closed_table_is_closed_in_its_row_and_its_log_ends_there() -> None:
    table = played(3, 30)
    table.write({"type": "close", "reason": "spam"})
    table.status = "CLOSED"
    assert audit_table(table.row(), table.log) == []
    (mismatch,) = audit_table(replace(table.row(), status="PLAYING"), table.log)
    assert mismatch.kind is MismatchKind.STATUS
    assert "the log leads to CLOSED" in mismatch.detail

    after_close = [*table.log, LogRow(table.version + 1, 1, dumps({"type": "options"}))]
    (mismatch,) = audit_table(replace(table.row(), version=table.version + 1), after_close)
    assert mismatch.kind is MismatchKind.LOG


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), moves=st.integers(0, 200), ahead=st.integers(1, 5))
def test_a_row_at_another_version_than_its_log_is_a_version_mismatch(
    seed: int, moves: int, ahead: int
) -> None:
    table = played(seed, moves)
    (mismatch,) = audit_table(replace(table.row(), version=table.version + ahead), table.log)
    assert mismatch.kind is MismatchKind.VERSION
    assert mismatch.line().startswith("t1: version: ")


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), moves=st.integers(0, 300), data=st.data())
def test_a_card_moved_between_hands_in_the_row_is_a_game_mismatch_showing_no_card(
    seed: int, moves: int, data: st.DataObject
) -> None:
    table = played(seed, moves)
    row = table.row()
    assert row.game_state is not None
    state = json.loads(row.game_state)
    hands = state["hand"]["hands"]
    givers = [i for i, h in enumerate(hands) if h]
    if len(givers) < 2:
        return  # a hand played out: nothing to move between hands
    giver, taker = data.draw(st.permutations(givers))[:2]
    hands[taker].append(hands[giver].pop())
    (mismatch,) = audit_table(replace(row, game_state=dumps(state)), table.log)
    assert mismatch.kind is MismatchKind.GAME
    assert mismatch.detail == f"the row's game differs at hand.hands[{min(giver, taker)}] (length)"
    assert not CARD_CODE.search(mismatch.line())


def test_a_gap_in_the_log_is_a_log_mismatch() -> None:
    table = played(5, 20)
    gappy = table.log[:10] + table.log[11:]
    (mismatch,) = audit_table(table.row(), gappy)
    assert mismatch.kind is MismatchKind.LOG
    assert "does not follow" in mismatch.detail


def test_a_move_the_engine_refuses_is_a_log_mismatch() -> None:
    table = seated_and_started(9)
    assert table.game is not None
    seat = table.game.turn
    assert seat is not None
    table.write({"type": "play", "seat": seat.name, "card": "AS"})  # bidding comes first
    (mismatch,) = audit_table(table.row(), table.log)
    assert mismatch.kind is MismatchKind.LOG
    assert "does not replay" in mismatch.detail


def test_a_move_logged_with_the_wrong_number_of_changes_is_a_log_mismatch() -> None:
    table = seated_and_started(11)
    assert table.game is not None
    move = random_move(table.game, Seat.EAST, random.Random(1))
    table.game.apply(move)
    table.write(move_entry(move), changes=2)  # a bid makes one change
    (mismatch,) = audit_table(table.row(), table.log)
    assert "replays to 1 changes, logged 2" in mismatch.detail


def test_an_unreadable_row_is_named_not_shown() -> None:
    table = played(13, 10)
    (mismatch,) = audit_table(replace(table.row(), game_state="{not json"), table.log)
    assert mismatch.detail == "the row's game is not JSON"
    broken = [*table.log[:-1], LogRow(table.log[-1].seq, table.log[-1].changes, "[")]
    (mismatch,) = audit_table(table.row(), broken)
    assert mismatch.kind is MismatchKind.LOG


def test_the_first_difference_is_a_path_never_a_value() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == "a[1].b"
    assert first_difference({"a": 1}, {"a": 1, "c": 2}) == "c"
    assert first_difference([1], [1, 2]) == " (length)"
    assert first_difference({"a": True}, {"a": 1}) == "a"
    assert first_difference({"a": [1]}, {"a": [1]}) is None
