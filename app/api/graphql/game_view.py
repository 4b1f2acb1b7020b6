"""Conversions from the service layer's tables to the GraphQL types: a viewer's GameView
(only what that seat may see), and the small converters the resolvers share.

Every viewer of one change gets the same public part (seats, teams, tricks, history),
so it is built once per table state (`_public_fields`) and a finished hand's results
once per game (`_history`); only the viewer's own part (seat, hand, legal plays) is
projected per viewer (app/rules/views.py: own_view)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import strawberry

from app.api.graphql.types import (
    Bid,
    BidKind,
    BotLevel,
    Card,
    GamePhase,
    GameView,
    HandResult,
    Play,
    Player,
    Rank,
    Seat,
    SeatState,
    Suit,
    Team,
    TeamState,
    Trick,
)
from app.rules import cards as rcards
from app.rules import seats as rseats
from app.rules.bidding import Bid as RBid
from app.rules.bidding import BidKind as RBidKind
from app.rules.game import Phase as RPhase
from app.rules.game import Trick as RTrick
from app.rules.scoring import TeamHandResult
from app.rules.views import PublicView, SeatView, TeamView, own_view, public_view, waiting_view
from app.services.accounts.auth import Player as AuthPlayer
from app.services.tables import snapshot as model

_CARDS: dict[rcards.Card, Card] = {
    c: Card(suit=Suit[c.suit.name], rank=Rank[c.rank.name]) for c in rcards.FULL_DECK
}


# The API's enum member of each rules member. The rules' seats and teams are IntEnums:
# indexing a tuple by them, and hashing the StrEnums, runs no Python code, where
# `Seat[seat.name]` runs three Python calls (the enum `name` property and the lookup).
_SEATS: tuple[Seat, ...] = tuple(Seat[s.name] for s in rseats.Seat)
_TEAMS: tuple[Team, ...] = tuple(Team[t.name] for t in rseats.Team)
_PHASES: dict[RPhase, GamePhase] = {p: GamePhase[p.name] for p in RPhase}
_BID_KINDS: dict[RBidKind, BidKind] = {k: BidKind[k.name] for k in RBidKind}


def card_type(card: rcards.Card) -> Card:
    """The GraphQL card (shared, immutable instances)."""
    return _CARDS[card]


def seat_type(seat: rseats.Seat | None) -> Seat | None:
    """The GraphQL seat."""
    return _SEATS[seat] if seat is not None else None


def team_type(team: rseats.Team | None) -> Team | None:
    """The GraphQL team."""
    return _TEAMS[team] if team is not None else None


def bid_type(bid: RBid | None) -> Bid | None:
    """The GraphQL bid."""
    return Bid(kind=_BID_KINDS[bid.kind], tricks=bid.tricks) if bid is not None else None


def iso_instant(epoch: float) -> str:
    """An epoch time as an ISO-8601 UTC instant with milliseconds (`...T12:00:00.000Z`)."""
    # isoformat, not strftime: no format string parsed on every move's turn deadline.
    text: str = datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")
    return text[:-6] + "Z"  # "+00:00"


def _away(occupant: model.Occupant | None) -> Player | None:
    if occupant is None:
        return None
    return Player(id=strawberry.ID(occupant.player_id), username=occupant.username or "")


def _seat_state(
    table_id: str,
    view: SeatView,
    occupant: model.Occupant | None,
    away: model.Occupant | None = None,
) -> SeatState:
    return SeatState(
        id=strawberry.ID(f"{table_id}:{view.seat._name_}"),
        seat=_SEATS[view.seat],
        player_id=strawberry.ID(occupant.player_id) if occupant is not None else None,
        username=occupant.username if occupant is not None else None,
        is_bot=occupant.is_bot if occupant is not None else False,
        bid=bid_type(view.bid),
        tricks_won=view.tricks_won,
        card_count=view.card_count,
        away_player=_away(away),
        bot_level=BotLevel.of(occupant.bot_level) if occupant is not None else None,
    )


def _team_state(table_id: str, view: TeamView) -> TeamState:
    return TeamState(
        id=strawberry.ID(f"{table_id}:{view.team._name_}"),
        team=_TEAMS[view.team],
        score=view.score,
        bags=view.bags,
        target=view.target,
    )


def _plays(plays: tuple[tuple[rseats.Seat, rcards.Card], ...]) -> list[Play]:
    return [Play(seat=_SEATS[s], card=_CARDS[c]) for s, c in plays]


def _trick(trick: RTrick | None) -> Trick | None:
    if trick is None:
        return None
    return Trick(plays=_plays(trick.plays), winner=_SEATS[trick.winner])


# The converted history of a game, found by its last result and checked result by
# result (by identity, in C), so that a move converts no finished hand again. The entry
# holds its results, so their ids are not reused while it stands; the lists are shared by
# every view of the game and never mutated.
_HISTORIES: dict[int, tuple[tuple[TeamHandResult, ...], list[HandResult]]] = {}
HISTORIES_KEPT = 1024


def _history(results: tuple[TeamHandResult, ...]) -> list[HandResult]:
    if not results:
        return []
    entry = _HISTORIES.get(id(results[-1]))
    if entry is not None and entry[0] == results:
        return entry[1]
    converted = [_result(r) for r in results]
    if len(_HISTORIES) >= HISTORIES_KEPT:
        _HISTORIES.clear()
    _HISTORIES[id(results[-1])] = (results, converted)
    return converted


def _result(r: TeamHandResult) -> HandResult:
    return HandResult(
        hand_number=r.hand_number,
        team=_TEAMS[r.team],
        target=r.target,
        tricks=r.tricks,
        points=r.points,
        bags=r.bags,
        bag_penalty=r.bag_penalty,
        score_after=r.score_after,
        bags_after=r.bags_after,
    )


# The GameView fields every viewer of one table state gets alike, of the state last
# viewed: a change is fanned out to its viewers one after another (4 seats, spectators),
# and all but the first take these instead of projecting and converting them again.
# (table, hide_tricks, the fields); replaced whole, never mutated.
_last_public: list[tuple[model.TableSnapshot, bool, dict[str, Any]]] = []


def _public_fields(table: model.TableSnapshot, hide_tricks: bool) -> dict[str, Any]:
    """The GameView fields built from the rules' public view of `table`, shared by all
    its viewers (no hand, no viewer's seat)."""
    last = _last_public[0] if _last_public else None
    if last is not None and last[0] is table and last[1] is hide_tricks:
        return last[2]
    source: PublicView
    if table.game is None:
        players = [o.player_id if o is not None else None for o in table.occupants]
        source = waiting_view(players, None)
    else:
        source = public_view(table.game)
    current, last_trick = ((), None) if hide_tricks else (source.current_trick, source.last_trick)
    fields: dict[str, Any] = {
        "id": strawberry.ID(table.id),
        "table_id": strawberry.ID(table.id),
        "phase": _PHASES[source.phase],
        "hand_number": source.hand_number,
        "dealer": seat_type(source.dealer),
        "turn": seat_type(source.turn),
        "seats": [
            _seat_state(table.id, v, table.occupants[v.seat], table.away[v.seat])
            for v in source.seats
        ],
        "teams": [_team_state(table.id, t) for t in source.teams],
        "current_trick": _plays(current),
        "last_trick": _trick(last_trick),
        "spades_broken": source.spades_broken,
        "history": _history(source.history),
        "winner": team_type(source.winner),
        "version": table.version,
        "turn_deadline": (
            iso_instant(table.turn_deadline)
            if table.turn_deadline is not None and table.clock_seat is not None
            else None
        ),
        "next_table_id": strawberry.ID(table.next_table_id) if table.next_table_id else None,
        "rematch_requests": [_SEATS[s] for s in table.rematch_requests],
    }
    _last_public[:] = [(table, hide_tricks, fields)]
    return fields


def game_view(
    table: model.TableSnapshot, viewer: rseats.Seat | None, watching: bool = True
) -> GameView:
    """The GraphQL GameView of `table` for a viewer seat (None: a spectator)."""
    fields = _public_fields(table, viewer is None and not watching)
    if table.game is None:
        return GameView(
            viewer_seat=seat_type(viewer),
            hand=None,
            hand_withheld=False,
            blind_nil_eligible=False,
            legal_plays=[],
            **fields,
        )
    # The public part is `fields` already: only the viewer's own part is projected.
    own = own_view(table.game, viewer)
    return GameView(
        viewer_seat=seat_type(own.viewer_seat),
        hand=[_CARDS[c] for c in own.hand] if own.hand is not None else None,
        hand_withheld=own.hand_withheld,
        blind_nil_eligible=own.blind_nil_eligible,
        legal_plays=[_CARDS[c] for c in own.legal_plays],
        **fields,
    )


def seat_states(table: model.TableSnapshot) -> list[SeatState]:
    """The four seats of a table as the lobby shows them (public facts only)."""
    return game_view(table, None, watching=False).seats


def player_type(player: AuthPlayer) -> Player:
    """The GraphQL player."""
    return Player(id=strawberry.ID(player.id), username=player.username)
