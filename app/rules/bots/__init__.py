"""Bots: the policies that decide a seat's move, by level (docs/rules.md, "Bots", "Bot levels").

`decide(level, knowledge, rng)` is the one entry point of the leveled bots; each
level reads only the seat's `SeatKnowledge`. `basic_move` (the rulebook's
reference bot, seed-faithful) and `random_move` keep their game-based form for
`spades simulate` and the tests.
"""

from __future__ import annotations

import random

from app.rules.bots.basic import (
    POLICIES,
    Policy,
    PolicyName,
    basic_bid,
    basic_decide,
    basic_move,
    exchange_cards,
    pass_for,
    random_move,
)
from app.rules.bots.expert import BudgetClock, ExpertBudget, budget_clock, expert_move
from app.rules.bots.knowledge import SeatKnowledge
from app.rules.bots.standard import standard_move
from app.rules.game import Game
from app.rules.levels import BotLevel
from app.rules.moves import Move
from app.rules.seats import Seat


def decide(
    level: BotLevel,
    knowledge: SeatKnowledge,
    rng: random.Random,
    budget: ExpertBudget | None = None,
) -> Move:
    """The move of a bot of `level` that knows `knowledge` (its seat must be on turn)."""
    if level is BotLevel.STANDARD:
        return standard_move(knowledge)
    if level is BotLevel.EXPERT:
        return expert_move(knowledge, rng, budget)
    return basic_decide(knowledge, rng)


def level_move(level: BotLevel, game: Game, seat: Seat, rng: random.Random) -> Move:
    """The move of a bot of `level` in `seat`: built from that seat's knowledge only."""
    return decide(level, SeatKnowledge.of(game, seat), rng)


__all__ = [
    "POLICIES",
    "BotLevel",
    "BudgetClock",
    "ExpertBudget",
    "Policy",
    "PolicyName",
    "SeatKnowledge",
    "basic_bid",
    "basic_decide",
    "basic_move",
    "budget_clock",
    "decide",
    "exchange_cards",
    "expert_move",
    "level_move",
    "pass_for",
    "random_move",
    "standard_move",
]
