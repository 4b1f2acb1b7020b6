"""Scoring after the 13th trick: nil, blind nil, targets, bags and the bag penalty."""

from __future__ import annotations

from app.rules.bidding import BLIND_NIL, NIL, Bid
from app.rules.game import Game, Phase
from app.rules.moves import EventKind, PassCards, PlayCard
from app.rules.scoring import TeamHandResult, score_team
from app.rules.seats import Seat, Team
from tests.rules.rules_helpers import (
    SUIT_DEAL,
    bid,
    cards,
    first_legal,
    make_deal,
    new_game,
    play_out_hand,
)

# SOUTH's cards after the exchange (it passes AH AC and receives 6D 5D) are all lower than
# every other card of their suit, and it holds no spade: it cannot take a trick.
BLIND_NIL_DEAL = make_deal(
    north="AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 6D 5D",
    east="3S 2S KH QH JH 10H 9H 8H 7H 6H KC QC JC",
    south="AH 5H 4H 3H 2H AC 5C 4C 3C 2C 4D 3D 2D",
    west="10C 9C 8C 7C 6C AD KD QD JD 10D 9D 8D 7D",
)


def _score(
    bids: tuple[Bid, Bid],
    tricks: tuple[int, int],
    target: int | None,
    *,
    score_before: int = 0,
    bags_before: int = 0,
) -> TeamHandResult:
    return score_team(1, Team.NORTH_SOUTH, bids, tricks, target, score_before, bags_before)


def _n(tricks: int) -> Bid:
    return Bid.number(tricks)


def _suit_deal_hand(*bids: int | str, bags: tuple[int, int] = (0, 0)) -> Game:
    """Play SUIT_DEAL's first hand (NORTH + SOUTH take all 13 tricks) with these bids."""
    game = new_game(SUIT_DEAL)
    bid(game, *bids)  # EAST, SOUTH, WEST, NORTH
    game.bags = list(bags)
    play_out_hand(game)
    return game


def test_nil_made_scores_plus_50() -> None:
    assert _score((NIL, _n(4)), (0, 4), 4).points == 50 + 40


def test_nil_failed_scores_minus_50() -> None:
    result = _score((NIL, _n(4)), (1, 4), 4)
    assert result.points == -50 + 40 + 1
    assert result.bags == 1


def test_blind_nil_made_scores_plus_100() -> None:
    assert _score((BLIND_NIL, _n(4)), (0, 4), 4).points == 100 + 40


def test_blind_nil_failed_scores_minus_100() -> None:
    assert _score((BLIND_NIL, _n(4)), (2, 2), 4).points == -100 + 40


def test_made_target_scores_ten_per_trick_and_bags_above() -> None:
    exact = _score((_n(3), _n(5)), (2, 3), 5)
    assert (exact.points, exact.bags, exact.tricks) == (50, 0, 5)
    over = _score((_n(3), _n(5)), (3, 3), 5)
    assert (over.points, over.bags, over.bags_after) == (51, 1, 1)


def test_set_target_loses_ten_per_trick_with_no_bags() -> None:
    result = _score((_n(3), _n(5)), (2, 2), 5, bags_before=4)
    assert (result.points, result.bags, result.bags_after) == (-50, 0, 4)


def test_target_0_makes_every_trick_a_bag() -> None:
    result = _score((_n(0), _n(0)), (2, 1), 0)
    assert (result.points, result.bags, result.bags_after) == (3, 3, 3)
    nothing = _score((_n(3), _n(0)), (0, 0), 0)
    assert (nothing.points, nothing.bags) == (0, 0)


def test_double_nil_makes_every_trick_a_bag() -> None:
    made = _score((NIL, NIL), (0, 0), None)
    assert (made.points, made.bags, made.target) == (100, 0, None)
    one_failed = _score((NIL, BLIND_NIL), (2, 0), None)
    assert (one_failed.points, one_failed.bags) == (-50 + 100 + 2, 2)
    both_failed = _score((NIL, NIL), (1, 1), None)
    assert (both_failed.points, both_failed.bags) == (-100 + 2, 2)


def test_nil_bidder_tricks_count_toward_partner_target() -> None:
    result = _score((NIL, _n(4)), (2, 2), 4)
    assert result.tricks == 4
    assert (result.points, result.bags) == (-50 + 40, 0)
    bagged = _score((_n(4), NIL), (2, 3), 4)
    assert (bagged.points, bagged.bags) == (-50 + 40 + 1, 1)


def test_every_bag_is_worth_one_point_and_counted() -> None:
    result = _score((_n(2), _n(4)), (3, 3), 4, score_before=100, bags_before=3)
    assert (result.points, result.bags, result.bags_after) == (42, 2, 5)
    assert result.score_after == 142


def test_bag_count_reaching_10_costs_100() -> None:
    result = _score((_n(2), _n(4)), (3, 4), 4, bags_before=7)
    assert (result.bags, result.bag_penalty, result.bags_after) == (3, 100, 0)
    assert result.points == 40 + 3 - 100
    over = _score((_n(2), _n(4)), (3, 4), 4, bags_before=8)
    assert (over.bag_penalty, over.bags_after, over.points) == (100, 1, 40 + 3 - 100)
    under = _score((_n(2), _n(4)), (3, 4), 4, bags_before=6)
    assert (under.bag_penalty, under.bags_after) == (0, 9)


