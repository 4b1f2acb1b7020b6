"""Profiles, game histories and the leaderboard (docs/api.md "Ratings, profiles and history")."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

import strawberry
from strawberry.types import Info

from app.api.graphql.context import Context, require_player, services_of
from app.api.graphql.errors import translate_errors
from app.api.graphql.types import Player, Seat, Team
from app.services.accounts import profiles as service
from app.services.accounts.auth import Player as AuthPlayer

InfoT = Info[Context, None]


def iso_utc(timestamp: float) -> str:
    """Epoch seconds as an ISO-8601 UTC instant."""
    moment = datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")
    return moment.replace("+00:00", "Z")


def _player(player: AuthPlayer) -> Player:
    return Player(id=strawberry.ID(player.id), username=player.username)


@strawberry.type
class Rating:
    value: int = strawberry.field(description="1500-based: round(1500 + 42 * (mu - 25))")
    deviation: int = strawberry.field(description="round(42 * sigma); 350 for a new player")
    provisional: bool = strawberry.field(description="fewer than 10 rated games")
    games: int = strawberry.field(description="rated games played")


@strawberry.type
class PlayerStats:
    games: int
    wins: int
    abandoned: int
    hands: int
    contracts_made: int
    contracts_set: int
    nil_bids: int
    nils_made: int
    blind_nil_bids: int
    blind_nils_made: int
    bags: int


@strawberry.type
class GameSummary:
    id: strawberry.ID = strawberry.field(description="<tableId>:<playerId>: one player's game")
    table_id: strawberry.ID
    finished_at: str
    rated: bool
    seat: Seat
    team: Team
    won: bool
    abandoned: bool
    score_for: int
    score_against: int
    partner: Player | None = strawberry.field(description="null when the partner seat was a bot")
    opponents: list[Player] = strawberry.field(description="the human opponents")
    rating_before: int | None = strawberry.field(description="null when unrated")
    rating_after: int | None = strawberry.field(description="null when unrated")


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class GameSummaryEdge:
    cursor: str
    node: GameSummary


@strawberry.type
class GameSummaryConnection:
    edges: list[GameSummaryEdge]
    page_info: PageInfo


@strawberry.type
class LeaderboardEntry:
    rank: int
    player: Player
    rating: Rating


@strawberry.type
class LeaderboardEdge:
    cursor: str
    node: LeaderboardEntry


@strawberry.type
class LeaderboardConnection:
    edges: list[LeaderboardEdge]
    page_info: PageInfo


@strawberry.type
class Profile:
    id: strawberry.ID = strawberry.field(description="the player's id (one profile per player)")
    player_id: strawberry.Private[str]
    player: Player
    member_since: str
    rating: Rating
    stats: PlayerStats

    @strawberry.field(description="newest first")
    @translate_errors
    async def games(
        self, info: InfoT, first: int | None = 20, after: str | None = strawberry.UNSET
    ) -> GameSummaryConnection:
        cursor = after if isinstance(after, str) else None
        page = await services_of(info).profiles.games(self.player_id, _first(first), cursor)
        edges = [GameSummaryEdge(cursor=c, node=_summary(self.player_id, s)) for c, s in page.edges]
        return GameSummaryConnection(edges=edges, page_info=_page_info(page))


def _first(first: int | None) -> int:
    # null is outside 1..100 like any other bad size (the service refuses it).
    return first if isinstance(first, int) else 0


def _page_info(
    page: service.Page[service.GameSummary] | service.Page[service.BoardEntry],
) -> PageInfo:
    end = page.edges[-1][0] if page.edges else None
    return PageInfo(has_next_page=page.has_next, end_cursor=end)


def _summary(player_id: str, s: service.GameSummary) -> GameSummary:
    seat = Seat[s.seat]
    return GameSummary(
        id=strawberry.ID(f"{s.table_id}:{player_id}"),
        table_id=strawberry.ID(s.table_id),
        finished_at=iso_utc(s.finished_at),
        rated=s.rated,
        seat=seat,
        team=Team[seat.to_rules().team.name],
        won=s.won,
        abandoned=s.abandoned,
        score_for=s.score_for,
        score_against=s.score_against,
        partner=_player(s.partner) if s.partner is not None else None,
        opponents=[_player(p) for p in s.opponents],
        rating_before=s.rating_before,
        rating_after=s.rating_after,
    )


def _rating(value: int, deviation: int, games: int, provisional: bool) -> Rating:
    return Rating(value=value, deviation=deviation, provisional=provisional, games=games)


@strawberry.type
class ProfileQuery:
    @strawberry.field(description="null when unknown, or when either has blocked the other")
    @translate_errors
    async def profile(self, info: InfoT, username: str) -> Profile | None:
        viewer = await require_player(info)
        data = await services_of(info).profiles.profile(viewer, username)
        if data is None:
            return None
        skill = data.skill
        return Profile(
            id=strawberry.ID(data.player.id),
            player_id=data.player.id,
            player=_player(data.player),
            member_since=iso_utc(data.member_since),
            rating=_rating(skill.value, skill.deviation, skill.games, skill.provisional),
            stats=PlayerStats(**asdict(data.stats)),  # the same fields, by design
        )

    @strawberry.field(description="non-provisional players, best first")
    @translate_errors
    async def leaderboard(
        self, info: InfoT, first: int | None = 20, after: str | None = strawberry.UNSET
    ) -> LeaderboardConnection:
        viewer = await require_player(info)
        cursor = after if isinstance(after, str) else None
        page = await services_of(info).profiles.leaderboard(viewer, _first(first), cursor)
        edges = [
            LeaderboardEdge(
                cursor=cursor,
                node=LeaderboardEntry(
                    rank=e.rank,
                    player=_player(e.player),
                    rating=_rating(e.value, e.deviation, e.games, False),
                ),
            )
            for cursor, e in page.edges
        ]
        return LeaderboardConnection(edges=edges, page_info=_page_info(page))
