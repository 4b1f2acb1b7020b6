"""Game moves committed to PostgreSQL in one statement, on a small asyncpg pool.

The compare-and-swap of the table row and the insert of its move-log rows are one
statement (a data-modifying CTE), so they apply together or not at all without
BEGIN/COMMIT trips. The change that ends a game adds its career update to that
statement (`career_pg`). A rated game's end needs its players' current ratings: the
writer keeps the ratings it last read or wrote (`KnownRatings`, warmed ahead of the
end by `prefetch_ratings`), so the end is one statement too, gated on them being still
current; only when they are not known or no longer current is it two trips (read, then
write) or more.

No connection is checked for liveness first: one that fails in any way but a refused
statement is terminated, and the pool opens a new one. Errors become SQLAlchemy's, as
the rest of the server expects (an outage answers UNAVAILABLE).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from sqlalchemy import exc
from sqlalchemy.engine import make_url

from app.rules.rating import Skill
from app.store import career_pg
from app.store.career import GameEnd
from app.store.models import MoveRow, TableRow, now
from app.store.writers import MOVE_COLUMNS, TABLE_COLUMNS, driver_error

_TABLES = str(TableRow.__tablename__)
_MOVES = str(MoveRow.__tablename__)
_MOVE_TYPES = {"seq": "integer", "changes": "integer", "move": "text", "created_at": "float8"}
_NAME = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


@dataclass(frozen=True, slots=True)
class Statement:
    """SQL written with named parameters (`:name`), sent with asyncpg's numbered ones."""

    sql: str
    names: tuple[str, ...]

    @classmethod
    def named(cls, text: str) -> Statement:
        """The statement of `text`, its `:name` parameters numbered in order of use."""
        names: list[str] = []

        def number(match: re.Match[str]) -> str:
            if match.group(1) not in names:
                names.append(match.group(1))
            return f"${names.index(match.group(1)) + 1}"

        sql = _NAME.sub(number, text)
        return cls(sql, tuple(names))

    def args(self, values: Mapping[str, Any]) -> list[Any]:
        """The parameter values in their numbered order."""
        return [values[name] for name in self.names]


def _change_ctes(gate: str = "") -> str:
    """`updated` (the compare-and-swap of the table row, `gate` an extra condition) and
    `logged` (its move-log rows, only if the row was updated)."""
    settings = ", ".join(f"{name} = :t_{name}" for name in TABLE_COLUMNS)
    arrays = ", ".join(f":m_{name}::{_MOVE_TYPES[name]}[]" for name in MOVE_COLUMNS)
    columns = ", ".join(MOVE_COLUMNS)
    picked = ", ".join(f"m.{name}" for name in MOVE_COLUMNS)
    condition = f" AND {gate}" if gate else ""
    return (
        f"updated AS (UPDATE {_TABLES} SET {settings} "
        f"WHERE id = :table_id AND version = :expected{condition} RETURNING id), "
        f"logged AS (INSERT INTO {_MOVES} (table_id, {columns}) "
        f"SELECT updated.id, {picked} FROM updated, unnest({arrays}) AS m({columns}) "
        f"RETURNING seq)"
    )


# Every data-modifying part runs to completion whatever the final SELECT reads; it counts
# the updated rows, so a change is told applied even with no log rows.
_APPLIED = "(SELECT count(*) FROM updated) AS applied"
MOVE = Statement.named(f"WITH {_change_ctes()} SELECT {_APPLIED}")
# The change that ends an unrated game, with its careers: still one statement.
UNRATED_END = Statement.named(
    f"WITH {_change_ctes()}, {career_pg.CLAIM_CTES} "
    f"SELECT {_APPLIED}, (SELECT seq FROM claim) AS seq"
)
# The change that ends a rated game, written only if the ratings read are still current.
RATED_END = Statement.named(
    f"WITH {career_pg.RATED_GATE}, {_change_ctes(career_pg.GATE_CONDITION)}, "
    f"{career_pg.CLAIM_CTES}, {career_pg.RATED_CTES} "
    f"SELECT {_APPLIED}, (SELECT seq FROM claim) AS seq, (SELECT ok FROM fresh) AS fresh"
)
READ_RATINGS = Statement.named(career_pg.READ_RATINGS)
RATED_ATTEMPTS = 10  # writes of a game whose players' other games keep ending
KNOWN_RATINGS = 20_000  # players whose last read or written rating a writer keeps
VERSION_SQL = f"SELECT version FROM {_TABLES} WHERE id = $1"
POOL_SIZE = 8
STATEMENT_TIMEOUT = 10.0  # seconds: a silent network must not hold a move forever


async def _no_reset(_connection: asyncpg.Connection) -> None:
    # Only single autocommit statements run here: no session state to reset, and the
    # default reset would cost a trip per move.
    return None


def _wrap(error: Exception, statement: str) -> exc.DBAPIError:
    integrity = isinstance(error, asyncpg.IntegrityConstraintViolationError)
    return driver_error(error, statement, integrity)


