"""A game's whole career update on PostgreSQL in one statement (one round trip): data-
modifying CTEs claim the game (counter and `game_results`), then add the summaries, the
statistics and, for a rated game, the new ratings and their history, all numbered by the
claim; when the game was already claimed the claim yields no row and nothing is written.
SQLite takes the statement-per-write path of `career.py` (it runs in process)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.career import CareerLine
from app.rules.rating import Skill

from .career import GAMES_COUNTER, STAT_FIELDS, board_values, stats_values

_LINE_COLUMNS = (
    ("player_id", "TEXT"),
    ("seat", "TEXT"),
    ("won", "BOOLEAN"),
    ("abandoned", "BOOLEAN"),
    ("score_for", "INTEGER"),
    ("score_against", "INTEGER"),
    ("partner_id", "TEXT"),
    ("opponents", "TEXT"),
    ("rating_before", "INTEGER"),
    ("rating_after", "INTEGER"),
    *((f"s_{name}", "INTEGER") for name in STAT_FIELDS),
)
_SKILL_COLUMNS = (
    ("player_id", "TEXT"),
    ("mu", "DOUBLE PRECISION"),
    ("sigma", "DOUBLE PRECISION"),
    ("value", "INTEGER"),
    ("deviation", "INTEGER"),
    ("games", "INTEGER"),
    ("listed", "BOOLEAN"),
    ("board_value", "INTEGER"),
    ("board_games", "INTEGER"),
    ("mu_before", "DOUBLE PRECISION"),
    ("sigma_before", "DOUBLE PRECISION"),
    ("value_before", "INTEGER"),
    ("deviation_before", "INTEGER"),
)
STATS = STAT_FIELDS


def _values(
    name: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
    params: dict[str, Any],
) -> str:
    """A typed VALUES list as a CTE, its values bound as parameters."""
    tuples = []
    for i, row in enumerate(rows):
        cells = []
        for (column, kind), value in zip(columns, row, strict=True):
            key = f"{name}_{i}_{column}"
            params[key] = value
            cells.append(f"CAST(:{key} AS {kind})")
        tuples.append(f"({', '.join(cells)})")
    names = ", ".join(c for c, _ in columns)
    return f"{name} ({names}) AS (VALUES {', '.join(tuples)})"


async def record_game(
    session: AsyncSession,
    table_id: str,
    finished_at: float,
    rated: bool,
    lines: Sequence[CareerLine],
    before: dict[str, Skill],
    after: dict[str, Skill],
) -> int | None:
    """Claim the game and write its careers; the game's number, None if already claimed."""
    params: dict[str, Any] = {
        "table_id": table_id,
        "finished_at": finished_at,
        "rated": rated,
        "counter": GAMES_COUNTER,
    }
    ctes = [
        "bumped AS (UPDATE counters SET value = value + 1 WHERE name = :counter RETURNING value)",
        "claim AS (INSERT INTO game_results (table_id, seq, finished_at, rated)"
        " SELECT :table_id, value, :finished_at, :rated FROM bumped"
        " ON CONFLICT (table_id) DO NOTHING RETURNING seq)",
    ]
    if lines:
        rows: list[tuple[Any, ...]] = [
            (
                line.player_id,
                line.seat.name,
                line.won,
                line.abandoned,
                line.score_for,
                line.score_against,
                line.partner_id,
                ",".join(line.opponent_ids),
                before[line.player_id].value if line.player_id in after else None,
                after[line.player_id].value if line.player_id in after else None,
                *(stats_values(line)[name] for name in STAT_FIELDS),
            )
            for line in lines
        ]
        ctes.append(_values("lines", _LINE_COLUMNS, rows, params))
        ctes.append(
            "summaries AS (INSERT INTO game_summaries (player_id, seq, table_id, finished_at,"
            " rated, seat, won, abandoned, score_for, score_against, partner_id, opponents,"
            " rating_before, rating_after) SELECT l.player_id, c.seq, :table_id, :finished_at,"
            " :rated, l.seat, l.won, l.abandoned, l.score_for, l.score_against, l.partner_id,"
            " l.opponents, l.rating_before, l.rating_after FROM claim c, lines l)"
        )
        ctes.append(
            f"stats AS (INSERT INTO player_stats (player_id, {', '.join(STATS)})"
            f" SELECT l.player_id, {', '.join('l.s_' + s for s in STATS)} FROM claim c, lines l"
            " ON CONFLICT (player_id) DO UPDATE SET "
            + ", ".join(f"{s} = player_stats.{s} + excluded.{s}" for s in STATS)
            + ")"
        )
    if after:
        skill_rows: list[tuple[Any, ...]] = [
            (
                player_id,
                skill.mu,
                skill.sigma,
                skill.value,
                skill.deviation,
                skill.games,
                *board_values(skill).values(),
                before[player_id].mu,
                before[player_id].sigma,
                before[player_id].value,
                before[player_id].deviation,
            )
            for player_id, skill in after.items()
        ]
        ctes.append(_values("skills", _SKILL_COLUMNS, skill_rows, params))
        ctes.append(
            "new_ratings AS (UPDATE ratings r SET mu = s.mu, sigma = s.sigma, value = s.value,"
            " deviation = s.deviation, games = s.games, seq = c.seq, listed = s.listed,"
            " board_value = s.board_value, board_games = s.board_games"
            " FROM skills s, claim c WHERE r.player_id = s.player_id)"
        )
        ctes.append(
            "history AS (INSERT INTO rating_history (player_id, seq, table_id, mu_before,"
            " sigma_before, value_before, deviation_before, mu_after, sigma_after, value_after,"
            " deviation_after, games_after) SELECT s.player_id, c.seq, :table_id, s.mu_before,"
            " s.sigma_before, s.value_before, s.deviation_before, s.mu, s.sigma, s.value,"
            " s.deviation, s.games FROM skills s, claim c)"
        )
    statement = "WITH " + ",\n".join(ctes) + "\nSELECT seq FROM claim"
    connection = await session.connection()
    row = (await connection.execute(text(statement), params)).first()
    return int(row[0]) if row is not None else None
