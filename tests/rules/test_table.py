"""Table and teams."""

from __future__ import annotations

import pytest

from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game
from app.rules.seats import Seat, Team, seats_from
from app.rules.views import project
from tests.rules.rules_helpers import SUIT_DEAL, bid, new_game, play_out_hand


def test_four_seats_in_clockwise_order() -> None:
    assert list(Seat) == [Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST]
    assert [s.left for s in Seat] == [Seat.EAST, Seat.SOUTH, Seat.WEST, Seat.NORTH]
    assert seats_from(Seat.SOUTH) == [Seat.SOUTH, Seat.WEST, Seat.NORTH, Seat.EAST]


def test_partners_sit_opposite() -> None:
    assert Seat.NORTH.partner is Seat.SOUTH
    assert Seat.SOUTH.partner is Seat.NORTH
    assert Seat.EAST.partner is Seat.WEST
    assert Seat.WEST.partner is Seat.EAST


def test_fixed_partnerships_north_south_against_east_west() -> None:
    assert Team.NORTH_SOUTH.seats == (Seat.NORTH, Seat.SOUTH)
    assert Team.EAST_WEST.seats == (Seat.EAST, Seat.WEST)
    assert {s.team for s in (Seat.NORTH, Seat.SOUTH)} == {Team.NORTH_SOUTH}
    assert {s.team for s in (Seat.EAST, Seat.WEST)} == {Team.EAST_WEST}
    assert Team.NORTH_SOUTH.other is Team.EAST_WEST


def test_a_game_needs_four_players() -> None:
    with pytest.raises(RuleError) as info:
        Game.start(["a", "b", "c"])
    assert info.value.code is ErrorCode.BAD_USER_INPUT


def test_seats_never_rotate_during_a_game() -> None:
    game = new_game(deals={1: SUIT_DEAL, 2: SUIT_DEAL})
    players = list(game.players)
    bid(game, 0, 0, 0, 13)
    play_out_hand(game)
    assert game.hand.number == 2
    assert game.players == players
    assert [v.player_id for v in project(game, None).seats] == players


def test_partners_share_one_target_and_one_score() -> None:
    game = new_game(SUIT_DEAL)
    bid(game, 2, 1, 3, 6)  # EAST 2, SOUTH 1, WEST total 3, NORTH total 6
    view = project(game, Seat.NORTH)
    assert len(view.teams) == 2
    assert [(t.team, t.target) for t in view.teams] == [
        (Team.NORTH_SOUTH, 6),
        (Team.EAST_WEST, 3),
    ]
    play_out_hand(game)  # NORTH wins every trick with its spades
    assert [(r.team, r.tricks) for r in game.history] == [
        (Team.NORTH_SOUTH, 13),
        (Team.EAST_WEST, 0),
    ]
    assert game.scores == [60 + 7, -30]
