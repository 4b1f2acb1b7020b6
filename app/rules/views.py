"""Per-seat and spectator projections: exactly what each viewer may see.

The server serves these and nothing else. A viewer sees its own hand unless
it is withheld for blind nil, and never another seat's unplayed cards (nor
the cards passed in an exchange it was not part of: they are only in the
hands of the two partners involved).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from app.rules.bidding import Bid
from app.rules.cards import Card
from app.rules.game import Game, Phase, Trick
from app.rules.scoring import TeamHandResult
from app.rules.seats import SEATS, TEAMS, Seat, Team


@dataclass(frozen=True, slots=True)
class SeatView:
    """Public facts about one seat."""

    seat: Seat
    player_id: str | None
    bid: Bid | None
    tricks_won: int
    card_count: int

    @property
    def is_bot(self) -> bool:
        """Bots carry `bot:<seat>` ids."""
        return self.player_id is not None and self.player_id.startswith("bot:")


@dataclass(frozen=True, slots=True)
class TeamView:
    """A team's score, bag count and current target."""

    team: Team
    score: int
    bags: int
    target: int | None


@dataclass(frozen=True, slots=True)
class PublicView:
    """The part of a game's view every viewer sees alike (computed once per state and
    shared by its viewers' projections)."""

    phase: Phase
    hand_number: int
    dealer: Seat | None
    turn: Seat | None
    seats: tuple[SeatView, ...]
    teams: tuple[TeamView, ...]
    current_trick: tuple[tuple[Seat, Card], ...]
    last_trick: Trick | None
    spades_broken: bool
    history: tuple[TeamHandResult, ...]
    winner: Team | None


@dataclass(frozen=True, slots=True)
class GameViewData(PublicView):
    """The game as one viewer may see it (the API's GameView without table id/version):
    the public view and the viewer's own part."""

    viewer_seat: Seat | None
    hand: tuple[Card, ...] | None
    hand_withheld: bool
    blind_nil_eligible: bool
    legal_plays: tuple[Card, ...]


def waiting_view(players: list[str | None], viewer: Seat | None) -> GameViewData:
    """The view of a table whose seats are not all filled yet."""
    return GameViewData(
        phase=Phase.WAITING,
        hand_number=0,
        dealer=None,
        turn=None,
        viewer_seat=viewer,
        hand=None,
        hand_withheld=False,
        blind_nil_eligible=False,
        legal_plays=(),
        seats=tuple(SeatView(s, players[s], None, 0, 0) for s in SEATS),
        teams=tuple(TeamView(t, 0, 0, None) for t in TEAMS),
        current_trick=(),
        last_trick=None,
        spades_broken=False,
        history=(),
        winner=None,
    )


def public_view(game: Game) -> PublicView:
    """What every viewer of `game` may see: no hand, nothing of an exchange."""
    hand = game.hand
    return PublicView(
        phase=game.phase,
        hand_number=hand.number,
        dealer=hand.dealer,
        turn=game.turn,
        seats=tuple(
            SeatView(s, game.players[s], hand.bids[s], hand.tricks_won[s], len(hand.hands[s]))
            for s in SEATS
        ),
        teams=tuple(TeamView(t, game.scores[t], game.bags[t], hand.target(t)) for t in TEAMS),
        current_trick=tuple(hand.current),
        last_trick=hand.tricks[-1] if hand.tricks else None,
        spades_broken=hand.spades_broken,
        history=tuple(game.history),
        winner=game.winner,
    )


class OwnView(NamedTuple):
    """The part of a game's view only the viewer's seat sees (for a spectator: no seat,
    no hand, nothing to play). A tuple: built for every viewer of every change."""

    viewer_seat: Seat | None
    hand: tuple[Card, ...] | None
    hand_withheld: bool
    blind_nil_eligible: bool
    legal_plays: tuple[Card, ...]


def own_view(game: Game, viewer: Seat | None) -> OwnView:
    """What the seat `viewer` (None: a spectator) sees of `game` beyond the public view:
    its own hand unless withheld for blind nil, and its legal plays."""
    if viewer is None:
        return OwnView(None, None, False, False, ())
    hand = game.hand
    withheld = hand.withheld[viewer] and game.phase is Phase.BIDDING
    own = None if withheld else tuple(hand.hands[viewer])
    return OwnView(viewer, own, withheld, withheld, tuple(game.legal_plays(viewer)))


def project(game: Game, viewer: Seat | None, public: PublicView | None = None) -> GameViewData:
    """The view of `game` for the seat `viewer`, or for a spectator when None. `public`,
    if given, must be `public_view(game)` of this very state."""
    if public is None:
        public = public_view(game)
    own = own_view(game, viewer)
    return GameViewData(
        phase=public.phase,
        hand_number=public.hand_number,
        dealer=public.dealer,
        turn=public.turn,
        viewer_seat=own.viewer_seat,
        hand=own.hand,
        hand_withheld=own.hand_withheld,
        blind_nil_eligible=own.blind_nil_eligible,
        legal_plays=own.legal_plays,
        seats=public.seats,
        teams=public.teams,
        current_trick=public.current_trick,
        last_trick=public.last_trick,
        spades_broken=public.spades_broken,
        history=public.history,
        winner=public.winner,
    )
