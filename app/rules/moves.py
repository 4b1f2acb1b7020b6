"""The moves a game accepts and the events they cause."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from app.rules.bidding import Bid, BidKind
from app.rules.cards import Card
from app.rules.seats import Seat, Team


@dataclass(frozen=True, slots=True)
class RevealHand:
    """A seat that could bid blind nil looks at its cards (forfeiting blind nil)."""

    seat: Seat


@dataclass(frozen=True, slots=True)
class PlaceBid:
    """A bid as the client sent it; its shape is checked in the rulebook's order."""

    seat: Seat
    kind: BidKind
    tricks: int | None = None

    @classmethod
    def of(cls, seat: Seat, bid: Bid) -> PlaceBid:
        """The move that places an already-built bid."""
        return cls(seat, bid.kind, bid.tricks)


@dataclass(frozen=True, slots=True)
class PassCards:
    """Two cards passed face down in the blind nil exchange."""

    seat: Seat
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class PlayCard:
    """One card played to the current trick."""

    seat: Seat
    card: Card


@dataclass(frozen=True, slots=True)
class ReplacePlayer:
    """A new occupant (usually a bot) takes a seat of a game in progress."""

    seat: Seat
    player_id: str


Move = RevealHand | PlaceBid | PassCards | PlayCard | ReplacePlayer


class EventKind(StrEnum):
    """What a change of the game was; the `event` names of the API."""

    GAME_STARTED = "GAME_STARTED"
    HAND_REVEALED = "HAND_REVEALED"
    BID_PLACED = "BID_PLACED"
    CARDS_PASSED = "CARDS_PASSED"
    CARD_PLAYED = "CARD_PLAYED"
    TRICK_WON = "TRICK_WON"
    HAND_SCORED = "HAND_SCORED"
    HAND_DEALT = "HAND_DEALT"
    PLAYER_REPLACED = "PLAYER_REPLACED"
    GAME_OVER = "GAME_OVER"


@dataclass(frozen=True, slots=True)
class Event:
    """One change of the game. Carries only public facts: never a hidden card."""

    kind: EventKind
    seat: Seat | None = None
    card: Card | None = None
    bid: Bid | None = None
    winner: Seat | Team | None = None
