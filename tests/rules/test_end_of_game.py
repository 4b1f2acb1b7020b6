"""End of game: 250 wins, -250 loses, the higher score when both pass a line, ties."""

from __future__ import annotations

import pytest

from app.rules.bidding import BidKind
from app.rules.cards import Card
from app.rules.errors import ErrorCode
from app.rules.game import Game, Phase
from app.rules.moves import EventKind, PlaceBid, PlayCard, RevealHand
from app.rules.scoring import game_winner
from app.rules.seats import Seat, Team
from app.rules.views import project
from tests.rules.rules_helpers import SUIT_DEAL, bid, expect_refusal, new_game, play_out_hand

# Bids in SUIT_DEAL's first hand (order EAST, SOUTH, WEST, NORTH); NORTH + SOUTH take all
# 13 tricks, so NORTH + SOUTH always score +130 with SOUTH 0 and NORTH 13.
EAST_WEST_ZERO = (0, 0, 0, 13)  # EAST + WEST: target 0, no trick: 0
EAST_WEST_DOUBLE_NIL = ("NIL", 0, "NIL", 13)  # EAST + WEST: +100
EAST_WEST_SET = (10, 0, 10, 13)  # EAST + WEST: -100


def _hand(scores: tuple[int, int], bids: tuple[int | str, ...]) -> tuple[Game, list[EventKind]]:
    """Play SUIT_DEAL's hand with the scores set to `scores` once the bids are in."""
    game = new_game(deals={1: SUIT_DEAL, 2: SUIT_DEAL})
    bid(game, *bids)
    game.scores = list(scores)
    events = play_out_hand(game)
    return game, [e.kind for e in events]


@pytest.mark.parametrize(
    ("scores", "winner"),
    [
        ((250, 100), Team.NORTH_SOUTH),
        ((100, 250), Team.EAST_WEST),
        ((249, 249), None),
        ((260, 300), Team.EAST_WEST),
        ((300, 260), Team.NORTH_SOUTH),
        ((250, 250), None),
        ((400, 400), None),
        ((-250, 0), Team.EAST_WEST),
        ((0, -250), Team.NORTH_SOUTH),
        ((-249, -249), None),
        ((-260, -300), Team.NORTH_SOUTH),
        ((-300, -260), Team.EAST_WEST),
        ((-250, -250), None),
        ((-400, -400), None),
        ((300, -300), Team.NORTH_SOUTH),
        ((-100, -250), Team.NORTH_SOUTH),
    ],
)
def test_game_winner_rules(scores: tuple[int, int], winner: Team | None) -> None:
    assert game_winner(scores) is winner


def test_team_at_250_wins() -> None:
    game, kinds = _hand((120, 0), EAST_WEST_ZERO)
    assert game.scores == [250, 0]
    assert game.phase is Phase.GAME_OVER and game.winner is Team.NORTH_SOUTH
    assert kinds[-2:] == [EventKind.HAND_SCORED, EventKind.GAME_OVER]
    assert project(game, None).winner is Team.NORTH_SOUTH
    assert game.turn is None


def test_team_below_250_plays_another_hand() -> None:
    game, kinds = _hand((119, 0), EAST_WEST_ZERO)
    assert game.scores == [249, 0]
    assert game.phase is Phase.BIDDING and game.winner is None
    assert game.hand.number == 2 and kinds[-1] is EventKind.HAND_DEALT


def test_team_at_minus_250_loses_at_once() -> None:
    game, _ = _hand((-200, -150), EAST_WEST_SET)
    assert game.scores == [-70, -250]
    assert game.phase is Phase.GAME_OVER and game.winner is Team.NORTH_SOUTH


def test_both_teams_over_250_higher_score_wins() -> None:
    game, _ = _hand((200, 200), EAST_WEST_DOUBLE_NIL)
    assert game.scores == [330, 300] and game.winner is Team.NORTH_SOUTH
    game, _ = _hand((150, 200), EAST_WEST_DOUBLE_NIL)
    assert game.scores == [280, 300] and game.winner is Team.EAST_WEST


def test_both_teams_under_minus_250_higher_score_wins() -> None:
    game, _ = _hand((-400, -150), EAST_WEST_SET)
    assert game.scores == [-270, -250]
    assert game.winner is Team.EAST_WEST


def test_tie_at_250_plays_another_hand_until_it_breaks() -> None:
    game, kinds = _hand((120, 150), EAST_WEST_DOUBLE_NIL)
    assert game.scores == [250, 250]
    assert game.phase is Phase.BIDDING and game.winner is None
    assert kinds[-1] is EventKind.HAND_DEALT and game.hand.number == 2
    bid(game, 0, 0, 13, 0)  # SOUTH, WEST, NORTH, EAST: NORTH + SOUTH +130, EAST + WEST 0
    play_out_hand(game)
    assert game.scores == [380, 250]
    assert game.winner is Team.NORTH_SOUTH


def test_tie_at_minus_250_plays_another_hand() -> None:
    game, kinds = _hand((-380, -150), EAST_WEST_SET)
    assert game.scores == [-250, -250]
    assert game.phase is Phase.BIDDING and game.winner is None
    assert kinds[-1] is EventKind.HAND_DEALT and game.hand.number == 2
    bid(game, 0, 0, 13, 0)
    play_out_hand(game)
    assert game.scores == [-120, -250]
    assert game.winner is Team.NORTH_SOUTH


def test_end_is_checked_only_after_a_scored_hand() -> None:
    game = new_game(SUIT_DEAL)
    bid(game, *EAST_WEST_ZERO)
    game.scores = [300, 0]
    game.apply(PlayCard(Seat.EAST, Card.parse("AH")))
    assert game.phase is Phase.PLAYING and game.winner is None
    play_out_hand(game)
    assert game.winner is Team.NORTH_SOUTH


def test_no_move_after_the_game_is_over() -> None:
    game, _ = _hand((120, 0), EAST_WEST_ZERO)
    for move in (
        PlaceBid(Seat.SOUTH, BidKind.TRICKS, 3),
        PlayCard(Seat.EAST, Card.parse("AH")),
        RevealHand(Seat.EAST),
    ):
        expect_refusal(game, move, ErrorCode.WRONG_PHASE)
