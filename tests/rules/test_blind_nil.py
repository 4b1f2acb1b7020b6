"""Blind nil: eligibility at the deal, withheld hands, reveals, one per team."""

from __future__ import annotations

import pytest

from app.rules.bidding import BLIND_NIL, NIL, Bid, BidKind
from app.rules.errors import ErrorCode
from app.rules.game import Game, Phase
from app.rules.moves import EventKind, PlaceBid, RevealHand
from app.rules.seats import SEATS, Seat, Team
from app.rules.views import project
from tests.rules.rules_helpers import (
    FIRST_TRICK_DEAL,
    SUIT_DEAL,
    bid,
    bid_move,
    cards_in,
    expect_refusal,
    new_game,
    play_out_hand,
)

NORTH_SOUTH_BEHIND = (0, 100)  # NORTH and SOUTH may bid blind nil; EAST bids first


def _behind() -> Game:
    return new_game(FIRST_TRICK_DEAL, scores=NORTH_SOUTH_BEHIND)


def _eligible_seats(game: Game) -> set[Seat]:
    return {s for s in SEATS if game.blind_nil_eligible(s)}


@pytest.mark.parametrize(
    ("scores", "eligible"),
    [
        ((0, 100), {Seat.NORTH, Seat.SOUTH}),
        ((100, 0), {Seat.EAST, Seat.WEST}),
        ((-200, -100), {Seat.NORTH, Seat.SOUTH}),
        ((-30, 170), {Seat.NORTH, Seat.SOUTH}),
        ((240, 10), {Seat.EAST, Seat.WEST}),
    ],
)
def test_blind_nil_eligible_at_100_or_more_behind(
    scores: tuple[int, int], eligible: set[Seat]
) -> None:
    game = new_game(FIRST_TRICK_DEAL, scores=scores)
    assert _eligible_seats(game) == eligible
    for seat in SEATS:
        assert project(game, seat).blind_nil_eligible is (seat in eligible)


@pytest.mark.parametrize("scores", [(0, 99), (99, 0), (-100, -1), (0, 0), (150, 60)])
def test_blind_nil_not_eligible_at_99_behind_or_less(scores: tuple[int, int]) -> None:
    game = new_game(FIRST_TRICK_DEAL, scores=scores)
    assert _eligible_seats(game) == set()
    first = game.turn
    assert first is Seat.EAST
    expect_refusal(game, PlaceBid(first, BidKind.BLIND_NIL), ErrorCode.NOT_ELIGIBLE)
    bid(game, 1)
    expect_refusal(game, PlaceBid(Seat.SOUTH, BidKind.BLIND_NIL), ErrorCode.NOT_ELIGIBLE)


@pytest.mark.parametrize(("before", "eligible"), [(-30, True), (-31, False)])
def test_blind_nil_eligibility_uses_the_scores_at_the_deal(before: int, eligible: bool) -> None:
    game = new_game(deals={1: SUIT_DEAL, 2: SUIT_DEAL})
    bid(game, 0, 0, 0, 13)  # NORTH + SOUTH will score +130, EAST + WEST 0
    game.scores = [before, 0]
    play_out_hand(game)
    assert game.scores == [before + 130, 0]
    assert game.hand.number == 2
    expected = {Seat.EAST, Seat.WEST} if eligible else set()
    assert _eligible_seats(game) == expected


def test_withheld_seat_is_not_sent_its_cards() -> None:
    game = _behind()
    for seat in (Seat.NORTH, Seat.SOUTH):
        view = project(game, seat)
        assert view.hand is None
        assert view.hand_withheld is True
        assert view.legal_plays == ()
        assert list(cards_in(view)) == []


def test_other_team_gets_its_cards_at_once_and_bids_normally() -> None:
    game = _behind()
    for seat in (Seat.EAST, Seat.WEST):
        view = project(game, seat)
        assert view.hand == FIRST_TRICK_DEAL[seat]
        assert view.hand_withheld is False
    bid(game, 3)
    assert game.hand.bids[Seat.EAST] == Bid.number(3)


def test_withheld_seat_cannot_bid_a_number() -> None:
    game = _behind()
    bid(game, 3)
    assert game.turn is Seat.SOUTH
    for move in (bid_move(Seat.SOUTH, 4), bid_move(Seat.SOUTH, 0), bid_move(Seat.SOUTH, "NIL")):
        expect_refusal(game, move, ErrorCode.INVALID_BID)


