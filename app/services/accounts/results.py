"""A game's end, written into careers: statistics for everyone who sat, ratings for a
rated game, a summary per player. Runs inside the transaction of the change that ended
the game (`Ledger.on_finish`), so it applies exactly when that change commits: once,
whichever process made the last move, and never without it (a crash loses both)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.career import CareerLine, career_lines, seats_changed
from app.rules.rating import Skill, rate_match
from app.store import career as store
from app.store import career_pg
from app.store import tables as repo

from ..model import TableSnapshot, now_ts
from .replay import lines_from_moves, moves_of_log

Effect = Callable[[AsyncSession], Awaitable[None]]


def game_over_effect(table: TableSnapshot) -> Effect:
    """The write that records the finished `table` in the careers of its players."""

    async def record(session: AsyncSession) -> None:
        await record_finished_game(session, table)

    return record


async def record_finished_game(session: AsyncSession, table: TableSnapshot) -> None:
    """Apply a finished game's results (nothing if they already were)."""
    game = table.game
    if game is None or game.winner is None:
        return
    finished_at = now_ts()
    lines = await _lines(session, table)
    connection = await session.connection()
    if connection.dialect.name == "postgresql":
        # One round trip for the whole update (two for a rated game: the ratings are read
        # and locked first, the new ones computed here).
        before, after = await _rate(session, table, lines)
        seq = await career_pg.record_game(
            session, table.id, finished_at, table.rated, lines, before, after
        )
        if seq is not None or await store.claimed(connection, table.id):
            return
        # No counter row yet (a database never migrated to it): the general path makes one.
    seq = await store.claim_game(session, table.id, finished_at, table.rated)
    if seq is None:
        return
    before, after = await _rate(session, table, lines)
    await store.save_skills(session, table.id, seq, before, after)
    await store.add_stats(session, lines)
    finished = store.FinishedGame(table.id, seq, finished_at, table.rated)
    await store.add_summaries(session, finished, lines, before, after)


async def _rate(
    session: AsyncSession, table: TableSnapshot, lines: list[CareerLine]
) -> tuple[dict[str, Skill], dict[str, Skill]]:
    """The ratings before (locked) and after the game; empty for an unrated game."""
    if not table.rated:
        return {}, {}
    before = await store.lock_skills(session, [line.player_id for line in lines])
    return before, rate_lines(lines, before)


async def _lines(session: AsyncSession, table: TableSnapshot) -> list[CareerLine]:
    game = table.game
    assert game is not None
    if not seats_changed(game):
        return career_lines(game)
    # Who bid what when a seat changed hands mid-hand: only the moves tell. The last
    # move is already in the log (it was appended earlier in this transaction).
    rows = await repo.moves_of(session, table.id)
    parsed = moves_of_log([json.loads(r.move) for r in rows])
    if parsed is None:
        return career_lines(game)
    players, _seed, _public, moves = parsed
    return lines_from_moves(players, moves, game)


def rate_lines(lines: list[CareerLine], skills: dict[str, Skill]) -> dict[str, Skill]:
    """The ratings after the game: winners (on the winning team at the end) against
    everyone else who sat, abandoners included."""
    rated = [line for line in lines if line.player_id in skills]
    winners = [line.player_id for line in rated if line.won]
    losers = [line.player_id for line in rated if not line.won]
    won, lost = rate_match([skills[p] for p in winners], [skills[p] for p in losers])
    return dict(zip(winners + losers, won + lost, strict=True))
