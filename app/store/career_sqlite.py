"""A game's career update on SQLite, run by the move writer on its own thread inside the
transaction of the change that ends the game (`sqlite_writer`): claim the game (games
counter and `game_results`), read the players' ratings and compute the new ones (the
`BEGIN IMMEDIATE` transaction already keeps every other writer out), then write the
ratings, their history, the statistics and the summaries. Its SQL is compiled from the
same SQLAlchemy tables as the rest of the store."""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import bindparam, insert, literal_column, select, update
from sqlalchemy.dialects import sqlite

from app.rules.rating import Skill
from app.store.career import (
    COUNTERS,
    GAMES_COUNTER,
    HISTORY,
    PLAYERS,
    RATINGS,
    RESULTS,
    STAT_FIELDS,
    STATS,
    SUMMARIES,
    FinishedGame,
    GameEnd,
    board_values,
    new_rating_values,
    stats_values,
    summary_values,
)

_DIALECT = sqlite.dialect(paramstyle="named")


def _sql(statement: Any) -> str:
    return str(statement.compile(dialect=_DIALECT))


def _bind(*names: str) -> dict[str, Any]:
    return {name: bindparam(name) for name in names}


_BUMP = sqlite.insert(COUNTERS).values(name=bindparam("name"), value=literal_column("1"))
BUMP = _sql(
    _BUMP.on_conflict_do_update(
        index_elements=["name"], set_={"value": COUNTERS.c.value + literal_column("1")}
    ).returning(COUNTERS.c.value)
)
CLAIM = _sql(
    sqlite.insert(RESULTS)
    .values(_bind("table_id", "seq", "finished_at", "rated"))
    .on_conflict_do_nothing(index_elements=["table_id"])
    .returning(RESULTS.c.seq)
)
_DEFAULTS = new_rating_values()
NEW_RATING = _sql(
    sqlite.insert(RATINGS)
    .from_select(
        ["player_id", "username_key", *_DEFAULTS],
        select(
            PLAYERS.c.id, PLAYERS.c.username_key, *(bindparam(f"d_{n}") for n in _DEFAULTS)
        ).where(PLAYERS.c.id == bindparam("player_id")),
    )
    .on_conflict_do_nothing(index_elements=["player_id"])
)
_NEW_RATING_VALUES = {f"d_{name}": value for name, value in _DEFAULTS.items()}
RATING = _sql(
    select(RATINGS.c.mu, RATINGS.c.sigma, RATINGS.c.games).where(
        RATINGS.c.player_id == bindparam("player_id")
    )
)
_RATED = ("mu", "sigma", "value", "deviation", "games", "seq", *board_values(Skill()))
SAVE_RATING = _sql(
    update(RATINGS).where(RATINGS.c.player_id == bindparam("player_id_")).values(_bind(*_RATED))
)
_HISTORY_COLUMNS = [c.name for c in HISTORY.columns]
ADD_HISTORY = _sql(insert(HISTORY).values(_bind(*_HISTORY_COLUMNS)))
_ADD_STATS = sqlite.insert(STATS).values(_bind("player_id", *STAT_FIELDS))
ADD_STATS = _sql(
    _ADD_STATS.on_conflict_do_update(
        index_elements=["player_id"],
        set_={f: STATS.c[f] + _ADD_STATS.excluded[f] for f in STAT_FIELDS},
    )
)
_SUMMARY_COLUMNS = [c.name for c in SUMMARIES.columns]
ADD_SUMMARY = _sql(insert(SUMMARIES).values(_bind(*_SUMMARY_COLUMNS)))


def record_game(connection: sqlite3.Connection, end: GameEnd) -> int | None:
    """Claim the game and write its careers in the connection's open transaction (after
    the table row and the move log); the game's number, None if already claimed."""
    ((seq,),) = connection.execute(BUMP, {"name": GAMES_COUNTER}).fetchall()
    claimed = connection.execute(
        CLAIM,
        {"table_id": end.table_id, "seq": seq, "finished_at": end.finished_at, "rated": end.rated},
    ).fetchall()
    if not claimed:
        return None
    before = _current_skills(connection, end.rated_players)
    after = end.ratings_after(before)
    connection.executemany(
        SAVE_RATING,
        [
            {"player_id_": p, "seq": seq, **_skill_columns(skill), **board_values(skill)}
            for p, skill in after.items()
        ],
    )
    connection.executemany(
        ADD_HISTORY,
        [_history_row(end.table_id, seq, p, before[p], skill) for p, skill in after.items()],
    )
    connection.executemany(
        ADD_STATS, [{"player_id": line.player_id, **stats_values(line)} for line in end.lines]
    )
    game = FinishedGame(end.table_id, seq, end.finished_at, end.rated)
    connection.executemany(
        ADD_SUMMARY,
        [
            summary_values(
                game,
                line,
                before[line.player_id].value if line.player_id in after else None,
                after[line.player_id].value if line.player_id in after else None,
            )
            for line in end.lines
        ],
    )
    return int(seq)


def _current_skills(connection: sqlite3.Connection, player_ids: list[str]) -> dict[str, Skill]:
    """The players' ratings, their rows created at the default for first-time players."""
    skills = {}
    for player_id in player_ids:
        connection.execute(NEW_RATING, {"player_id": player_id, **_NEW_RATING_VALUES})
        ((mu, sigma, games),) = connection.execute(RATING, {"player_id": player_id}).fetchall()
        skills[player_id] = Skill(mu, sigma, games)
    return skills


def _skill_columns(skill: Skill) -> dict[str, Any]:
    return {
        "mu": skill.mu,
        "sigma": skill.sigma,
        "value": skill.value,
        "deviation": skill.deviation,
        "games": skill.games,
    }


def _history_row(
    table_id: str, seq: int, player_id: str, before: Skill, after: Skill
) -> dict[str, Any]:
    return {
        "player_id": player_id,
        "seq": seq,
        "table_id": table_id,
        "mu_before": before.mu,
        "sigma_before": before.sigma,
        "value_before": before.value,
        "deviation_before": before.deviation,
        "mu_after": after.mu,
        "sigma_after": after.sigma,
        "value_after": after.value,
        "deviation_after": after.deviation,
        "games_after": after.games,
    }