def test_bags_crossing_10_twice_in_one_hand() -> None:
    result = _score((_n(0), _n(0)), (6, 7), 0, score_before=50, bags_before=9)
    assert (result.bags, result.bag_penalty, result.bags_after) == (13, 200, 2)
    assert result.points == 13 - 200
    assert result.score_after == 50 - 187


def test_bags_crossing_10_twice_in_a_played_hand() -> None:
    game = _suit_deal_hand(0, 0, 0, 0, bags=(9, 0))  # NORTH + SOUTH target 0, take 13
    north_south, east_west = game.history
    assert (north_south.target, north_south.tricks) == (0, 13)
    assert (north_south.bags, north_south.bag_penalty, north_south.bags_after) == (13, 200, 2)
    assert north_south.points == -187
    assert game.scores == [-187, 0]
    assert game.bags == [2, 0]
    assert (east_west.points, east_west.bags) == (0, 0)


def test_team_target_0_in_a_played_hand() -> None:
    game = _suit_deal_hand(0, 0, 0, 0)
    north_south, east_west = game.history
    assert (north_south.points, north_south.bags_after) == (13 - 100, 3)
    assert (east_west.target, east_west.points) == (0, 0)


def test_nil_in_a_played_hand() -> None:
    game = _suit_deal_hand(0, "NIL", 0, 13)  # SOUTH bids NIL and takes nothing
    assert game.history[0].points == 50 + 130
    failed = _suit_deal_hand(0, 13, 0, "NIL")  # NORTH bids NIL and takes all 13
    assert failed.history[0].points == -50 + 130


def test_nil_bidder_tricks_count_toward_partner_target_in_a_played_hand() -> None:
    game = _suit_deal_hand(0, 10, 0, "NIL")  # SOUTH took nothing; NORTH's 13 make the 10
    north_south = game.history[0]
    assert game.finished[0].state.tricks_won[Seat.SOUTH] == 0
    assert (north_south.target, north_south.tricks) == (10, 13)
    assert (north_south.points, north_south.bags) == (-50 + 100 + 3, 3)


def test_double_nil_in_a_played_hand() -> None:
    game = _suit_deal_hand("NIL", 2, "NIL", 11)
    assert game.history[1].target is None
    assert game.history[1].points == 100  # both EAST and WEST took nothing
    failed = _suit_deal_hand(0, "NIL", 0, "NIL")  # NORTH failed, SOUTH made it
    assert failed.history[0].target is None
    assert failed.history[0].points == 50 - 50 + 13 - 100


def test_made_and_set_in_a_played_hand() -> None:
    game = _suit_deal_hand(1, 2, 1, 12)
    north_south, east_west = game.history
    assert (north_south.points, north_south.bags) == (121, 1)
    assert (east_west.points, east_west.bags) == (-10, 0)
    assert game.scores == [121, -10]


def _blind_nil_hand(south_passes: str) -> Game:
    game = new_game(BLIND_NIL_DEAL, scores=(0, 100))
    bid(game, 2, "BLIND_NIL", 3, 5)
    game.apply(PassCards(Seat.SOUTH, cards(south_passes)))
    game.apply(PassCards(Seat.NORTH, cards("6D 5D")))
    play_out_hand(game)
    return game


def test_blind_nil_made_in_a_played_hand() -> None:
    game = _blind_nil_hand("AH AC")
    assert game.finished[0].state.tricks_won[Seat.SOUTH] == 0
    assert game.history[0].points == 100 + 50 + 8  # target 5 made with 13 tricks


def test_blind_nil_failed_in_a_played_hand() -> None:
    game = _blind_nil_hand("4D 3D")  # SOUTH keeps its aces and takes a trick with one
    won = game.finished[0].state.tricks_won
    assert won[Seat.SOUTH] >= 1
    team_tricks = won[Seat.NORTH] + won[Seat.SOUTH]
    assert game.history[0].tricks == team_tricks
    assert game.history[0].points == -100 + 50 + (team_tricks - 5)


def test_hand_is_scored_only_after_the_13th_trick() -> None:
    game = new_game(SUIT_DEAL)
    bid(game, 1, 2, 1, 12)
    for _ in range(12 * 4):
        seat = game.turn
        assert seat is not None
        game.apply(PlayCard(seat, first_legal(game, seat)))
    assert len(game.hand.tricks) == 12
    assert game.history == [] and game.scores == [0, 0] and game.phase is Phase.PLAYING
    events = play_out_hand(game)
    assert [e.kind for e in events][-3:] == [
        EventKind.TRICK_WON,
        EventKind.HAND_SCORED,
        EventKind.HAND_DEALT,
    ]
    assert game.scores == [121, -10]


def test_each_team_scores_every_hand_in_history() -> None:
    game = _suit_deal_hand(1, 2, 1, 12)
    assert [(r.hand_number, r.team, r.score_after) for r in game.history] == [
        (1, Team.NORTH_SOUTH, 121),
        (1, Team.EAST_WEST, -10),
    ]
