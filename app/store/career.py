"""Career tables (ratings, rating history, statistics, game summaries) and their writes.

A game's results are written once: the claim inserts its `game_results` row (the table
id is the key), and the whole update (a `GameEnd`) runs in the transaction of the
change that ended the game: in the move writers' one transaction (`career_sqlite`,
`career_pg`), or here on the session path (`record_game`). `seq` numbers the finished
games from a counter row that each claim updates: its row lock makes the numbers
follow commit order across processes, so a list keyed by `seq` never sees an older
number commit after a newer one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Index,
    Integer,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import Field, SQLModel
from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.career import CareerLine
from app.rules.rating import Skill
from app.store.models import PlayerRow

GAMES_COUNTER = "games"
NEW = Skill()  # a player before any rated game


def _big() -> Any:
    return BigInteger().with_variant(Integer, "sqlite")


class CounterRow(SQLModel, table=True):
    """Named counters (`games`: the seq of the last finished game)."""

    __tablename__ = "counters"

    name: str = Field(primary_key=True, max_length=16)
    value: int = Field(sa_column=Column(_big(), nullable=False))


class GameResultRow(SQLModel, table=True):
    """A finished game whose results were applied (one row per table, ever)."""

    __tablename__ = "game_results"

    table_id: str = Field(primary_key=True, foreign_key="tables.id", max_length=32)
    seq: int = Field(sa_column=Column(_big(), nullable=False, unique=True))
    finished_at: float
    rated: bool


class PlayerStatsRow(SQLModel, table=True):
    """A player's career statistics, updated at each game's end."""

    __tablename__ = "player_stats"

    player_id: str = Field(primary_key=True, foreign_key="players.id", max_length=32)
    games: int = 0
    wins: int = 0
    abandoned: int = 0
    hands: int = 0
    contracts_made: int = 0
    contracts_set: int = 0
    nil_bids: int = 0
    nils_made: int = 0
    blind_nil_bids: int = 0
    blind_nils_made: int = 0
    bags: int = 0


class RatingRow(SQLModel, table=True):
    """A player's current rating. `username_key` is copied here so that the leaderboard
    is one index scan; `seq` is the game that last changed it (see the leaderboard)."""

    __tablename__ = "ratings"
    __table_args__ = (
        Index("ix_ratings_board", "listed", "board_value", "board_games", "username_key"),
    )

    player_id: str = Field(primary_key=True, foreign_key="players.id", max_length=32)
    username_key: str = Field(max_length=20)
    mu: float
    sigma: float
    value: int
    deviation: int
    games: int
    seq: int = Field(sa_column=Column(_big(), nullable=False))
    # The leaderboard's order as one ascending index: listed (not provisional) first,
    # value and games negated so that "highest first" reads the index forwards.
    listed: bool
    board_value: int
    board_games: int


class RatingHistoryRow(SQLModel, table=True):
    """A player's rating before and after one rated game."""

    __tablename__ = "rating_history"

    player_id: str = Field(primary_key=True, foreign_key="players.id", max_length=32)
    seq: int = Field(sa_column=Column(_big(), primary_key=True, index=True))
    table_id: str = Field(foreign_key="tables.id", max_length=32)
    mu_before: float
    sigma_before: float
    value_before: int
    deviation_before: int
    mu_after: float
    sigma_after: float
    value_after: int
    deviation_after: int
    games_after: int


class GameSummaryRow(SQLModel, table=True):
    """One player's summary of one finished game; (player, seq) pages newest first."""

    __tablename__ = "game_summaries"

    player_id: str = Field(primary_key=True, foreign_key="players.id", max_length=32)
    seq: int = Field(sa_column=Column(_big(), primary_key=True))
    table_id: str = Field(foreign_key="tables.id", max_length=32)
    finished_at: float
    rated: bool
    seat: str = Field(max_length=8)
    won: bool
    abandoned: bool
    score_for: int
    score_against: int
    partner_id: str | None = Field(default=None, max_length=32)
    opponents: str = Field(default="", max_length=200)  # player ids, comma-separated
    rating_before: int | None = None
    rating_after: int | None = None


# The tables as SQLAlchemy Core sees them (career_reads reads through these too).
COUNTERS = CounterRow.__table__  # type: ignore[attr-defined]
RESULTS = GameResultRow.__table__  # type: ignore[attr-defined]
STATS = PlayerStatsRow.__table__  # type: ignore[attr-defined]
RATINGS = RatingRow.__table__  # type: ignore[attr-defined]
HISTORY = RatingHistoryRow.__table__  # type: ignore[attr-defined]
SUMMARIES = GameSummaryRow.__table__  # type: ignore[attr-defined]
PLAYERS = PlayerRow.__table__  # type: ignore[attr-defined]

