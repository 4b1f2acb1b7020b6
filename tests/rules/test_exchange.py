"""The blind nil card exchange."""

from __future__ import annotations

from app.rules.cards import Card, sort_hand
from app.rules.errors import ErrorCode
from app.rules.game import Game, Phase
from app.rules.moves import EventKind, PassCards, PlayCard, RevealHand
from app.rules.seats import Seat
from app.rules.views import project
from tests.rules.rules_helpers import (
    FIRST_TRICK_DEAL,
    assert_views_hide_other_cards,
    bid,
    cards,
    cards_in,
    expect_refusal,
    new_game,
    played_cards,
)

SOUTH_PASSES = cards("AC KC")  # SOUTH bids blind nil and passes to NORTH
NORTH_PASSES = cards("2D 3D")  # NORTH passes back


def _at_exchange() -> Game:
    """SOUTH bid BLIND_NIL (NORTH + SOUTH were 100 behind at the deal); all four bids in."""
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    bid(game, 3, "BLIND_NIL", 2, 5)
    return game


def test_exchange_comes_after_all_four_bids_and_before_the_lead() -> None:
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    bid(game, 3, "BLIND_NIL", 2)
    assert game.phase is Phase.BIDDING
    bid(game, 5)
    assert game.phase is Phase.EXCHANGE
    lead = PlayCard(Seat.EAST, Card.parse("AH"))
    expect_refusal(game, lead, ErrorCode.WRONG_PHASE)
    game.apply(PassCards(Seat.SOUTH, SOUTH_PASSES))
    expect_refusal(game, lead, ErrorCode.WRONG_PHASE)
    game.apply(PassCards(Seat.NORTH, NORTH_PASSES))
    assert game.phase is Phase.PLAYING
    assert game.turn is Seat.EAST  # the seat to the dealer's left leads
    game.apply(lead)


def test_no_exchange_without_a_blind_nil() -> None:
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    bid(game, 3)
    game.apply(RevealHand(Seat.SOUTH))
    bid(game, "NIL", 2)
    game.apply(RevealHand(Seat.NORTH))
    bid(game, 5)
    assert game.phase is Phase.PLAYING
    expect_refusal(game, PassCards(Seat.SOUTH, SOUTH_PASSES), ErrorCode.WRONG_PHASE)


def test_blind_nil_bidder_passes_first_then_partner() -> None:
    game = _at_exchange()
    assert game.turn is Seat.SOUTH
    for seat in (Seat.NORTH, Seat.EAST, Seat.WEST):
        expect_refusal(game, PassCards(seat, NORTH_PASSES), ErrorCode.NOT_YOUR_TURN)
    events = game.apply(PassCards(Seat.SOUTH, SOUTH_PASSES))
    assert [(e.kind, e.seat, e.card) for e in events] == [
        (EventKind.CARDS_PASSED, Seat.SOUTH, None)
    ]
    assert game.turn is Seat.NORTH
    expect_refusal(game, PassCards(Seat.SOUTH, cards("QC JC")), ErrorCode.NOT_YOUR_TURN)
    events = game.apply(PassCards(Seat.NORTH, NORTH_PASSES))
    assert [(e.kind, e.seat, e.card) for e in events] == [
        (EventKind.CARDS_PASSED, Seat.NORTH, None)
    ]


def test_partner_passes_from_cards_held_before_receiving() -> None:
    game = _at_exchange()
    game.apply(PassCards(Seat.SOUTH, SOUTH_PASSES))
    # NORTH does not hold the passed cards yet and cannot pass them on.
    assert project(game, Seat.NORTH).hand == FIRST_TRICK_DEAL[Seat.NORTH]
    expect_refusal(game, PassCards(Seat.NORTH, cards("AC 2D")), ErrorCode.CARD_NOT_IN_HAND)
    expect_refusal(game, PassCards(Seat.NORTH, SOUTH_PASSES), ErrorCode.CARD_NOT_IN_HAND)


def test_received_cards_join_the_hand_after_the_partner_passes() -> None:
    game = _at_exchange()
    game.apply(PassCards(Seat.SOUTH, SOUTH_PASSES))
    assert len(game.hand.hands[Seat.SOUTH]) == 11
    assert len(game.hand.hands[Seat.NORTH]) == 13
    game.apply(PassCards(Seat.NORTH, NORTH_PASSES))
    south = [c for c in FIRST_TRICK_DEAL[Seat.SOUTH] if c not in SOUTH_PASSES]
    north = [c for c in FIRST_TRICK_DEAL[Seat.NORTH] if c not in NORTH_PASSES]
    assert game.hand.hands[Seat.SOUTH] == sort_hand(south + list(NORTH_PASSES))
    assert game.hand.hands[Seat.NORTH] == sort_hand(north + list(SOUTH_PASSES))
    assert project(game, Seat.SOUTH).hand == tuple(sort_hand(south + list(NORTH_PASSES)))
    assert project(game, Seat.NORTH).hand == tuple(sort_hand(north + list(SOUTH_PASSES)))


def test_exchange_with_the_same_card_twice_refused() -> None:
    game = _at_exchange()
    twice = PassCards(Seat.SOUTH, cards("AC AC"))
    expect_refusal(game, twice, ErrorCode.BAD_USER_INPUT)


def test_exchange_passes_exactly_two_cards() -> None:
    game = _at_exchange()
    for passed in ("", "AC", "AC KC QC"):
        expect_refusal(game, PassCards(Seat.SOUTH, cards(passed)), ErrorCode.BAD_USER_INPUT)


def test_exchange_passes_cards_of_the_passers_hand() -> None:
    game = _at_exchange()
    expect_refusal(game, PassCards(Seat.SOUTH, cards("AC AH")), ErrorCode.CARD_NOT_IN_HAND)
    game.apply(PassCards(Seat.SOUTH, SOUTH_PASSES))
    expect_refusal(game, PassCards(Seat.NORTH, cards("2D 3C")), ErrorCode.CARD_NOT_IN_HAND)


def test_only_the_two_partners_see_the_exchanged_cards() -> None:
    game = _at_exchange()
    passed = set(SOUTH_PASSES) | set(NORTH_PASSES)
    events = game.apply(PassCards(Seat.SOUTH, SOUTH_PASSES))
    events += game.apply(PassCards(Seat.NORTH, NORTH_PASSES))
    while game.phase is Phase.PLAYING:
        hidden = passed - played_cards(game)
        for viewer in (Seat.EAST, Seat.WEST, None):
            assert not hidden & set(cards_in(project(game, viewer))), viewer
        assert_views_hide_other_cards(game)
        assert not hidden & {e.card for e in events}
        seat = game.turn
        assert seat is not None
        events = game.apply(PlayCard(seat, game.legal_plays(seat)[-1]))


def test_views_during_the_exchange_hide_the_passed_cards() -> None:
    game = _at_exchange()
    game.apply(PassCards(Seat.SOUTH, SOUTH_PASSES))
    for viewer in (Seat.NORTH, Seat.EAST, Seat.WEST, None):
        assert not set(SOUTH_PASSES) & set(cards_in(project(game, viewer)))
    assert_views_hide_other_cards(game)


def test_exchange_also_happens_beside_a_nil() -> None:
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    bid(game, 3, "BLIND_NIL", 2, "NIL")
    assert game.phase is Phase.EXCHANGE and game.turn is Seat.SOUTH
    game.apply(PassCards(Seat.SOUTH, SOUTH_PASSES))
    game.apply(PassCards(Seat.NORTH, NORTH_PASSES))
    assert game.phase is Phase.PLAYING
