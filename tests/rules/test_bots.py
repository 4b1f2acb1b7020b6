"""Bots: taking over a seat, the basic bid, the exchange and random legal play."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from app.rules.bidding import BidKind
from app.rules.bots import PolicyName, basic_move, exchange_cards
from app.rules.cards import Card
from app.rules.errors import ErrorCode
from app.rules.game import Game, Phase
from app.rules.moves import EventKind, PassCards, PlaceBid, PlayCard, ReplacePlayer, RevealHand
from app.rules.seats import SEATS, Seat
from app.rules.simulate import play_game
from app.rules.views import project
from tests.rules.rules_helpers import (
    BREAKING_DEAL,
    FIRST_TRICK_DEAL,
    SUIT_DEAL,
    bid,
    cards,
    expect_refusal,
    new_game,
    play,
)

RNG = random.Random(0)


def _bot_bid(game: Game, seat: Seat) -> PlaceBid:
    move = basic_move(game, seat, RNG)
    assert isinstance(move, PlaceBid)
    return move


def test_bot_ids_name_the_seat() -> None:
    assert [s.bot_id for s in SEATS] == ["bot:north", "bot:east", "bot:south", "bot:west"]


def test_bot_takes_the_seat_of_a_leaving_human_and_the_game_goes_on() -> None:
    game = new_game(FIRST_TRICK_DEAL)
    bid(game, 2, 1, 2, 11)
    play(game, "AH")
    hands = [list(h) for h in game.hand.hands]
    events = game.apply(ReplacePlayer(Seat.SOUTH, Seat.SOUTH.bot_id))
    assert [(e.kind, e.seat) for e in events] == [(EventKind.PLAYER_REPLACED, Seat.SOUTH)]
    assert game.players[Seat.SOUTH] == "bot:south"
    assert project(game, None).seats[Seat.SOUTH].is_bot
    assert game.phase is Phase.PLAYING and game.turn is Seat.SOUTH
    assert game.hand.hands == hands
    game.apply(basic_move(game, Seat.SOUTH, RNG))
    assert game.turn is Seat.WEST


def test_replacement_needs_a_player_id() -> None:
    game = new_game(FIRST_TRICK_DEAL)
    expect_refusal(game, ReplacePlayer(Seat.SOUTH, ""), ErrorCode.BAD_USER_INPUT)


def test_bot_bid_is_its_spade_count() -> None:
    game = new_game(FIRST_TRICK_DEAL)  # EAST holds AS KS
    assert _bot_bid(game, Seat.EAST) == PlaceBid(Seat.EAST, BidKind.TRICKS, 2)
    game = new_game(BREAKING_DEAL)  # EAST holds no spade: an ordinary 0, not NIL
    assert _bot_bid(game, Seat.EAST) == PlaceBid(Seat.EAST, BidKind.TRICKS, 0)


def test_bot_as_second_bidder_bids_partner_number_plus_own_spades() -> None:
    game = new_game(FIRST_TRICK_DEAL)
    for expected in (2, 1, 2 + 0, 1 + 10):  # EAST 2 spades, SOUTH 1, WEST 0, NORTH 10
        seat = game.turn
        assert seat is not None
        move = _bot_bid(game, seat)
        assert move.tricks == expected, seat
        game.apply(move)


def test_bot_team_total_capped_at_13() -> None:
    game = new_game(FIRST_TRICK_DEAL)
    bid(game, 2, 5, 2)
    assert _bot_bid(game, Seat.NORTH) == PlaceBid(Seat.NORTH, BidKind.TRICKS, 13)


def test_bot_adds_to_a_partner_bid_of_zero() -> None:
    game = new_game(FIRST_TRICK_DEAL)
    bid(game, 2, 0, 2)
    assert _bot_bid(game, Seat.NORTH).tricks == 10


@pytest.mark.parametrize("partner_bid", ["NIL", "BLIND_NIL"])
def test_bot_partner_nil_bids_own_spade_count(partner_bid: str) -> None:
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    if partner_bid == "NIL":
        game.apply(RevealHand(Seat.SOUTH))
    bid(game, 2, partner_bid, 2)
    if game.blind_nil_eligible(Seat.NORTH):  # beside a NIL, the bot first reveals its cards
        assert basic_move(game, Seat.NORTH, RNG) == RevealHand(Seat.NORTH)
        game.apply(RevealHand(Seat.NORTH))
    assert _bot_bid(game, Seat.NORTH) == PlaceBid(Seat.NORTH, BidKind.TRICKS, 10)


def test_bot_never_bids_blind_nil_it_reveals_instead() -> None:
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    bid(game, 2)
    assert basic_move(game, Seat.SOUTH, RNG) == RevealHand(Seat.SOUTH)
    assert basic_move(game, Seat.NORTH, RNG) == RevealHand(Seat.NORTH)
    game.apply(RevealHand(Seat.SOUTH))
    assert _bot_bid(game, Seat.SOUTH) == PlaceBid(Seat.SOUTH, BidKind.TRICKS, 1)


@pytest.mark.parametrize("seed", range(10))
def test_bot_never_bids_nil_or_blind_nil(seed: int) -> None:
    game, _ = play_game(seed, PolicyName.BASIC)
    assert game.phase is Phase.GAME_OVER
    for finished in game.finished:
        assert all(b is not None and b.kind is BidKind.TRICKS for b in finished.state.bids)


def _at_exchange(deal: tuple[tuple[Card, ...], ...]) -> Game:
    game = new_game(deal, scores=(0, 100))
    bid(game, 2, "BLIND_NIL", 2, 3)  # SOUTH bids blind nil
    assert game.phase is Phase.EXCHANGE
    return game


def test_bot_partner_of_blind_nil_passes_two_lowest_non_spades_first() -> None:
    game = _at_exchange(FIRST_TRICK_DEAL)  # NORTH: JS..2S and 4D 3D 2D
    game.apply(PassCards(Seat.SOUTH, cards("AC KC")))
    move = basic_move(game, Seat.NORTH, RNG)
    assert isinstance(move, PassCards) and set(move.cards) == set(cards("2D 3D"))
    game.apply(move)
    assert game.phase is Phase.PLAYING


def test_bot_partner_of_blind_nil_passes_spades_only_without_non_spades() -> None:
    game = _at_exchange(SUIT_DEAL)  # NORTH holds every spade
    game.apply(PassCards(Seat.SOUTH, cards("AC KC")))
    assert set(exchange_cards(game, Seat.NORTH)) == set(cards("2S 3S"))
    game.hand.hands[Seat.NORTH] = list(cards("AS KS QS 4S 3S 2S AH"))
    assert set(exchange_cards(game, Seat.NORTH)) == set(cards("AH 2S"))


def test_bot_in_the_blind_nil_seat_passes_two_highest_spades_first() -> None:
    game = _at_exchange(FIRST_TRICK_DEAL)  # SOUTH: QS and AC..3C
    game.apply(ReplacePlayer(Seat.SOUTH, Seat.SOUTH.bot_id))
    move = basic_move(game, Seat.SOUTH, RNG)
    assert isinstance(move, PassCards) and set(move.cards) == set(cards("QS AC"))
    game.apply(move)
    assert game.turn is Seat.NORTH
    game.hand.hands[Seat.SOUTH] = list(cards("3S 2S AH AC"))
    assert set(exchange_cards(game, Seat.SOUTH)) == set(cards("3S 2S"))
    game.hand.hands[Seat.SOUTH] = list(cards("AH KC 2D"))
    assert set(exchange_cards(game, Seat.SOUTH)) == set(cards("AH KC"))


def test_bot_plays_only_legal_cards() -> None:
    for seed in range(5):
        rng = random.Random(seed)
        game, _ = Game.start([s.bot_id for s in SEATS], seed=seed)
        while game.phase is not Phase.GAME_OVER:
            seat = game.turn
            assert seat is not None
            move = basic_move(game, seat, rng)
            if isinstance(move, PlayCard):
                assert move.card in game.legal_plays(seat)
            game.apply(move)


def test_bot_play_is_uniform_among_legal_plays() -> None:
    game = new_game(FIRST_TRICK_DEAL)
    bid(game, 2, 1, 2, 11)
    play(game, "AH", "3C")
    legal = game.legal_plays(Seat.WEST)
    assert legal == list(cards("3H 2H"))
    rng = random.Random(42)
    counts = Counter(basic_move(game, Seat.WEST, rng) for _ in range(2000))
    assert set(counts) == {PlayCard(Seat.WEST, c) for c in legal}
    assert all(800 < n < 1200 for n in counts.values())
    play(game, "2H")
    counts = Counter(basic_move(game, Seat.NORTH, rng) for _ in range(3000))
    assert set(counts) == {PlayCard(Seat.NORTH, c) for c in cards("4D 3D 2D")}
    assert all(850 < n < 1150 for n in counts.values())
