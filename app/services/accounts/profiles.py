"""Profiles, game histories and the leaderboard, as a signed-in player may see them:
players who blocked each other (either way) do not see each other's profile nor each
other on the leaderboard."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from app.rules.rating import NEW_PLAYER, Skill
from app.services.accounts.auth import Player
from app.services.accounts.cursors import (
    BoardCursor,
    GamesCursor,
    decode_board,
    decode_games,
    encode_board,
    encode_games,
    page_size,
)
from app.store import career_reads as reads
from app.store.career import STAT_FIELDS
from app.store.db import Database
from app.store.table_rows import usernames


@dataclass(frozen=True, slots=True)
class CareerStats:
    """A player's career statistics (docs/rules.md definitions)."""

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


@dataclass(frozen=True, slots=True)
class ProfileData:
    """What a profile shows (its games are paged separately)."""

    player: Player
    member_since: float
    skill: Skill
    stats: CareerStats


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One player's view of one finished game."""

    table_id: str
    finished_at: float
    rated: bool
    seat: str
    won: bool
    abandoned: bool
    score_for: int
    score_against: int
    partner: Player | None
    opponents: list[Player]
    rating_before: int | None
    rating_after: int | None


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """A leaderboard entry."""

    rank: int
    player: Player
    value: int
    deviation: int
    games: int


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """A page of a list: (cursor, entry) pairs and whether more follow."""

    edges: list[tuple[str, T]] = field(default_factory=list)
    has_next: bool = False


class ProfileService:
    """Reads careers for a signed-in viewer."""

    def __init__(self, db: Database, cursor_key: bytes) -> None:
        self.db = db
        self.cursor_key = cursor_key  # signs page cursors (app/services/accounts/cursors.py)

    async def profile(self, viewer: Player, username: str) -> ProfileData | None:
        """The player's profile; None if unknown or if either blocked the other."""
        if not isinstance(username, str) or not 0 < len(username) <= 40:
            return None
        async with self.db.read() as session:
            row = await reads.player_by_username(session, username)
            if row is None:
                return None
            if row.id != viewer.id and await reads.blocked_between(session, viewer.id, row.id):
                return None
            stats = await reads.stats_of(session, row.id)
            skill = await reads.skill_of(session, row.id)
        values = {name: (stats or {}).get(name, 0) for name in STAT_FIELDS}
        return ProfileData(
            player=Player(row.id, row.username),
            member_since=row.created_at,
            skill=skill or NEW_PLAYER,
            stats=CareerStats(**values),
        )

    async def games(self, player_id: str, first: int, after: str | None) -> Page[GameSummary]:
        """A page of the player's finished games, newest first."""
        limit = page_size(first)
        position = decode_games(self.cursor_key, after, player_id) if after is not None else None
        async with self.db.read() as session:
            rows = await reads.summaries_of(
                session, player_id, position.seq if position else None, limit + 1
            )
            ids = [p for r in rows for p in (r.partner_id, *r.opponents.split(",")) if p]
            names = await usernames(session, ids)

        def player(player_id: str | None) -> Player | None:
            if player_id is None or player_id not in names:
                return None
            return Player(player_id, names[player_id])

        edges = []
        for r in rows[:limit]:
            opponents = [p for o in r.opponents.split(",") if (p := player(o)) is not None]
            summary = GameSummary(
                table_id=r.table_id,
                finished_at=r.finished_at,
                rated=r.rated,
                seat=r.seat,
                won=r.won,
                abandoned=r.abandoned,
                score_for=r.score_for,
                score_against=r.score_against,
                partner=player(r.partner_id),
                opponents=opponents,
                rating_before=r.rating_before,
                rating_after=r.rating_after,
            )
            edges.append((encode_games(self.cursor_key, GamesCursor(player_id, r.seq)), summary))
        return Page(edges, len(rows) > limit)

    async def leaderboard(self, viewer: Player, first: int, after: str | None) -> Page[BoardEntry]:
        """A page of the leaderboard: non-provisional players, best first (value, then
        more rated games, then username), as it stood when its first page was read."""
        limit = page_size(first)
        position = decode_board(self.cursor_key, after) if after is not None else None
        async with self.db.read() as session:
            snapshot = position.snapshot if position else await reads.last_seq(session)
            hidden = await reads.hidden_from(session, viewer.id)
            rows = await reads.board_page(
                session, snapshot, position.key if position else None, hidden, limit + 1
            )
        rank = position.rank if position else 0
        edges = []
        for offset, row in enumerate(rows[:limit], start=1):
            entry = BoardEntry(
                rank=rank + offset,
                player=Player(row.player_id, row.username),
                value=row.value,
                deviation=row.deviation,
                games=row.games,
            )
            edges.append(
                (encode_board(self.cursor_key, BoardCursor(snapshot, row.key, entry.rank)), entry)
            )
        return Page(edges, len(rows) > limit)
