"""Fair by construction: a bot's input is its seat's knowledge, nothing more."""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.rules.bots import BotLevel, ExpertBudget, SeatKnowledge, decide
from app.rules.cards import Suit
from app.rules.game import Game, Phase
from app.rules.seats import SEATS, Seat
from tests.rules.rules_helpers import FIRST_TRICK_DEAL, bid, cards, new_game, play
from tests.rules.test_properties import play_until

SEEDS = st.integers(min_value=0, max_value=2**63 - 1)
TINY = ExpertBudget(playouts=24, seconds=60.0, min_worlds=2)


def _reshuffle_others(game: Game, seat: Seat, rng: random.Random) -> Game:
    """The same game with the other seats' unplayed cards dealt among them anew (same
    counts), another deal record and another seed: what `seat` cannot know."""
    other = game.copy()
    hand = other.hand
    seats = [s for s in SEATS if s is not seat]
    pool = [c for s in seats for c in hand.hands[s]]
    rng.shuffle(pool)
    for s in seats:
        count = len(hand.hands[s])
        hand.hands[s] = sorted(pool[:count], key=lambda c: (c.suit, -c.rank))
        pool = pool[count:]
    deal = list(hand.deal)
    for s in seats:
        deal[s] = tuple(reversed(deal[s]))
    hand.deal = tuple(deal)
    other.seed = game.seed + 1
    return other


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.integers(min_value=0, max_value=400), st.sampled_from(SEATS))
@example(163, 162, Seat.NORTH)  # the first reshuffle deals the same 2+2+2 cards back
def test_games_differing_only_in_other_seats_unplayed_cards_give_equal_knowledge(
    seed: int, moves: int, seat: Seat
) -> None:
    game = play_until(seed, moves)
    rng = random.Random(seed)
    other = _reshuffle_others(game, seat, rng)
    # Few cards left can fall back into the same hands (2 each: 1 deal in 90): deal again.
    for _ in range(50):
        if other.hand.hands != game.hand.hands:
            break
        other = _reshuffle_others(game, seat, rng)
    assert other.hand.hands != game.hand.hands or len(game.hand.hands[seat.left]) <= 1
    mine = SeatKnowledge.of(game, seat)
    assert mine == SeatKnowledge.of(other, seat)
    if game.turn is seat:
        # So every level decides the same move in both games (same random draws).
        for level in BotLevel:
            a = decide(level, mine, random.Random(seed), TINY)
            b = decide(level, SeatKnowledge.of(other, seat), random.Random(seed), TINY)
            assert a == b, level


def test_knowledge_holds_own_cards_and_never_others() -> None:
    game = new_game(FIRST_TRICK_DEAL)
    k = SeatKnowledge.of(game, Seat.EAST)
    assert k.hand == tuple(game.hand.hands[Seat.EAST])
    assert k.turn is Seat.EAST and k.legal == ()  # bidding: no card to play yet
    assert set(k.unseen()) == {c for s in SEATS if s is not Seat.EAST for c in game.hand.hands[s]}


def test_knowledge_remembers_cards_played_and_voids_shown() -> None:
    game = new_game(FIRST_TRICK_DEAL)
    bid(game, 2, 1, 2, 11)
    play(game, "AH", "3C")  # SOUTH shows out of hearts
    k = SeatKnowledge.of(game, Seat.WEST)
    assert k.played == frozenset(cards("AH 3C"))
    assert k.voids[Seat.SOUTH] == frozenset({Suit.HEARTS})
    assert k.voids[Seat.EAST] == frozenset()
    assert k.legal == cards("3H 2H")
    assert k.counts == (13, 12, 12, 13)


def test_partner_of_blind_nil_knows_the_exchanged_cards() -> None:
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    bid(game, 2, "BLIND_NIL", 2, 3)
    from app.rules.moves import PassCards

    game.apply(PassCards(Seat.SOUTH, cards("AC KC")))
    game.apply(PassCards(Seat.NORTH, cards("2D 3D")))
    assert game.phase is Phase.PLAYING
    north = SeatKnowledge.of(game, Seat.NORTH)
    assert north.passed == cards("2D 3D") and north.received == cards("AC KC")
    assert north.partner_known == frozenset(cards("2D 3D"))
    assert not set(north.unseen()) & set(cards("2D 3D AC KC"))
    east = SeatKnowledge.of(game, Seat.EAST)
    assert east.passed == () and east.received == ()
