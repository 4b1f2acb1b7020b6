"""Play: the lead, following suit, trumps, breaking spades, the first trick, winners."""

from __future__ import annotations

import pytest

from app.rules.bots import PolicyName
from app.rules.cards import Card
from app.rules.errors import ErrorCode
from app.rules.game import Game, Phase
from app.rules.moves import EventKind, PlayCard
from app.rules.play import trick_winner
from app.rules.seats import SEATS, Seat
from app.rules.simulate import play_game
from tests.rules.rules_helpers import (
    BREAKING_DEAL,
    FIRST_TRICK_DEAL,
    SUIT_DEAL,
    bid,
    cards,
    expect_refusal,
    make_deal,
    new_game,
    play,
    play_out_hand,
    suit,
)

# EAST (the first leader, NORTH dealing) holds all thirteen spades.
SPADE_LEADER_DEAL = make_deal(north=suit("D"), east=suit("S"), south=suit("H"), west=suit("C"))


def _playing(deal: tuple[tuple[Card, ...], ...]) -> Game:
    game = new_game(deal)
    bid(game, 1, 1, 1, 1)
    assert game.phase is Phase.PLAYING
    return game


def cards_of(text: str) -> list[tuple[Seat, Card]]:
    """Plays of NORTH, EAST, SOUTH and WEST in that order (NORTH leads)."""
    return list(zip(SEATS, cards(text), strict=True))


def _legal(game: Game, seat: Seat) -> list[Card]:
    return game.legal_plays(seat)


def test_seat_left_of_dealer_leads_first_trick() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    assert game.hand.dealer is Seat.NORTH and game.turn is Seat.EAST
    for seat in (Seat.NORTH, Seat.SOUTH, Seat.WEST):
        expect_refusal(game, PlayCard(seat, game.hand.hands[seat][-1]), ErrorCode.NOT_YOUR_TURN)


def test_play_goes_clockwise_within_a_trick() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    seats = []
    for code in ("AH", "3C", "2H", "2D"):
        seats.append(game.turn)
        play(game, code)
    assert seats == [Seat.EAST, Seat.SOUTH, Seat.WEST, Seat.NORTH]


def test_follow_suit_when_holding_the_led_suit() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    play(game, "AH", "3C")
    assert _legal(game, Seat.WEST) == list(cards("3H 2H"))
    expect_refusal(game, PlayCard(Seat.WEST, Card.parse("2C")), ErrorCode.ILLEGAL_PLAY)
    expect_refusal(game, PlayCard(Seat.WEST, Card.parse("AD")), ErrorCode.ILLEGAL_PLAY)
    play(game, "2H")


def test_follow_suit_when_spades_are_led() -> None:
    game = _playing(BREAKING_DEAL)
    play(game, "QH", "6H", "AD", "AH", "KH", "JH", "5H", "KD", "3S", "10H")
    assert game.turn is Seat.SOUTH
    assert _legal(game, Seat.SOUTH) == list(cards("AS 2S"))
    expect_refusal(game, PlayCard(Seat.SOUTH, Card.parse("2H")), ErrorCode.ILLEGAL_PLAY)


def test_first_trick_leader_may_not_lead_a_spade() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    assert _legal(game, Seat.EAST) == list(cards("AH KH QH JH 10H 9H 8H 7H 6H 5H 4H"))
    expect_refusal(game, PlayCard(Seat.EAST, Card.parse("AS")), ErrorCode.ILLEGAL_PLAY)


def test_first_trick_leader_with_all_spades_may_lead_a_spade() -> None:
    game = _playing(SPADE_LEADER_DEAL)
    assert _legal(game, Seat.EAST) == list(cards(suit("S")))
    play(game, "2S")
    play(game, "2H", "2C", "2D")  # the others hold no spade and play anything
    assert game.hand.tricks[0].winner is Seat.EAST
    assert game.hand.spades_broken is False  # a lead is not a cut
    assert _legal(game, Seat.EAST) == list(cards(suit("S"))[:-1])


def test_first_trick_no_cut_while_holding_a_non_spade() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    play(game, "AH")
    assert _legal(game, Seat.SOUTH) == list(cards("AC KC QC JC 10C 9C 8C 7C 6C 5C 4C 3C"))
    expect_refusal(game, PlayCard(Seat.SOUTH, Card.parse("QS")), ErrorCode.ILLEGAL_PLAY)
    play(game, "3C", "2H")
    assert _legal(game, Seat.NORTH) == list(cards("4D 3D 2D"))
    expect_refusal(game, PlayCard(Seat.NORTH, Card.parse("2S")), ErrorCode.ILLEGAL_PLAY)


def test_first_trick_cut_allowed_with_an_all_spade_hand() -> None:
    game = _playing(SUIT_DEAL)
    play(game, "AH", "2C", "2D")
    assert _legal(game, Seat.NORTH) == list(cards(suit("S")))
    play(game, "2S")
    assert game.hand.tricks[0].winner is Seat.NORTH
    assert game.hand.spades_broken is True  # NORTH could not follow hearts


def test_cut_allowed_after_the_first_trick() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    play(game, "AH", "3C", "2H", "2D", "KH")
    assert Card.parse("QS") in _legal(game, Seat.SOUTH)
    assert len(_legal(game, Seat.SOUTH)) == 12  # anything goes without the led suit


