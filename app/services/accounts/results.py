"""A game's end, for the careers: statistics for everyone who sat, ratings for a rated
game, a summary per player. `game_ends` makes the hook (`Ledger.on_finish`) that
describes it (`GameEnd`); the store writes it in the transaction of the change that
ended the game, so it applies exactly when that change commits: once, whichever process
made the last move, and never without it (a crash loses both)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from app.rules.career import CareerLine, career_lines, seats_changed
from app.rules.movelog import LogEntry, lines_from_moves, moves_of_log
from app.rules.rating import Skill, rate_match
from app.rules.seats import SEATS
from app.services.tables.change import Change
from app.services.tables.snapshot import TableSnapshot, now_ts
from app.store.career import GameEnd
from app.store.db import Database

# A table's move log: (seq, changes, entry) rows in order (`Ledger.moves`).
MoveLog = Callable[[str], Awaitable[list[tuple[int, int, LogEntry]]]]
FinishHook = Callable[[TableSnapshot, Change], Awaitable[GameEnd | None]]
PrepareHook = Callable[[TableSnapshot], Awaitable[None]]


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


def ratings_ahead(db: Database) -> PrepareHook:
    """The hook (`Ledger.prepare_finish`) that readies a rated game's end while the game
    is played: the move writer reads the players' ratings and keeps them for the final
    move's write (which checks they are still current), and both possible results are
    rated now (`rate_match` keeps them), so the final move does neither."""

    async def prepare(table: TableSnapshot) -> None:
        writer = db.move_writer
        if writer is None:
            return
        humans = [o.player_id for o in table.occupants if o is not None and not o.is_bot]
        skills = await writer.prefetch_ratings(sorted(humans))
        rate_both_results(table, skills)

    return prepare


def rate_both_results(table: TableSnapshot, skills: Mapping[str, Skill]) -> None:
    """Rate the table's seated humans for either team winning, in the order `rate_lines`
    will rate them if nobody leaves (seat order), when all their ratings are known."""
    seated = [(seat, o.player_id) for seat, o in zip(SEATS, table.occupants, strict=True) if o]
    if not all(player in skills for _seat, player in seated):
        return
    for team in {seat.team for seat in SEATS}:
        winners = [skills[player] for seat, player in seated if seat.team is team]
        losers = [skills[player] for seat, player in seated if seat.team is not team]
        rate_match(winners, losers)