def test_reveal_allowed_before_own_turn() -> None:
    game = _behind()
    assert game.turn is Seat.EAST
    events = game.apply(RevealHand(Seat.NORTH))
    assert [(e.kind, e.seat, e.card) for e in events] == [
        (EventKind.HAND_REVEALED, Seat.NORTH, None)
    ]
    assert project(game, Seat.NORTH).hand == FIRST_TRICK_DEAL[Seat.NORTH]
    assert game.turn is Seat.EAST
    assert project(game, Seat.SOUTH).hand is None  # the partner is still withheld


def test_reveal_forfeits_blind_nil() -> None:
    game = _behind()
    bid(game, 3)
    game.apply(RevealHand(Seat.SOUTH))
    assert not game.blind_nil_eligible(Seat.SOUTH)
    expect_refusal(game, PlaceBid(Seat.SOUTH, BidKind.BLIND_NIL), ErrorCode.NOT_ELIGIBLE)
    bid(game, "NIL")  # anything but BLIND_NIL
    assert game.hand.bids[Seat.SOUTH] == NIL


def test_revealed_seat_may_bid_a_number() -> None:
    game = _behind()
    game.apply(RevealHand(Seat.SOUTH))
    bid(game, 3, 4)
    assert game.hand.bids[Seat.SOUTH] == Bid.number(4)


def test_blind_nil_bid_shows_the_bidder_its_cards() -> None:
    game = _behind()
    bid(game, 3)
    events = bid(game, "BLIND_NIL")
    assert events[0].bid == BLIND_NIL and events[0].card is None
    assert project(game, Seat.SOUTH).hand == FIRST_TRICK_DEAL[Seat.SOUTH]


def test_partner_gets_cards_when_the_other_bids_blind_nil() -> None:
    game = _behind()
    bid(game, 3, "BLIND_NIL")
    assert game.turn is Seat.WEST  # NORTH's turn has not come yet
    view = project(game, Seat.NORTH)
    assert view.hand == FIRST_TRICK_DEAL[Seat.NORTH]
    assert view.hand_withheld is False and view.blind_nil_eligible is False


def test_second_blind_nil_of_a_team_refused() -> None:
    game = _behind()
    bid(game, 3, "BLIND_NIL", 2)
    expect_refusal(game, PlaceBid(Seat.NORTH, BidKind.BLIND_NIL), ErrorCode.NOT_ELIGIBLE)
    expect_refusal(game, RevealHand(Seat.NORTH), ErrorCode.NOT_ELIGIBLE)
    bid(game, "NIL")  # a NIL next to the BLIND_NIL is allowed (double nil)
    assert game.phase is Phase.EXCHANGE


def test_blind_nil_by_the_second_bidder_of_the_team() -> None:
    game = _behind()
    game.apply(RevealHand(Seat.SOUTH))
    bid(game, 3, 4, 2, "BLIND_NIL")
    assert game.hand.bids[Seat.NORTH] == BLIND_NIL
    assert game.hand.target(Team.NORTH_SOUTH) == 4
    assert game.phase is Phase.EXCHANGE


def test_leading_team_cannot_bid_blind_nil() -> None:
    game = _behind()
    expect_refusal(game, PlaceBid(Seat.EAST, BidKind.BLIND_NIL), ErrorCode.NOT_ELIGIBLE)
    expect_refusal(game, RevealHand(Seat.EAST), ErrorCode.NOT_ELIGIBLE)


def test_reveal_after_bidding_refused() -> None:
    game = _behind()
    game.apply(RevealHand(Seat.SOUTH))
    bid(game, 3, 4)
    expect_refusal(game, RevealHand(Seat.SOUTH), ErrorCode.NOT_ELIGIBLE)
    expect_refusal(game, RevealHand(Seat.EAST), ErrorCode.NOT_ELIGIBLE)


def test_reveal_twice_refused() -> None:
    game = _behind()
    game.apply(RevealHand(Seat.NORTH))
    expect_refusal(game, RevealHand(Seat.NORTH), ErrorCode.NOT_ELIGIBLE)


def test_reveal_outside_bidding_is_wrong_phase() -> None:
    game = _behind()
    game.apply(RevealHand(Seat.SOUTH))
    game.apply(RevealHand(Seat.NORTH))
    bid(game, 3, 4, 2, 5)
    assert game.phase is Phase.PLAYING
    expect_refusal(game, RevealHand(Seat.NORTH), ErrorCode.WRONG_PHASE)
