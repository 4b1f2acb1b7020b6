"""A game's end, for the careers: statistics for everyone who sat, ratings for a rated
game, a summary per player. `game_ends` makes the hook (`Ledger.on_finish`) that
describes it (`GameEnd`); the store writes it in the transaction of the change that
ended the game, so it applies exactly when that change commits: once, whichever process
made the last move, and never without it (a crash loses both)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from app.rules.career import CareerLine, career_lines, seats_changed
from app.rules.rating import Skill, rate_match
from app.store.career import GameEnd

from ..change import Change
from ..codec import LogEntry
from ..model import TableSnapshot, now_ts
from .replay import lines_from_moves, moves_of_log

# A table's move log: (seq, changes, entry) rows in order (`Ledger.moves`).
MoveLog = Callable[[str], Awaitable[list[tuple[int, int, LogEntry]]]]
FinishHook = Callable[[TableSnapshot, Change], Awaitable[GameEnd | None]]


def game_ends(move_log: MoveLog) -> FinishHook:
    """The hook that describes the careers update of a change that finishes a game."""

    async def describe(table: TableSnapshot, change: Change) -> GameEnd | None:
        game = table.game
        if game is None or game.winner is None:
            return None
        lines = tuple(await _lines(move_log, table, change))
        rate = (lambda before: rate_lines(lines, before)) if table.rated else None
        return GameEnd(table.id, now_ts(), lines, rate)

    return describe


async def _lines(move_log: MoveLog, table: TableSnapshot, change: Change) -> list[CareerLine]:
    game = table.game
    assert game is not None
    if not seats_changed(game):
        return career_lines(game)
    # Who bid what when a seat changed hands mid-hand: only the moves tell. The stored
    # log up to this change (read before it is written: if the table moved on since,
    # its compare-and-swap fails and all this is done again), then the change's own.
    first = min((seq for seq, _, _ in change.log), default=None)
    stored = [row for row in await move_log(table.id) if first is None or row[0] < first]
    parsed = moves_of_log([entry for _, _, entry in [*stored, *change.log]])
    if parsed is None:
        return career_lines(game)
    players, _seed, _public, moves = parsed
    return lines_from_moves(players, moves, game)


def rate_lines(lines: tuple[CareerLine, ...], skills: Mapping[str, Skill]) -> dict[str, Skill]:
    """The ratings after the game: winners (on the winning team at the end) against
    everyone else who sat, abandoners included."""
    rated = [line for line in lines if line.player_id in skills]
    winners = [line.player_id for line in rated if line.won]
    losers = [line.player_id for line in rated if not line.won]
    won, lost = rate_match([skills[p] for p in winners], [skills[p] for p in losers])
    return dict(zip(winners + losers, won + lost, strict=True))
