"""A game's career update on PostgreSQL, as parts of the move writer's one statement
(`postgres_writer`): data-modifying CTEs claim the game (games counter and
`game_results`) once the table's compare-and-swap (`updated`) applied, then add the
summaries, the statistics and, for a rated game, the new ratings and their history,
all numbered by the claim. When the swap fails, or the game was already claimed,
nothing is written.

Parameters are named (`:name`, see `postgres_writer.Statement`); every list is one
array parameter (unnest), so a statement's text is the same for every game and asyncpg
prepares it once per connection.

A rated game's new ratings are computed in Python from the current ones: `READ_RATINGS`
reads them (creating the rows of first-time players at the default), ahead of the
game's end when it can (`PostgresMoveWriter.prefetch_ratings`), and the statement
writes everything, gated on those ratings being still the ones read: `RATED_GATE` locks
their rows (in id order) and compares each one's `seq` (the number of the game that last
changed it) with the one read. If any moved on, the statement writes nothing and says
so (`fresh` false), and the writer reads again and writes again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.rules.career import CareerLine
from app.rules.rating import Skill
from app.store.career import (
    GAMES_COUNTER,
    STAT_FIELDS,
    GameEnd,
    board_values,
    new_rating_values,
    stats_values,
)

Columns = tuple[tuple[str, str], ...]

LINE_COLUMNS: Columns = (
    ("player_id", "text"),
    ("seat", "text"),
    ("won", "boolean"),
    ("abandoned", "boolean"),
    ("score_for", "integer"),
    ("score_against", "integer"),
    ("partner_id", "text"),
    ("opponents", "text"),
    ("rating_before", "integer"),
    ("rating_after", "integer"),
    *((f"s_{name}", "integer") for name in STAT_FIELDS),
)
SKILL_COLUMNS: Columns = (
    ("player_id", "text"),
    ("mu", "float8"),
    ("sigma", "float8"),
    ("value", "integer"),
    ("deviation", "integer"),
    ("games", "integer"),
    ("listed", "boolean"),
    ("board_value", "integer"),
    ("board_games", "integer"),
    ("seq_read", "bigint"),
    ("mu_before", "float8"),
    ("sigma_before", "float8"),
    ("value_before", "integer"),
    ("deviation_before", "integer"),
)
_DEFAULT_TYPES = {
    "mu": "float8",
    "sigma": "float8",
    "value": "integer",
    "deviation": "integer",
    "games": "integer",
    "seq": "bigint",
    "listed": "boolean",
    "board_value": "integer",
    "board_games": "integer",
}


def _unnest(prefix: str, columns: Columns) -> str:
    arrays = ", ".join(f":{prefix}_{name}::{kind}[]" for name, kind in columns)
    return f"SELECT * FROM unnest({arrays}) AS {prefix}({', '.join(n for n, _ in columns)})"


def _arrays(prefix: str, columns: Columns, rows: Sequence[Sequence[Any]]) -> dict[str, list[Any]]:
    return {f"{prefix}_{name}": [row[i] for row in rows] for i, (name, _) in enumerate(columns)}


_STATS = ", ".join(STAT_FIELDS)

# After `updated` (the table's compare-and-swap, RETURNING its id): claim, summaries,
# statistics. The counter row is created if missing (a database never given one).
CLAIM_CTES = (
    "bumped AS (INSERT INTO counters (name, value) SELECT :counter::text, 1 FROM updated"
    " ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value), "
    "claim AS (INSERT INTO game_results (table_id, seq, finished_at, rated)"
    " SELECT updated.id, bumped.value, :finished_at::float8, :rated::boolean"
    " FROM updated, bumped ON CONFLICT (table_id) DO NOTHING"
    " RETURNING table_id, seq, finished_at, rated), "
    f"lines AS ({_unnest('l', LINE_COLUMNS)}), "
    "summaries AS (INSERT INTO game_summaries (player_id, seq, table_id, finished_at, rated,"
    " seat, won, abandoned, score_for, score_against, partner_id, opponents, rating_before,"
    " rating_after) SELECT l.player_id, c.seq, c.table_id, c.finished_at, c.rated, l.seat,"
    " l.won, l.abandoned, l.score_for, l.score_against, l.partner_id, l.opponents,"
    " l.rating_before, l.rating_after FROM claim c, lines l), "
    f"stats AS (INSERT INTO player_stats (player_id, {_STATS})"
    f" SELECT l.player_id, {', '.join('l.s_' + s for s in STAT_FIELDS)} FROM claim c, lines l"
    " ON CONFLICT (player_id) DO UPDATE SET "
    + ", ".join(f"{s} = player_stats.{s} + excluded.{s}" for s in STAT_FIELDS)
    + ")"
)

# Before `updated`, for a rated game: the ratings' rows locked and checked unchanged.
RATED_GATE = (
    "locked AS (SELECT player_id, seq FROM ratings WHERE player_id = ANY(:s_player_id::text[])"
    " ORDER BY player_id FOR UPDATE), "
    f"skills AS ({_unnest('s', SKILL_COLUMNS)}), "
    "fresh AS (SELECT count(*) = cardinality(:s_player_id::text[]) AS ok"
    " FROM locked k JOIN skills s ON k.player_id = s.player_id AND k.seq = s.seq_read)"
)
GATE_CONDITION = "(SELECT ok FROM fresh)"

# After the claim, for a rated game: the new ratings and their history.
RATED_CTES = (
    "new_ratings AS (UPDATE ratings r SET mu = s.mu, sigma = s.sigma, value = s.value,"
    " deviation = s.deviation, games = s.games, seq = c.seq, listed = s.listed,"
    " board_value = s.board_value, board_games = s.board_games"
    " FROM claim c, skills s WHERE r.player_id = s.player_id), "
    "history AS (INSERT INTO rating_history (player_id, seq, table_id, mu_before,"
    " sigma_before, value_before, deviation_before, mu_after, sigma_after, value_after,"
    " deviation_after, games_after) SELECT s.player_id, c.seq, c.table_id, s.mu_before,"
    " s.sigma_before, s.value_before, s.deviation_before, s.mu, s.sigma, s.value,"
    " s.deviation, s.games FROM claim c, skills s)"
)

_RATING_COLUMNS = ", ".join(("player_id", "username_key", *_DEFAULT_TYPES))
# The current ratings of some players; first-time players get their row at the default
# here (it reads like no row at all: a new player's rating, off the leaderboard). A row
# another game end is creating at this moment is in neither half: read again.
READ_RATINGS = (
    f"WITH created AS (INSERT INTO ratings ({_RATING_COLUMNS})"
    " SELECT p.id, p.username_key, "
    + ", ".join(f":d_{name}::{kind}" for name, kind in _DEFAULT_TYPES.items())
    + " FROM players p WHERE p.id = ANY(:player_ids::text[]) ORDER BY p.id"
    " ON CONFLICT (player_id) DO NOTHING RETURNING player_id, mu, sigma, games, seq)"
    " SELECT player_id, mu, sigma, games, seq FROM created UNION ALL"
    " SELECT player_id, mu, sigma, games, seq FROM ratings"
    " WHERE player_id = ANY(:player_ids::text[])"
)


def read_values(player_ids: Sequence[str]) -> dict[str, Any]:
    """The parameters of `READ_RATINGS`."""
    defaults = {f"d_{name}": value for name, value in new_rating_values().items()}
    return {"player_ids": list(player_ids), **defaults}


def ratings_read(rows: Sequence[Any]) -> dict[str, tuple[Skill, int]]:
    """Each player's rating and the `seq` it was read at, from `READ_RATINGS`."""
    return {r["player_id"]: (Skill(r["mu"], r["sigma"], r["games"]), r["seq"]) for r in rows}


