"""Move-log entries as JSON, and the engine moves they stand for."""

from __future__ import annotations

from typing import Any

from app.rules.bidding import Bid
from app.rules.cards import Card
from app.rules.moves import Move, PassCards, PlaceBid, PlayCard, ReplacePlayer, RevealHand
from app.rules.seats import Seat

LogEntry = dict[str, Any]

# Log entries that change the table, not the game (seats, options, host, rematch, a
# timeout, an away player giving up their claim, the closing).
REMATCH_ENTRIES = frozenset({"rematch", "rematch_started"})
TABLE_ENTRIES = frozenset(
    {"sit", "leave", "start", "options", "host", "timeout", "release", "close", *REMATCH_ENTRIES}
)


def move_entry(move: Move) -> LogEntry:
    """The log entry of an engine move."""
    if isinstance(move, PlayCard):
        return {"type": "play", "seat": move.seat._name_, "card": move.card.code}
    if isinstance(move, PlaceBid):
        bid = Bid(move.kind, move.tricks)
        return {"type": "bid", "seat": move.seat.name, "bid": bid.to_record()}
    if isinstance(move, RevealHand):
        return {"type": "reveal", "seat": move.seat.name}
    if isinstance(move, PassCards):
        return {"type": "pass", "seat": move.seat.name, "cards": [c.code for c in move.cards]}
    return {"type": "replace", "seat": move.seat.name, "player": move.player_id}


def entry_move(entry: LogEntry) -> Move | None:
    """The engine move of a log entry; None for table entries (sit, leave, start)."""
    kind = entry["type"]
    if kind in TABLE_ENTRIES:
        return None
    seat = Seat[entry["seat"]]
    if kind == "play":
        return PlayCard(seat, Card.parse(entry["card"]))
    if kind == "bid":
        return PlaceBid.of(seat, Bid.from_record(entry["bid"]))
    if kind == "reveal":
        return RevealHand(seat)
    if kind == "pass":
        return PassCards(seat, tuple(Card.parse(c) for c in entry["cards"]))
    if kind in ("replace", "reclaim"):
        return ReplacePlayer(seat, entry["player"])
    raise ValueError(f"unknown log entry {kind!r}")