STAT_FIELDS = (
    "games",
    "wins",
    "abandoned",
    "hands",
    "contracts_made",
    "contracts_set",
    "nil_bids",
    "nils_made",
    "blind_nil_bids",
    "blind_nils_made",
    "bags",
)


def _insert(connection: AsyncConnection, table: Any) -> Any:
    """The dialect's INSERT, which knows ON CONFLICT."""
    if connection.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


async def claim_game(
    session: AsyncSession, table_id: str, finished_at: float, rated: bool
) -> int | None:
    """Mark the game's results as applied and number it; None when they already were
    (a repeated claim only leaves a gap in the numbers)."""
    connection = await session.connection()
    seq = await next_seq(connection)
    claim = (
        _insert(connection, RESULTS)
        .values(table_id=table_id, seq=seq, finished_at=finished_at, rated=rated)
        .on_conflict_do_nothing(index_elements=["table_id"])
        .returning(RESULTS.c.seq)
    )
    return None if (await connection.execute(claim)).first() is None else seq


async def next_seq(connection: AsyncConnection) -> int:
    """The next finished game's number (the counter row stays locked until commit); the
    counter row is created if missing."""
    bump = (
        update(COUNTERS)
        .where(COUNTERS.c.name == GAMES_COUNTER)
        .values(value=COUNTERS.c.value + 1)
        .returning(COUNTERS.c.value)
    )
    row = (await connection.execute(bump)).first()
    if row is None:
        await connection.execute(
            _insert(connection, COUNTERS)
            .values(name=GAMES_COUNTER, value=0)
            .on_conflict_do_nothing()
        )
        row = (await connection.execute(bump)).first()
        assert row is not None
    return int(row[0])


def stats_values(line: CareerLine) -> dict[str, int]:
    """What one game line adds to each statistic."""
    return {
        "games": 1,
        "wins": int(line.won),
        "abandoned": int(line.abandoned),
        "hands": line.hands,
        "contracts_made": line.contracts_made,
        "contracts_set": line.contracts_set,
        "nil_bids": line.nil_bids,
        "nils_made": line.nils_made,
        "blind_nil_bids": line.blind_nil_bids,
        "blind_nils_made": line.blind_nils_made,
        "bags": line.bags,
    }


async def add_stats(session: AsyncSession, lines: Sequence[CareerLine]) -> None:
    """Add the game's lines to the players' statistics (one upsert)."""
    if not lines:
        return
    connection = await session.connection()
    statement = _insert(connection, STATS).values(
        [{"player_id": line.player_id, **stats_values(line)} for line in lines]
    )
    statement = statement.on_conflict_do_update(
        index_elements=["player_id"],
        set_={f: STATS.c[f] + statement.excluded[f] for f in STAT_FIELDS},
    )
    await connection.execute(statement)


def new_rating_values() -> dict[str, Any]:
    """A ratings row's values (but its player and username) before any rated game."""
    return {
        "mu": NEW.mu,
        "sigma": NEW.sigma,
        "value": NEW.value,
        "deviation": NEW.deviation,
        "games": NEW.games,
        "seq": 0,
        **board_values(NEW),
    }


async def lock_skills(session: AsyncSession, player_ids: Sequence[str]) -> dict[str, Skill]:
    """The current skills of these players, created at the default for new ones and
    locked until commit (two games ending at once for one player apply in turn).

    Every game end locks the ratings it changes before its table row and the games
    counter (rows in id order), so two game ends never wait for each other in a cycle."""
    if not player_ids:
        return {}
    connection = await session.connection()
    defaults = new_rating_values()
    seed = (
        select(PLAYERS.c.id, PLAYERS.c.username_key, *(literal(v) for v in defaults.values()))
        .where(PLAYERS.c.id.in_(player_ids))
        .order_by(PLAYERS.c.id)
    )
    columns = ["player_id", "username_key", *defaults]
    # A no-op update on conflict locks an existing row and returns it as it stands.
    statement = _insert(connection, RATINGS).from_select(columns, seed)
    statement = statement.on_conflict_do_update(
        index_elements=["player_id"], set_={"player_id": statement.excluded.player_id}
    ).returning(RATINGS.c.player_id, RATINGS.c.mu, RATINGS.c.sigma, RATINGS.c.games)
    rows = await connection.execute(statement)
    return {r.player_id: Skill(r.mu, r.sigma, r.games) for r in rows}


