"""Bids and the partnership bidding rules."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from app.rules.errors import ErrorCode, RuleError

MAX_TRICKS = 13


class BidKind(StrEnum):
    """A number of tricks, NIL, or BLIND_NIL."""

    TRICKS = "TRICKS"
    NIL = "NIL"
    BLIND_NIL = "BLIND_NIL"


@dataclass(frozen=True, slots=True)
class Bid:
    """One seat's bid. `tricks` is set iff `kind` is TRICKS."""

    kind: BidKind
    tricks: int | None = None

    @property
    def is_nil(self) -> bool:
        """NIL or BLIND_NIL (a numeric 0 is not nil)."""
        return self.kind is not BidKind.TRICKS

    @classmethod
    def number(cls, tricks: int) -> Bid:
        """A numeric bid, validated."""
        return checked_bid(BidKind.TRICKS, tricks)

    def to_record(self) -> int | str:
        """The record-format value: an integer or `NIL`/`BLIND_NIL`."""
        return self.tricks if self.tricks is not None else self.kind.value

    @classmethod
    def from_record(cls, value: object) -> Bid:
        """Parse a record-format bid; raises RuleError(INVALID_BID) when malformed."""
        if isinstance(value, bool):
            raise RuleError(ErrorCode.INVALID_BID, f"not a bid: {value!r}")
        if isinstance(value, int):
            return checked_bid(BidKind.TRICKS, value)
        if value in (BidKind.NIL.value, BidKind.BLIND_NIL.value):
            return cls(BidKind(value))
        raise RuleError(ErrorCode.INVALID_BID, f"not a bid: {value!r}")


NIL = Bid(BidKind.NIL)
BLIND_NIL = Bid(BidKind.BLIND_NIL)


def checked_bid(kind: BidKind, tricks: int | None) -> Bid:
    """Build a bid from client input, refusing malformed combinations with INVALID_BID."""
    if kind is BidKind.TRICKS:
        if tricks is None:
            raise RuleError(ErrorCode.INVALID_BID, "a TRICKS bid needs a number of tricks")
        if isinstance(tricks, bool) or not 0 <= tricks <= MAX_TRICKS:
            raise RuleError(ErrorCode.INVALID_BID, f"a bid must be 0..{MAX_TRICKS}, not {tricks}")
        return Bid(kind, tricks)
    if tricks is not None:
        raise RuleError(ErrorCode.INVALID_BID, f"a {kind.value} bid takes no number of tricks")
    return Bid(kind)


def team_target(first: Bid | None, second: Bid | None) -> int | None:
    """The team's target once both partners have bid; None for double nil or until then.

    The second bidder's number is the team total; if either partner bid nil the
    other partner's number is the target.
    """
    if first is None or second is None:
        return None
    if second.tricks is not None:
        return second.tricks
    return first.tricks
