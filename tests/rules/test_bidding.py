"""Bidding: order, bid values, partnership targets, public bids."""

from __future__ import annotations

import pytest

from app.rules.bidding import NIL, Bid, BidKind
from app.rules.errors import ErrorCode
from app.rules.game import Phase
from app.rules.moves import EventKind, PlaceBid
from app.rules.seats import SEATS, Seat, Team
from app.rules.views import project
from tests.rules.rules_helpers import (
    SUIT_DEAL,
    bid,
    bid_move,
    expect_refusal,
    new_game,
    play_out_hand,
)


def _target(game_team: Team, *bids: int | str) -> int | None:
    game = new_game(SUIT_DEAL)
    bid(game, *bids)
    return game.hand.target(game_team)


def test_bidding_starts_left_of_dealer() -> None:
    game = new_game(deals={1: SUIT_DEAL, 2: SUIT_DEAL})
    assert game.hand.dealer is Seat.NORTH
    assert game.phase is Phase.BIDDING and game.turn is Seat.EAST
    bid(game, 0, 0, 0, 13)
    play_out_hand(game)
    assert game.hand.dealer is Seat.EAST
    assert game.phase is Phase.BIDDING and game.turn is Seat.SOUTH


def test_bidding_goes_clockwise() -> None:
    game = new_game(SUIT_DEAL)
    order = []
    for _ in range(4):
        seat = game.turn
        assert seat is not None
        order.append(seat)
        game.apply(bid_move(seat, 1))
    assert order == [Seat.EAST, Seat.SOUTH, Seat.WEST, Seat.NORTH]
    assert game.hand.bid_order == order


def test_each_seat_bids_once_on_its_turn() -> None:
    game = new_game(SUIT_DEAL)
    for seat in (Seat.NORTH, Seat.SOUTH, Seat.WEST):
        expect_refusal(game, bid_move(seat, 3), ErrorCode.NOT_YOUR_TURN)
    bid(game, 3)
    expect_refusal(game, bid_move(Seat.EAST, 4), ErrorCode.NOT_YOUR_TURN)
    bid(game, 2, 5, 4)
    assert game.phase is Phase.PLAYING
    for seat in SEATS:
        expect_refusal(game, bid_move(seat, 1), ErrorCode.WRONG_PHASE)
    assert [game.hand.bids[s] for s in SEATS] == [
        Bid.number(4),
        Bid.number(3),
        Bid.number(2),
        Bid.number(5),
    ]


@pytest.mark.parametrize("tricks", range(14))
def test_a_number_bid_is_0_to_13(tricks: int) -> None:
    game = new_game(SUIT_DEAL)
    events = game.apply(bid_move(Seat.EAST, tricks))
    assert game.hand.bids[Seat.EAST] == Bid(BidKind.TRICKS, tricks)
    assert [e.kind for e in events] == [EventKind.BID_PLACED]


@pytest.mark.parametrize(
    "move",
    [
        PlaceBid(Seat.EAST, BidKind.TRICKS, 14),
        PlaceBid(Seat.EAST, BidKind.TRICKS, -1),
        PlaceBid(Seat.EAST, BidKind.TRICKS, None),
        PlaceBid(Seat.EAST, BidKind.NIL, 0),
        PlaceBid(Seat.EAST, BidKind.BLIND_NIL, 0),
    ],
    ids=["14", "-1", "tricks-missing", "nil-with-tricks", "blind-nil-with-tricks"],
)
def test_malformed_bid_is_invalid(move: PlaceBid) -> None:
    game = new_game(SUIT_DEAL)
    expect_refusal(game, move, ErrorCode.INVALID_BID)


def test_nil_is_a_bid() -> None:
    game = new_game(SUIT_DEAL)
    bid(game, "NIL")
    assert game.hand.bids[Seat.EAST] == NIL


def test_blind_nil_only_when_eligible() -> None:
    game = new_game(SUIT_DEAL)  # 0 to 0: nobody is 100 behind
    expect_refusal(game, PlaceBid(Seat.EAST, BidKind.BLIND_NIL), ErrorCode.NOT_ELIGIBLE)


def test_numeric_zero_is_not_nil() -> None:
    assert not Bid.number(0).is_nil
    assert NIL.is_nil
    game = new_game(SUIT_DEAL)
    bid(game, 0, 0, 0, 13)  # SOUTH bids 0 and NORTH, holding every spade, takes 13
    play_out_hand(game)
    north_south = game.history[0]
    # 13 made, no bag; SOUTH's 0 brings neither a nil bonus nor a nil penalty.
    assert north_south.points == 130
    game = new_game(SUIT_DEAL)
    bid(game, 0, "NIL", 0, 13)
    play_out_hand(game)
    assert game.history[0].points == 130 + 50  # the same hand with a real NIL


def test_first_bidder_of_a_team_bids_for_themself() -> None:
    game = new_game(SUIT_DEAL)
    bid(game, 4, 2)
    assert game.hand.bids[Seat.EAST] == Bid.number(4)
    assert game.hand.target(Team.EAST_WEST) is None  # no target until the partner bids


def test_second_bidder_sets_team_total() -> None:
    assert _target(Team.EAST_WEST, 3, 2, 5, 4) == 5
    assert _target(Team.NORTH_SOUTH, 3, 2, 5, 4) == 4
    game = new_game(SUIT_DEAL)
    bid(game, 3, 2, 5, 4)
    assert [(t.team, t.target) for t in project(game, None).teams] == [
        (Team.NORTH_SOUTH, 4),
        (Team.EAST_WEST, 5),
    ]


def test_second_bidder_sees_partners_bid() -> None:
    game = new_game(SUIT_DEAL)
    bid(game, 3, 2)
    view = project(game, Seat.WEST)
    assert view.turn is Seat.WEST
    assert view.seats[Seat.EAST].bid == Bid.number(3)


def test_total_below_partner_bid_is_legal() -> None:
    assert _target(Team.EAST_WEST, 5, 1, 3) == 3
    assert _target(Team.EAST_WEST, 13, 1, 0) == 0


def test_nil_partner_number_is_target() -> None:
    assert _target(Team.EAST_WEST, "NIL", 1, 4) == 4
    assert _target(Team.EAST_WEST, 4, 1, "NIL") == 4
    assert _target(Team.NORTH_SOUTH, 1, "NIL", 1, 6) == 6
    assert _target(Team.NORTH_SOUTH, 1, 6, 1, "NIL") == 6


def test_double_nil_has_no_target() -> None:
    assert _target(Team.EAST_WEST, "NIL", 1, "NIL", 1) is None
    game = new_game(SUIT_DEAL)
    bid(game, "NIL", 1, "NIL", 1)
    assert project(game, None).teams[Team.EAST_WEST].target is None
    assert project(game, None).teams[Team.NORTH_SOUTH].target == 1


def test_bids_are_public() -> None:
    game = new_game(SUIT_DEAL)
    events = bid(game, 3)
    assert events[0].seat is Seat.EAST and events[0].bid == Bid.number(3)
    for viewer in (*SEATS, None):
        assert project(game, viewer).seats[Seat.EAST].bid == Bid.number(3)
    bid(game, "NIL")
    for viewer in (*SEATS, None):
        view = project(game, viewer)
        assert [s.bid for s in view.seats] == [None, Bid.number(3), NIL, None]
