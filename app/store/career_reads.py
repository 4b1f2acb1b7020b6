"""Career reads: profiles, a player's game summaries, the leaderboard, block checks."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import and_, or_, select, tuple_
from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.rating import PROVISIONAL_GAMES, Skill
from app.store.career import (
    COUNTERS,
    GAMES_COUNTER,
    HISTORY,
    PLAYERS,
    RATINGS,
    STATS,
    GameSummaryRow,
)
from app.store.models import BlockRow, PlayerRow

_BLOCKS = BlockRow.__table__  # type: ignore[attr-defined]

BoardKey = tuple[int, int, str]  # (-value, -games, username_key): ascending = best first


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One leaderboard entry as of a snapshot."""

    player_id: str
    username: str
    value: int
    deviation: int
    games: int
    username_key: str

    @property
    def key(self) -> BoardKey:
        """The entry's place in the leaderboard's order."""
        return (-self.value, -self.games, self.username_key)


async def player_by_username(session: AsyncSession, username: str) -> PlayerRow | None:
    """The player with this username (case-insensitive)."""
    row = await session.exec(  # type: ignore[call-overload]
        select(PlayerRow).where(PlayerRow.username_key == username.lower())  # type: ignore[arg-type]
    )
    found: PlayerRow | None = row.scalars().first()
    return found


async def blocked_between(session: AsyncSession, a: str, b: str) -> bool:
    """Whether either player has blocked the other."""
    connection = await session.connection()
    row = await connection.execute(
        select(_BLOCKS.c.blocker_id).where(
            or_(
                and_(_BLOCKS.c.blocker_id == a, _BLOCKS.c.blocked_id == b),
                and_(_BLOCKS.c.blocker_id == b, _BLOCKS.c.blocked_id == a),
            )
        )
    )
    return row.first() is not None


async def hidden_from(session: AsyncSession, player_id: str) -> set[str]:
    """Everyone `player_id` blocked or was blocked by."""
    connection = await session.connection()
    rows = await connection.execute(
        select(_BLOCKS.c.blocker_id, _BLOCKS.c.blocked_id).where(
            or_(_BLOCKS.c.blocker_id == player_id, _BLOCKS.c.blocked_id == player_id)
        )
    )
    return {b if a == player_id else a for a, b in rows}


async def stats_of(session: AsyncSession, player_id: str) -> dict[str, int] | None:
    """A player's statistics, None before their first finished game."""
    connection = await session.connection()
    row = (await connection.execute(select(STATS).where(STATS.c.player_id == player_id))).first()
    return dict(row._mapping) if row is not None else None


async def skill_of(session: AsyncSession, player_id: str) -> Skill | None:
    """A player's current rating, None before their first rated game."""
    connection = await session.connection()
    row = (
        await connection.execute(
            select(RATINGS.c.mu, RATINGS.c.sigma, RATINGS.c.games).where(
                RATINGS.c.player_id == player_id
            )
        )
    ).first()
    return Skill(row.mu, row.sigma, row.games) if row is not None else None


async def summaries_of(
    session: AsyncSession, player_id: str, before_seq: int | None, limit: int
) -> list[GameSummaryRow]:
    """A player's game summaries, newest first, older than `before_seq` if given."""
    query = select(GameSummaryRow).where(GameSummaryRow.player_id == player_id)  # type: ignore[arg-type]
    if before_seq is not None:
        query = query.where(GameSummaryRow.seq < before_seq)  # type: ignore[arg-type]
    query = query.order_by(GameSummaryRow.seq.desc()).limit(limit)  # type: ignore[attr-defined]
    rows = await session.exec(query)  # type: ignore[call-overload]
    return list(rows.scalars().all())


async def last_seq(session: AsyncSession) -> int:
    """The number of the last finished game (a leaderboard snapshot)."""
    connection = await session.connection()
    row = (
        await connection.execute(select(COUNTERS.c.value).where(COUNTERS.c.name == GAMES_COUNTER))
    ).first()
    return int(row[0]) if row is not None else 0


async def board_page(
    session: AsyncSession,
    snapshot: int,
    after: BoardKey | None,
    hidden: Collection[str],
    limit: int,
) -> list[BoardRow]:
    """Up to `limit` leaderboard entries after `after`, as the board stood once game
    `snapshot` was applied: players rated since then are placed by their rating before
    their first later game (their history tells), so paging one snapshot never repeats
    or skips anyone however ratings move meanwhile."""
    connection = await session.connection()
    key = tuple_(RATINGS.c.board_value, RATINGS.c.board_games, RATINGS.c.username_key)
    query = (
        select(
            RATINGS.c.player_id,
            PLAYERS.c.username,
            RATINGS.c.value,
            RATINGS.c.deviation,
            RATINGS.c.games,
            RATINGS.c.username_key,
        )
        .join(PLAYERS, PLAYERS.c.id == RATINGS.c.player_id)
        .where(RATINGS.c.listed.is_(True), RATINGS.c.seq <= snapshot)
        .order_by(RATINGS.c.board_value, RATINGS.c.board_games, RATINGS.c.username_key)
        .limit(limit)
    )
    if after is not None:
        query = query.where(key > tuple_(*after))
    if hidden:
        query = query.where(RATINGS.c.player_id.not_in(list(hidden)))
    current = [BoardRow(*row) for row in await connection.execute(query)]
    moved = await _rated_since(session, snapshot)
    extra = [
        row
        for row in moved
        if row.games >= PROVISIONAL_GAMES
        and row.player_id not in hidden
        and (after is None or row.key > after)
    ]
    return sorted(current + extra, key=lambda r: r.key)[:limit]


async def _rated_since(session: AsyncSession, snapshot: int) -> list[BoardRow]:
    """Players whose rating changed after game `snapshot`, with their rating as of it."""
    connection = await session.connection()
    rows = await connection.execute(
        select(
            HISTORY.c.player_id,
            PLAYERS.c.username,
            HISTORY.c.value_before,
            HISTORY.c.deviation_before,
            HISTORY.c.games_after,
            PLAYERS.c.username_key,
        )
        .join(PLAYERS, PLAYERS.c.id == HISTORY.c.player_id)
        .where(HISTORY.c.seq > snapshot)
        .order_by(HISTORY.c.seq)
    )
    first: dict[str, BoardRow] = {}
    for player_id, username, value, deviation, games_after, key in rows:
        if player_id not in first:
            first[player_id] = BoardRow(player_id, username, value, deviation, games_after - 1, key)
    return list(first.values())
