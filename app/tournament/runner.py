"""Duplicate bot games: each seed's deals played twice, the two levels swapping seats.

Dealing from a seed depends only on the seed and the hand number, so both games of
a pair get the same cards hand by hand: luck of the deal cancels out, and what is
left is the difference between the levels.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from app.rules.bidding import BidKind
from app.rules.bots import ExpertBudget, SeatKnowledge, budget_clock, decide
from app.rules.bots.expert import DEFAULT_BUDGET
from app.rules.game import Game, Phase
from app.rules.levels import BotLevel
from app.rules.record import Record, export_record
from app.rules.seats import SEATS, Seat, Team
from app.rules.simulate import MAX_HANDS


@dataclass
class SideStats:
    """One level's results over hands (counted for the team that level played)."""

    hands: int = 0
    contracts: int = 0  # hands with a target of at least 1
    made: int = 0
    set: int = 0
    nil_bids: int = 0  # NIL and BLIND_NIL
    nil_made: int = 0
    blind_nil_bids: int = 0
    bags: int = 0

    def add(self, other: SideStats) -> None:
        """Add `other`'s counts to these."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class GameOutcome:
    """One finished game of a tournament, from level A's side."""

    seed: int
    a_team: Team
    a_won: bool
    margin: int  # A's final score minus B's
    a: SideStats
    b: SideStats
    times: dict[BotLevel, list[float]] = field(default_factory=dict)  # seconds per decision
    record: Record | None = None


def seat_levels(a: BotLevel, b: BotLevel, a_team: Team) -> dict[Seat, BotLevel]:
    """Every seat's level when A plays `a_team`."""
    return {s: (a if s.team is a_team else b) for s in SEATS}


def play_game(
    seed: int,
    levels: dict[Seat, BotLevel],
    budget: ExpertBudget | None = None,
    rng_seed: int | None = None,
) -> tuple[Game, dict[BotLevel, list[float]]]:
    """A full game of bots of `levels`, dealt from `seed`; returns it and the time each
    decision took, by level. Every decision sees only its seat's knowledge."""
    rng = random.Random(seed if rng_seed is None else rng_seed)
    game, _ = Game.start([s.bot_id for s in SEATS], seed=seed)
    times: dict[BotLevel, list[float]] = {level: [] for level in set(levels.values())}
    clock = budget_clock(budget or DEFAULT_BUDGET)
    over = Phase.GAME_OVER
    while game.phase is not over:
        if game.hand.number > MAX_HANDS:
            raise RuntimeError(f"game {seed} did not end in {MAX_HANDS} hands")
        seat = game.turn
        assert seat is not None
        level = levels[seat]
        started = clock()
        move = decide(level, SeatKnowledge.of(game, seat), rng, budget)
        times[level].append(clock() - started)
        game.apply(move)
    return game, times


def side_stats(game: Game, team: Team) -> SideStats:
    """Per-hand counts of `team` over a finished game."""
    stats = SideStats()
    for finished in game.finished:
        result = finished.results[team]
        stats.hands += 1
        if result.target is not None and result.target >= 1:
            stats.contracts += 1
            if result.tricks >= result.target:
                stats.made += 1
            else:
                stats.set += 1
        stats.bags += result.bags
        for seat in team.seats:
            bid = finished.state.bids[seat]
            if bid is not None and bid.is_nil:
                stats.nil_bids += 1
                stats.blind_nil_bids += bid.kind is BidKind.BLIND_NIL
                stats.nil_made += finished.state.tricks_won[seat] == 0
    return stats


def play_pair(
    seed: int,
    a: BotLevel,
    b: BotLevel,
    budget: ExpertBudget | None = None,
    with_records: bool = False,
) -> list[GameOutcome]:
    """Both games of one duplicate pair: A as NORTH-SOUTH, then A as EAST-WEST."""
    outcomes = []
    for index, a_team in enumerate((Team.NORTH_SOUTH, Team.EAST_WEST)):
        levels = seat_levels(a, b, a_team)
        game, times = play_game(seed, levels, budget, rng_seed=seed * 2 + index)
        assert game.winner is not None
        outcomes.append(
            GameOutcome(
                seed=seed,
                a_team=a_team,
                a_won=game.winner is a_team,
                margin=game.scores[a_team] - game.scores[a_team.other],
                a=side_stats(game, a_team),
                b=side_stats(game, a_team.other),
                times=times,
                record=export_record(game, levels) if with_records else None,
            )
        )
    return outcomes