def test_spades_are_trump() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    play(game, "AH", "3C", "2H", "2D", "KH", "QS", "3H", "3D")
    assert game.hand.tricks[1].winner is Seat.SOUTH  # the QUEEN of spades beats the KING led


def test_highest_spade_wins() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    play(game, "AH", "3C", "2H", "2D", "KH", "QS", "3H", "3D")
    play(game, "AC", "2C", "JS", "AS")  # NORTH cuts, EAST over-cuts
    assert game.hand.tricks[2].winner is Seat.EAST


def test_highest_card_of_the_led_suit_wins_without_spades() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    play(game, "4H", "AC", "3H", "4D")  # a low heart led; the ACE of clubs is off-suit
    assert game.hand.tricks[0].winner is Seat.EAST


def test_other_suits_never_win() -> None:
    assert trick_winner(cards_of("2H AC 3H AD")) is Seat.SOUTH
    assert trick_winner(cards_of("2H AC AD KD")) is Seat.NORTH
    assert trick_winner(cards_of("2H 2S AD AS")) is Seat.WEST
    assert trick_winner(cards_of("2H 2S AD 3H")) is Seat.EAST
    assert trick_winner(cards_of("KC AH 2S AD")) is Seat.SOUTH


def test_winner_leads_the_next_trick() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    events = play(game, "AH", "3C", "2H", "2D")
    assert events[-1].kind is EventKind.TRICK_WON and events[-1].seat is Seat.EAST
    assert game.turn is Seat.EAST
    play(game, "KH", "QS", "3H", "3D")
    assert game.turn is Seat.SOUTH


def test_spades_broken_only_by_a_cut() -> None:
    game = _playing(BREAKING_DEAL)
    play(game, "QH", "6H", "AD", "AH")  # NORTH wins trick 1
    assert _legal(game, Seat.NORTH) == list(cards("KH"))  # spades not broken yet
    play(game, "KH", "JH", "5H", "KD")
    # NORTH now holds only spades and may lead one: that does not break spades.
    assert _legal(game, Seat.NORTH) == list(cards("KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S"))
    play(game, "3S", "10H", "AS", "QD")
    assert game.hand.tricks[-1].winner is Seat.SOUTH
    assert game.hand.spades_broken is False
    # SOUTH still holds 2S but may not lead it: spades are not broken.
    assert Card.parse("2S") not in _legal(game, Seat.SOUTH)
    expect_refusal(game, PlayCard(Seat.SOUTH, Card.parse("2S")), ErrorCode.ILLEGAL_PLAY)
    play(game, "7C", "JD", "KS")  # NORTH cannot follow clubs and cuts: spades broken
    assert game.hand.spades_broken is True
    play(game, "8C")
    assert game.turn is Seat.NORTH


def test_spade_lead_allowed_once_spades_are_broken() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    play(game, "AH", "3C", "2H", "2D")
    expect_refusal(game, PlayCard(Seat.EAST, Card.parse("AS")), ErrorCode.ILLEGAL_PLAY)
    play(game, "KH", "QS", "3H", "3D")  # SOUTH cuts the heart: spades broken
    assert game.hand.spades_broken is True
    play(game, "AC", "2C", "JS", "AS")
    assert game.turn is Seat.EAST
    assert Card.parse("KS") in _legal(game, Seat.EAST)
    play(game, "KS")


def test_spades_broken_is_reset_each_hand() -> None:
    game = new_game(deals={1: SUIT_DEAL, 2: FIRST_TRICK_DEAL})
    bid(game, 1, 1, 1, 1)
    play_out_hand(game)
    assert game.finished[0].state.spades_broken is True
    assert game.hand.number == 2 and game.hand.spades_broken is False


def test_13_tricks_per_hand() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    events = play_out_hand(game)
    state = game.finished[0].state
    assert len(state.tricks) == 13
    assert sum(state.tricks_won) == 13
    assert sorted(c for t in state.tricks for _, c in t.plays) == sorted(
        c for h in FIRST_TRICK_DEAL for c in h
    )
    assert [e.kind for e in events].count(EventKind.TRICK_WON) == 13
    assert [e.kind for e in events].count(EventKind.HAND_SCORED) == 1


@pytest.mark.parametrize("seed", range(8))
def test_each_trick_led_by_the_previous_winner(seed: int) -> None:
    game, _ = play_game(seed, PolicyName.RANDOM)
    for finished in game.finished:
        state = finished.state
        assert len(state.tricks) == 13
        leader = state.dealer.left
        for trick in state.tricks:
            assert trick.leader is leader
            assert [s for s, _ in trick.plays] == [SEATS[(leader + i) % 4] for i in range(4)]
            assert trick.winner is trick_winner(trick.plays)
            leader = trick.winner


def test_card_not_in_hand_refused() -> None:
    game = _playing(FIRST_TRICK_DEAL)
    expect_refusal(game, PlayCard(Seat.EAST, Card.parse("AC")), ErrorCode.CARD_NOT_IN_HAND)
    play(game, "AH")
    expect_refusal(game, PlayCard(Seat.SOUTH, Card.parse("AH")), ErrorCode.CARD_NOT_IN_HAND)