def claim_values(
    end: GameEnd, before: Mapping[str, Skill], after: Mapping[str, Skill]
) -> dict[str, Any]:
    """The parameters of `CLAIM_CTES`: the game and its lines."""
    rows = [_line_row(line, before, after) for line in end.lines]
    return {
        "counter": GAMES_COUNTER,
        "finished_at": end.finished_at,
        "rated": end.rated,
        **_arrays("l", LINE_COLUMNS, rows),
    }


def _line_row(
    line: CareerLine, before: Mapping[str, Skill], after: Mapping[str, Skill]
) -> tuple[Any, ...]:
    """One line's values in `LINE_COLUMNS` order."""
    rated = line.player_id in after
    stats = stats_values(line)
    return (
        line.player_id,
        line.seat.name,
        line.won,
        line.abandoned,
        line.score_for,
        line.score_against,
        line.partner_id,
        ",".join(line.opponent_ids),
        before[line.player_id].value if rated else None,
        after[line.player_id].value if rated else None,
        *(stats[name] for name in STAT_FIELDS),
    )


def skill_values(
    read: Mapping[str, tuple[Skill, int]], after: Mapping[str, Skill]
) -> dict[str, Any]:
    """The parameters of `RATED_GATE` and `RATED_CTES`: each new rating, the one it
    replaces and that one's `seq`."""
    rows = []
    for player_id, skill in after.items():
        old, seq = read[player_id]
        board = board_values(skill)  # listed, board_value, board_games
        new = (skill.mu, skill.sigma, skill.value, skill.deviation, skill.games)
        rows.append(
            (player_id, *new, *board.values(), seq, old.mu, old.sigma, old.value, old.deviation)
        )
    return _arrays("s", SKILL_COLUMNS, rows)