async def save_skills(
    session: AsyncSession,
    table_id: str,
    seq: int,
    before: dict[str, Skill],
    after: dict[str, Skill],
) -> None:
    """Store the new skills and each player's before/after history row."""
    if not after:
        return
    connection = await session.connection()
    rows = [
        {
            "player_id": player_id,
            "username_key": "",  # never inserted: every row exists (lock_skills)
            "mu": skill.mu,
            "sigma": skill.sigma,
            "value": skill.value,
            "deviation": skill.deviation,
            "games": skill.games,
            "seq": seq,
            **board_values(skill),
        }
        for player_id, skill in after.items()
    ]
    statement = _insert(connection, RATINGS).values(rows)
    changed = ("mu", "sigma", "value", "deviation", "games", "seq", *board_values(NEW))
    statement = statement.on_conflict_do_update(
        index_elements=["player_id"], set_={c: statement.excluded[c] for c in changed}
    )
    await connection.execute(statement)
    await connection.execute(
        insert(HISTORY),
        [
            {
                "player_id": player_id,
                "seq": seq,
                "table_id": table_id,
                "mu_before": before[player_id].mu,
                "sigma_before": before[player_id].sigma,
                "value_before": before[player_id].value,
                "deviation_before": before[player_id].deviation,
                "mu_after": skill.mu,
                "sigma_after": skill.sigma,
                "value_after": skill.value,
                "deviation_after": skill.deviation,
                "games_after": skill.games,
            }
            for player_id, skill in after.items()
        ],
    )


def board_values(skill: Skill) -> dict[str, Any]:
    """The leaderboard columns of a rating."""
    return {
        "listed": not skill.provisional,
        "board_value": -skill.value,
        "board_games": -skill.games,
    }


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """What the summaries of one game share."""

    table_id: str
    seq: int
    finished_at: float
    rated: bool


def summary_values(
    game: FinishedGame, line: CareerLine, rating_before: int | None, rating_after: int | None
) -> dict[str, Any]:
    """The game_summaries row of one line of one game (the backfill writes these too)."""
    return {
        "player_id": line.player_id,
        "seq": game.seq,
        "table_id": game.table_id,
        "finished_at": game.finished_at,
        "rated": game.rated,
        "seat": line.seat.name,
        "won": line.won,
        "abandoned": line.abandoned,
        "score_for": line.score_for,
        "score_against": line.score_against,
        "partner_id": line.partner_id,
        "opponents": ",".join(line.opponent_ids),
        "rating_before": rating_before,
        "rating_after": rating_after,
    }


async def add_summaries(
    session: AsyncSession,
    game: FinishedGame,
    lines: Sequence[CareerLine],
    before: dict[str, Skill],
    after: dict[str, Skill],
) -> None:
    """One game summary per line."""
    if not lines:
        return
    connection = await session.connection()
    await connection.execute(
        insert(SUMMARIES),
        [
            summary_values(
                game,
                line,
                before[line.player_id].value if line.player_id in after else None,
                after[line.player_id].value if line.player_id in after else None,
            )
            for line in lines
        ],
    )


# The ratings after a rated game from those before it (pure: computed between the
# read of the current ratings and the write of the new ones).
Rate = Callable[[Mapping[str, Skill]], dict[str, Skill]]


@dataclass(frozen=True, slots=True)
class GameEnd:
    """A finished game's career update, written with the change that ends the game."""

    table_id: str
    finished_at: float
    lines: tuple[CareerLine, ...]
    rate: Rate | None = None  # None: an unrated game

    @property
    def rated(self) -> bool:
        """Whether the game changes ratings."""
        return self.rate is not None

    @property
    def rated_players(self) -> list[str]:
        """The players whose ratings the game changes, in id order (the lock order)."""
        return sorted(line.player_id for line in self.lines) if self.rated else []

    def ratings_after(self, before: Mapping[str, Skill]) -> dict[str, Skill]:
        """The new ratings from the current ones (none for an unrated game)."""
        return self.rate(before) if self.rate is not None else {}


async def record_game(session: AsyncSession, end: GameEnd, before: dict[str, Skill]) -> int | None:
    """Claim the game and write its careers on the session path (after its table row
    and move log); `before` are the ratings `lock_skills` read and locked first. The
    game's number, None if it was already claimed (then nothing is written)."""
    seq = await claim_game(session, end.table_id, end.finished_at, end.rated)
    if seq is None:
        return None
    after = end.ratings_after(before)
    await save_skills(session, end.table_id, seq, before, after)
    await add_stats(session, end.lines)
    finished = FinishedGame(end.table_id, seq, end.finished_at, end.rated)
    await add_summaries(session, finished, end.lines, before, after)
    return seq
