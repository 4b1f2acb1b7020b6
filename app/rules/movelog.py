"""The move log of a table: its entries as JSON, the engine moves they stand for, and a
finished game replayed from them (careers are rebuilt from it: only the moves tell who
bid what once seats changed hands)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.rules.bidding import Bid
from app.rules.cards import Card
from app.rules.career import CareerLine, career_lines, seating_from_moves
from app.rules.game import Game, Phase
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


def moves_of_log(entries: Sequence[LogEntry]) -> tuple[list[str], int, bool, list[Move]] | None:
    """(start players, seed, seed public, engine moves) of a game's log; None before the
    game started."""
    start = next((i for i, e in enumerate(entries) if e["type"] == "start"), None)
    if start is None:
        return None
    entry = entries[start]
    moves = [m for e in entries[start + 1 :] if (m := entry_move(e)) is not None]
    return list(entry["players"]), int(entry["seed"]), bool(entry["public"]), moves


def lines_from_moves(
    start_players: Sequence[str], moves: Sequence[Move], game: Game
) -> list[CareerLine]:
    """The career lines of the finished `game`, its seating taken from its moves."""
    return career_lines(game, seating_from_moves(start_players, moves))


def replay_log(entries: Sequence[LogEntry]) -> tuple[Game, list[CareerLine]] | None:
    """Replay a game's log through the engine: the game and its career lines, or None when
    the log does not hold a finished game."""
    parsed = moves_of_log(entries)
    if parsed is None:
        return None
    players, seed, public, moves = parsed
    game, _ = Game.start(players, seed=seed)
    game.seed_public = public
    for move in moves:
        game.apply(move)
    if game.phase is not Phase.GAME_OVER:
        return None
    return game, lines_from_moves(players, moves, game)
