"""Cards, suits and ranks, with the hand sort order of the rulebook."""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple


class Suit(IntEnum):
    """The four suits; the value is the suit's place in a sorted hand."""

    SPADES = 0
    HEARTS = 1
    CLUBS = 2
    DIAMONDS = 3

    @property
    def letter(self) -> str:
        """The suit's letter in the record format (`S`, `H`, `C`, `D`)."""
        return _SUIT_LETTERS[self]


class Rank(IntEnum):
    """Ranks from TWO (2) up to ACE (14); the value orders them."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def symbol(self) -> str:
        """The rank as written in the record format (`2`..`10`, `J`, `Q`, `K`, `A`)."""
        return _RANK_SYMBOLS[self]


_RANK_SYMBOLS = {r: (str(r.value) if r.value <= 10 else r.name[0]) for r in Rank}
_SUIT_LETTERS = "SHCD"  # by suit value: `Suit.X.name[0]`, without the slow enum `name`
# Every card's code by suit value then rank value - 2: indexing with the IntEnum values is
# much faster than hashing enum members (Enum.__hash__ is Python code).
_CODES = tuple(tuple(_RANK_SYMBOLS[r] + _SUIT_LETTERS[s] for r in Rank) for s in Suit)
_SYMBOL_RANKS = {s: r for r, s in _RANK_SYMBOLS.items()}
_LETTER_SUITS = {s.letter: s for s in Suit}


class Card(NamedTuple):
    """One playing card. A tuple, so equality and hashing stay cheap."""

    suit: Suit
    rank: Rank

    @property
    def code(self) -> str:
        """The record-format string of the card, e.g. `10H`, `AS`."""
        return _CODES[self[0]][self[1] - 2]

    @classmethod
    def parse(cls, code: str) -> Card:
        """Parse a record-format card string; raises ValueError on bad input."""
        card = _CODE_CARDS.get(code.strip().upper()) if isinstance(code, str) else None
        if card is None:
            raise ValueError(f"not a card: {code!r}")
        return card

    def __repr__(self) -> str:
        return self.code


def sort_key(card: Card) -> tuple[int, int]:
    """Key for the rulebook's hand order: suit order, then ACE down to 2."""
    return (card.suit, -card.rank)


def sort_hand(cards: list[Card] | tuple[Card, ...]) -> list[Card]:
    """The cards in the rulebook's display order."""
    return sorted(cards, key=sort_key)


FULL_DECK: tuple[Card, ...] = tuple(Card(s, r) for s in Suit for r in sorted(Rank, reverse=True))
_CODE_CARDS = {c.code: c for c in FULL_DECK}
