"""EXPERT's decisions depend only on its knowledge, its random source and its budget:
with a budget counted in playouts (no clock involved) a fixed seed gives the same
moves on every run and in every version whose search is meant to be unchanged.

The recorded moves below were produced by the search as first published; a change
that only makes playouts faster must keep them. A change meant to alter decisions
records them anew (and invalidates the tournament figures in docs/bots.md)."""

from __future__ import annotations

import hashlib
import random

from app.rules.bots import ExpertBudget, SeatKnowledge, decide
from app.rules.game import Game, Phase
from app.rules.levels import BotLevel
from app.rules.seats import SEATS

# Enough time that only the playout count ends a decision.
BY_PLAYOUTS = ExpertBudget(playouts=48, seconds=1e6, min_worlds=4, hard_factor=2.0)


def expert_moves(seed: int, decisions: int) -> list[str]:
    """The first `decisions` moves of a game of four EXPERT bots dealt from `seed`."""
    rng = random.Random(seed)
    game, _ = Game.start([s.bot_id for s in SEATS], seed=seed)
    moves: list[str] = []
    while game.phase is not Phase.GAME_OVER and len(moves) < decisions:
        seat = game.turn
        assert seat is not None
        move = decide(BotLevel.EXPERT, SeatKnowledge.of(game, seat), rng, BY_PLAYOUTS)
        moves.append(repr(move))
        game.apply(move)
    return moves


def digest(moves: list[str]) -> str:
    return hashlib.sha256("\n".join(moves).encode()).hexdigest()[:16]


def test_expert_with_a_playout_budget_replays_the_recorded_moves() -> None:
    moves = expert_moves(seed=11, decisions=80)
    assert len(moves) == 80
    assert digest(moves) == RECORDED


def test_expert_with_a_playout_budget_repeats_itself() -> None:
    assert expert_moves(seed=12, decisions=24) == expert_moves(seed=12, decisions=24)


RECORDED = "44e0605559498816"  # digest of the 80 moves, recorded at commit a63f9a6
