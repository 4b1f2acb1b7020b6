"""Deals from a seed: reproducible, and cryptographically strong when the seed is secret.

Every game has a seed. A game created with an explicit seed deals the same
cards each time (tests, replays, duplicate tournaments). A live game gets a
fresh 256-bit seed from `secrets`; because each hand is shuffled with a
SHA-256 counter-mode stream of that seed, the deals are as unpredictable as
the seed, and the server can still resume or audit the game exactly.
"""

from __future__ import annotations

import hashlib
import secrets
import struct

from app.rules.cards import FULL_DECK, Card, sort_hand

HAND_SIZE = 13
_BLOCK_WORDS = struct.Struct(">8I")  # a SHA-256 digest as eight 32-bit words


def new_secret_seed() -> int:
    """A fresh, unguessable seed for a live game."""
    return secrets.randbits(256)


# A derived seed stays a GraphQL Int, so `createTable(seed:)` can deal its games again.
_DERIVED_SEED_BITS = 31


def rematch_seed(seed: int) -> int:
    """The seed of a seeded game's rematch: derived from the old seed, so a rematch of
    the same seeded table deals the same (fresh) cards every time, and differs from the
    old game's deals instead of replaying them."""
    digest = hashlib.sha256(f"spades-rematch:{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (1 << _DERIVED_SEED_BITS)


class _HashStream:
    """Uniform integers from SHA-256(seed, hand, block counter)."""

    def __init__(self, seed: int, hand_number: int) -> None:
        self._prefix = f"spades-deal:{seed}:{hand_number}:".encode()
        self._counter = 0
        self._words: list[int] = []  # the current block's unread words, last word first

    def _word(self) -> int:
        """The stream's next 4 bytes as a big-endian unsigned integer."""
        if not self._words:
            block = hashlib.sha256(self._prefix + str(self._counter).encode()).digest()
            self._counter += 1
            self._words = list(_BLOCK_WORDS.unpack(block))
            self._words.reverse()
        return self._words.pop()

    def below(self, bound: int) -> int:
        """A uniform integer in [0, bound), by rejection sampling (no modulo bias)."""
        limit = (1 << 32) - ((1 << 32) % bound)
        while True:
            value = self._word()
            if value < limit:
                return value % bound


def shuffled_deck(seed: int, hand_number: int) -> list[Card]:
    """The 52 cards in the shuffled order of hand `hand_number` of the game with `seed`."""
    deck = list(FULL_DECK)
    stream = _HashStream(seed, hand_number)
    for i in range(len(deck) - 1, 0, -1):
        j = stream.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal_hands(seed: int, hand_number: int) -> tuple[tuple[Card, ...], ...]:
    """Four sorted hands of 13, indexed by seat value (NORTH first)."""
    deck = shuffled_deck(seed, hand_number)
    return tuple(tuple(sort_hand(deck[i::4])) for i in range(4))
