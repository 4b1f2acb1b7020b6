"""A finished game's career lines rebuilt from its move log (the migration's backfill, and
the game end when seats changed hands: only the moves tell who bid what)."""

from __future__ import annotations

from collections.abc import Sequence

from app.rules.career import CareerLine, career_lines, seating_from_moves
from app.rules.game import Game, Phase
from app.rules.movelog import LogEntry, entry_move
from app.rules.moves import Move


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
