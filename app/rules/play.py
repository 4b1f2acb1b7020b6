"""Trick play: legal cards and trick winners."""

from __future__ import annotations

from collections.abc import Sequence

from app.rules.cards import Card, Suit
from app.rules.seats import Seat

_SPADES = Suit.SPADES  # a module global: `Suit.SPADES` is a slow lookup on Python 3.11


def legal_plays(
    hand: Sequence[Card],
    led: Suit | None,
    first_trick: bool,
    spades_broken: bool,
) -> list[Card]:
    """The cards of `hand` that may be played now, in hand order.

    `led` is the suit of the trick's first card, or None when leading.
    """
    if led is None:
        if first_trick or not spades_broken:
            non_spades = [c for c in hand if c.suit is not _SPADES]
            return non_spades or list(hand)
        return list(hand)
    following = [c for c in hand if c.suit == led]
    if following:
        return following
    if first_trick:
        non_spades = [c for c in hand if c.suit is not _SPADES]
        return non_spades or list(hand)
    return list(hand)


def trick_winner(plays: Sequence[tuple[Seat, Card]]) -> Seat:
    """The seat of the highest spade, or else of the highest card of the led suit."""
    led = plays[0][1].suit
    best_seat, best = plays[0]
    for seat, card in plays[1:]:
        if card.suit == best.suit:
            if card.rank > best.rank:
                best_seat, best = seat, card
        elif card.suit is _SPADES:
            best_seat, best = seat, card
    assert best.suit in (led, _SPADES)
    return best_seat
