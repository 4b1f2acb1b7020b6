"""Dealing: fresh decks, seeds, the dealer's rotation and the sorted hand."""

from __future__ import annotations

import secrets

import pytest

from app.rules.bots import PolicyName
from app.rules.cards import FULL_DECK, Card, sort_hand, sort_key
from app.rules.dealing import deal_hands, rematch_seed
from app.rules.game import Game
from app.rules.moves import EventKind
from app.rules.seats import SEATS, Seat
from app.rules.simulate import play_game
from app.rules.views import project
from tests.rules.rules_helpers import PLAYERS, cards, make_deal, new_game, suit


def _ints_in(value: object) -> set[int]:
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {value}
    if hasattr(value, "__slots__") and not isinstance(value, tuple):
        return set().union(*(_ints_in(getattr(value, f)) for f in value.__slots__))
    if isinstance(value, tuple | list):
        return set().union(*(_ints_in(v) for v in value))
    return set()


@pytest.mark.parametrize("seed", range(10))
def test_each_hand_is_a_full_52_card_deck_13_to_each_seat(seed: int) -> None:
    for number in (1, 2, 3):
        hands = deal_hands(seed, number)
        assert len(hands) == 4
        assert all(len(h) == 13 for h in hands)
        assert sorted(c for h in hands for c in h) == sorted(FULL_DECK)
    assert len(FULL_DECK) == 52 and len(set(FULL_DECK)) == 52


def test_each_hand_uses_a_fresh_deck() -> None:
    game, _ = play_game(11, PolicyName.BASIC)
    deals = [f.state.deal for f in game.finished]
    assert len(deals) >= 2
    for deal in deals:
        assert sorted(c for h in deal for c in h) == sorted(FULL_DECK)
    assert len(set(deals)) == len(deals)


def test_same_seed_gives_same_deals() -> None:
    first, _ = play_game(2024, PolicyName.RANDOM)
    second, _ = play_game(2024, PolicyName.RANDOM)
    assert [f.state.deal for f in first.finished] == [f.state.deal for f in second.finished]
    a, _ = Game.start(PLAYERS, seed=99)
    b, _ = Game.start(["w", "x", "y", "z"], seed=99)
    assert a.hand.deal == b.hand.deal
    assert deal_hands(99, 5) == deal_hands(99, 5)


def test_a_seed_deals_the_same_cards_in_every_version() -> None:
    # Stored seeded games and records replay from their seed: the shuffle must never
    # change. This is the first deal of seed 1, NORTH first, as the engine has always dealt it.
    expected = [
        "QS 10S 9S 6S 2S AH KH 8H 10C 8C 7C 3C QD",
        "AS 3S QH 10H 5H 2H 2C 8D 7D 6D 4D 3D 2D",
        "KS 8S 5S 4S JH 9H 7H 6H 3H JC 6C 5C KD",
        "JS 7S 4H AC KC QC 9C 4C AD JD 10D 9D 5D",
    ]
    assert [" ".join(c.code for c in hand) for hand in deal_hands(1, 1)] == expected


def test_different_seeds_give_different_deals() -> None:
    assert deal_hands(1, 1) != deal_hands(2, 1)


def test_a_rematch_seed_is_derived_from_the_old_one_and_deals_other_cards() -> None:
    seeds = [0, 1, 8, 2**31 - 1, 2**200]
    derived = [rematch_seed(seed) for seed in seeds]
    assert derived == [rematch_seed(seed) for seed in seeds]  # the same every time
    assert len(set(derived)) == len(seeds)
    # A GraphQL Int, so createTable(seed:) can deal the rematch's games again.
    assert all(0 <= seed < 2**31 for seed in derived)
    for seed, again in zip(seeds, derived, strict=True):
        assert again != seed and deal_hands(again, 1) != deal_hands(seed, 1)
    # A rematch of a rematch is fresh again.
    assert rematch_seed(rematch_seed(8)) not in (8, rematch_seed(8))


def test_deals_without_seed_differ() -> None:
    games = [Game.start(PLAYERS)[0] for _ in range(3)]
    assert len({g.hand.deal for g in games}) == 3
    assert len({g.seed for g in games}) == 3


def test_live_game_seed_comes_from_the_secure_source(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[int] = []

    def fake_randbits(k: int) -> int:
        drawn.append(k)
        return 123456789

    monkeypatch.setattr(secrets, "randbits", fake_randbits)
    game, _ = Game.start(PLAYERS)
    assert drawn and drawn[0] >= 128
    assert game.seed == 123456789
    assert game.seed_public is False
    assert game.hand.deal == deal_hands(123456789, 1)


def test_live_game_seed_is_never_in_a_view() -> None:
    game, _ = Game.start(PLAYERS)
    for viewer in (*SEATS, None):
        assert game.seed not in _ints_in(project(game, viewer))
    assert "seed" not in {f for f in type(project(game, None)).__slots__}


def test_north_deals_first_hand_and_deal_passes_clockwise() -> None:
    game, start = Game.start(PLAYERS, seed=5)
    assert start.kind is EventKind.GAME_STARTED and start.seat is Seat.NORTH
    assert game.hand.number == 1 and game.hand.dealer is Seat.NORTH
    played, _ = play_game(3, PolicyName.BASIC)
    dealers = [f.state.dealer for f in played.finished]
    assert len(dealers) >= 5
    assert dealers == [SEATS[i % 4] for i in range(len(dealers))]
    numbers = [f.state.number for f in played.finished]
    assert numbers == list(range(1, len(numbers) + 1))


def test_hand_sorted_spades_hearts_clubs_diamonds_ace_high() -> None:
    mixed = cards("2D AS 10H KC 3S AH 2C AD QS 2H")
    assert sort_hand(mixed) == list(cards("AS QS 3S AH 10H 2H KC 2C AD 2D"))
    assert sort_hand(list(FULL_DECK)) == list(cards(" ".join(suit(letter) for letter in "SHCD")))


@pytest.mark.parametrize("seed", range(5))
def test_dealt_hands_are_shown_sorted(seed: int) -> None:
    game, _ = Game.start(PLAYERS, seed=seed)
    for seat in SEATS:
        shown = project(game, seat).hand
        assert shown is not None
        assert list(shown) == sorted(shown, key=sort_key)


def test_hand_is_shown_sorted_even_from_an_unsorted_forced_deal() -> None:
    deal = make_deal(
        north="2S 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH",
        east="AS 2H KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S",
        south=" ".join(reversed(suit("C").split())),
        west=" ".join(reversed(suit("D").split())),
    )
    game = new_game(deal)
    for seat in SEATS:
        shown = project(game, seat).hand
        assert shown is not None
        assert list(shown) == sort_hand(deal[seat])
    assert project(game, Seat.NORTH).hand == (Card.parse("2S"), *cards(suit("H"))[:-1])
