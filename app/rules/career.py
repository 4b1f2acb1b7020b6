"""What one finished game adds to each human's career (docs/rules.md "Ratings and career
statistics"): pure, from the game state and, when seats changed hands, its moves.

Who sat where in each hand decides what counts for whom:
- a player counts a hand when they held its seat at any moment of the hand (from its
  deal to its scoring), and the team's result of that hand (contract made or set when
  the team had a target, bags taken) counts for every such player;
- a NIL or BLIND_NIL bid counts for whoever held the seat when the bid was placed;
- a player who held a seat but does not hold it at the end (left or replaced, and did
  not reclaim it) abandoned the game: never a win.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from app.rules.bidding import BidKind
from app.rules.game import TRICKS_PER_HAND, Game
from app.rules.moves import Move, PlaceBid, PlayCard, ReplacePlayer
from app.rules.seats import SEATS, Seat, Team

CARDS_PER_HAND = 4 * TRICKS_PER_HAND


def is_human(player_id: str) -> bool:
    """Bots carry `bot:<seat>` ids; everyone else is a signed-up player."""
    return not player_id.startswith("bot:")


@dataclass(frozen=True, slots=True)
class HandSeating:
    """Who held each seat during one hand."""

    holders: tuple[tuple[str, ...], ...]  # per seat, everyone who held it, in order
    bidders: tuple[str | None, ...]  # per seat, who held it when its bid was placed


def seating_from_moves(start_players: Sequence[str], moves: Iterable[Move]) -> list[HandSeating]:
    """The seating of every hand (index 0 = hand 1), from a game's moves in order.

    Every hand has exactly 52 cards played, so the hands are told apart by counting
    plays; a seat change after a hand's last card belongs to the next hand."""
    current = list(start_players)
    holders: list[list[str]] = [[p] for p in current]
    bidders: list[str | None] = [None] * 4
    played = 0
    hands: list[HandSeating] = []
    for move in moves:
        if isinstance(move, ReplacePlayer):
            current[move.seat] = move.player_id
            if move.player_id not in holders[move.seat]:
                holders[move.seat].append(move.player_id)
        elif isinstance(move, PlaceBid):
            bidders[move.seat] = current[move.seat]
        elif isinstance(move, PlayCard):
            played += 1
            if played == CARDS_PER_HAND:
                hands.append(_seating(holders, bidders))
                holders = [[p] for p in current]
                bidders = [None] * 4
                played = 0
    hands.append(_seating(holders, bidders))
    return hands


def _seating(holders: list[list[str]], bidders: list[str | None]) -> HandSeating:
    return HandSeating(tuple(tuple(h) for h in holders), tuple(bidders))


def seats_changed(game: Game) -> bool:
    """Whether any seat changed hands during the game (then only the moves tell who
    played which hand)."""
    return any(f.players is not None for f in game.finished) or tuple(game.players) != tuple(
        game.start_players
    )


@dataclass(slots=True)
class CareerLine:
    """One human's part in one finished game: the game summary and the statistics it adds."""

    player_id: str
    seat: Seat
    won: bool = False
    abandoned: bool = False
    hands: int = 0
    contracts_made: int = 0
    contracts_set: int = 0
    nil_bids: int = 0
    nils_made: int = 0
    blind_nil_bids: int = 0
    blind_nils_made: int = 0
    bags: int = 0
    score_for: int = 0
    score_against: int = 0
    partner_id: str | None = None
    opponent_ids: tuple[str, ...] = field(default_factory=tuple)

    @property
    def team(self) -> Team:
        """The team of the seat the player held."""
        return self.seat.team


def career_lines(
    game: Game,
    seating: Sequence[HandSeating] | None = None,
    human: Callable[[str], bool] = is_human,
) -> list[CareerLine]:
    """Every human's line of a finished game (in seat order, then order of sitting).

    `seating` comes from `seating_from_moves`; without it nobody changed seats (the
    players at the start held their seats throughout)."""
    if game.winner is None:
        raise ValueError("the game is not over")
    if seating is None:
        fixed = HandSeating(tuple((p,) for p in game.start_players), tuple(game.start_players))
        seating = [fixed] * len(game.finished)
    lines: dict[str, CareerLine] = {}
    everyone: list[list[str]] = [[] for _ in SEATS]  # per seat, every human who held it
    for seat in SEATS:
        for hand in seating:
            for player in hand.holders[seat]:
                if human(player) and player not in everyone[seat]:
                    everyone[seat].append(player)
                    lines[player] = CareerLine(player, seat)
    for finished, hand in zip(game.finished, seating, strict=False):
        state = finished.state
        for seat in SEATS:
            result = finished.results[seat.team]
            for player in {p for p in hand.holders[seat] if p in lines}:
                line = lines[player]
                line.hands += 1
                if result.target is not None and result.target >= 1:
                    if result.tricks >= result.target:
                        line.contracts_made += 1
                    else:
                        line.contracts_set += 1
                line.bags += result.bags
            bidder = hand.bidders[seat]
            bid = state.bids[seat]
            if bidder is not None and bidder in lines and bid is not None:
                made = state.tricks_won[seat] == 0
                line = lines[bidder]
                if bid.kind is BidKind.NIL:
                    line.nil_bids += 1
                    line.nils_made += made
                elif bid.kind is BidKind.BLIND_NIL:
                    line.blind_nil_bids += 1
                    line.blind_nils_made += made
    for line in lines.values():
        seat, team = line.seat, line.seat.team
        present = game.players[seat] == line.player_id
        line.abandoned = not present
        line.won = present and team is game.winner
        line.score_for = game.scores[team]
        line.score_against = game.scores[team.other]
        partners = everyone[seat.partner]
        line.partner_id = partners[-1] if partners else None
        line.opponent_ids = tuple(p for s in SEATS if s.team is not team for p in everyone[s])
    return list(lines.values())