class PostgresMoveWriter:
    """One statement per game move on its own asyncpg pool (opened on first use)."""

    def __init__(self, database_url: str) -> None:
        url = make_url(database_url).set(drivername="postgresql")
        self.dsn = url.render_as_string(hide_password=False)
        self._pool: asyncpg.Pool | None = None
        self.known = KnownRatings(KNOWN_RATINGS)

    async def _connection_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            self._pool = await asyncpg.create_pool(
                self.dsn, min_size=0, max_size=POOL_SIZE, reset=_no_reset
            )
        return self._pool

    async def _fetch(self, statement: str, *args: Any) -> list[asyncpg.Record]:
        try:
            pool = await self._connection_pool()
            async with pool.acquire() as connection:
                try:
                    return list(await connection.fetch(statement, *args, timeout=STATEMENT_TIMEOUT))
                except asyncpg.PostgresError:
                    raise  # the server refused the statement: the connection is sound
                except BaseException:
                    # Lost, timed out or cancelled mid-statement (or killed by the server
                    # while idle): a connection in an unknown state never goes back.
                    connection.terminate()
                    raise
        except (
            asyncpg.PostgresError,
            asyncpg.InterfaceError,
            asyncpg.InternalClientError,
            OSError,
            TimeoutError,
        ) as error:
            raise _wrap(error, statement) from error

    async def commit(
        self,
        table_id: str,
        expected_version: int,
        values: dict[str, Any],
        moves: Sequence[dict[str, Any]],
        finish: GameEnd | None = None,
        changed: Collection[str] | None = None,
    ) -> bool:
        """See `MoveWriter.commit`: one statement (a rated game's end: see `_rated_end`),
        prepared once, setting every column whatever `changed` says."""
        row = {"updated_at": now(), **values}
        change = {f"t_{name}": row[name] for name in TABLE_COLUMNS}
        change.update({f"m_{name}": [move[name] for move in moves] for name in MOVE_COLUMNS})
        change.update(table_id=table_id, expected=expected_version)
        if finish is None:
            return await self._applied(MOVE, change)
        if not finish.rated:
            return await self._applied(
                UNRATED_END, {**change, **career_pg.claim_values(finish, {}, {})}
            )
        return await self._rated_end(change, finish)

    async def _applied(self, statement: Statement, values: Mapping[str, Any]) -> bool:
        rows = await self._fetch(statement.sql, *statement.args(values))
        return bool(rows[0]["applied"] == 1)

    async def prefetch_ratings(self, player_ids: Sequence[str]) -> dict[str, Skill]:
        """See `MoveWriter.prefetch_ratings`: read and kept for the game's end."""
        return {p: skill for p, (skill, _seq) in (await self._read_ratings(player_ids)).items()}

    async def _read_ratings(self, player_ids: Sequence[str]) -> dict[str, tuple[Skill, int]]:
        """The players' current ratings and their `seq` (a player whose first rating
        another game end is creating right now is missing), kept."""
        values = READ_RATINGS.args(career_pg.read_values(player_ids))
        read = career_pg.ratings_read(await self._fetch(READ_RATINGS.sql, *values))
        self.known.learn(read)
        return read

    async def _rated_end(self, change: dict[str, Any], finish: GameEnd) -> bool:
        """Write the change with the new ratings computed from the current ones: those
        known (read ahead or written here last) if all are, else read now; read again
        whenever the write finds them no longer current."""
        players = finish.rated_players
        read = self.known.all_of(players)
        for _attempt in range(RATED_ATTEMPTS):
            if read is None:
                read = await self._read_ratings(players)
                if len(read) != len(players):
                    read = None  # a first rating was being created by another game end
                    continue
            before = {player_id: skill for player_id, (skill, _seq) in read.items()}
            after = finish.ratings_after(before)
            values = {
                **change,
                **career_pg.claim_values(finish, before, after),
                **career_pg.skill_values(read, after),
            }
            written = (await self._fetch(RATED_END.sql, *RATED_END.args(values)))[0]
            if written["fresh"]:
                if written["seq"] is not None:  # claimed: these are the ratings now
                    self.known.learn({p: (s, written["seq"]) for p, s in after.items()})
                return bool(written["applied"] == 1)
            read = None
        raise driver_error(RuntimeError("ratings kept changing"), "rated game end", False)

    async def version(self, table_id: str) -> int | None:
        """See `MoveWriter.version`."""
        rows = await self._fetch(VERSION_SQL, table_id)
        return None if not rows else int(rows[0]["version"])

    async def close(self) -> None:
        """Close the pool."""
        if self._pool is not None:
            await self._pool.close()
            self._pool = None


class KnownRatings:
    """The ratings a writer last read or wrote, with the `seq` they were at, for the
    players it saw last (at most `size`). A game end starts from them: its write checks
    each one's `seq` against the stored row, so a rating changed meanwhile elsewhere only
    costs a read and a second write, never a wrong rating. A `seq` only grows (each is a
    committed game's number), so an older one never replaces a newer one."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._ratings: OrderedDict[str, tuple[Skill, int]] = OrderedDict()

    def learn(self, ratings: Mapping[str, tuple[Skill, int]]) -> None:
        """Keep these ratings, unless a newer one is known."""
        for player_id, (skill, seq) in ratings.items():
            known = self._ratings.pop(player_id, None)
            newer = known is not None and known[1] > seq
            self._ratings[player_id] = known if newer and known is not None else (skill, seq)
        while len(self._ratings) > self.size:
            self._ratings.popitem(last=False)

    def all_of(self, player_ids: Sequence[str]) -> dict[str, tuple[Skill, int]] | None:
        """The known ratings of all these players; None unless every one is known."""
        found = {p: self._ratings[p] for p in player_ids if p in self._ratings}
        return found if len(found) == len(player_ids) else None
