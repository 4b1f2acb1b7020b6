"""Every bot level only ever makes legal moves; EXPERT keeps to its budget."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.rules.bots import (
    BotLevel,
    BudgetClock,
    ExpertBudget,
    SeatKnowledge,
    decide,
    expert,
    random_move,
)
from app.rules.bots.expert import expert_play
from app.rules.game import Game, Phase
from app.rules.moves import PlayCard
from app.rules.seats import SEATS
from tests.rules.test_properties import play_until

SEEDS = st.integers(min_value=0, max_value=2**63 - 1)
LEVELS = st.sampled_from(list(BotLevel))
SMALL = ExpertBudget(playouts=16, seconds=5.0, min_worlds=1)


@settings(max_examples=12, deadline=None)
@given(SEEDS, st.lists(LEVELS, min_size=4, max_size=4), st.integers(min_value=0, max_value=3))
def test_every_level_only_makes_legal_moves(seed: int, levels: list[BotLevel], chaos: int) -> None:
    """A mixed game (with some uniformly random moves thrown in, for odd situations such
    as nil and blind nil bids): every bot move is accepted by the rules engine."""
    rng = random.Random(seed)
    game, _ = Game.start([s.bot_id for s in SEATS], seed=seed)
    moves = 0
    while game.phase is not Phase.GAME_OVER and moves < 700:
        seat = game.turn
        assert seat is not None
        if chaos and rng.randrange(10) < chaos:
            game.apply(random_move(game, seat, rng))
        else:
            move = decide(levels[seat], SeatKnowledge.of(game, seat), rng, SMALL)
            if isinstance(move, PlayCard):
                assert move.card in game.legal_plays(seat)
            game.apply(move)  # a RuleError here fails the test
        moves += 1


@settings(max_examples=15, deadline=None)
@given(SEEDS, st.integers(min_value=0, max_value=300))
def test_expert_respects_its_playout_budget(seed: int, moves: int) -> None:
    game = play_until(seed, moves)
    seat = game.turn
    if game.phase is not Phase.PLAYING or seat is None:
        return
    k = SeatKnowledge.of(game, seat)
    counted: list[int] = []
    budget = ExpertBudget(playouts=30, seconds=60.0, min_worlds=1)
    from app.rules.bots import playout

    original = playout.Playout.finish

    def finish(self: playout.Playout) -> None:
        counted.append(1)
        original(self)

    playout.Playout.finish = finish  # type: ignore[method-assign]
    try:
        card = expert_play(k, random.Random(seed), budget)
    finally:
        playout.Playout.finish = original  # type: ignore[method-assign]
    assert card in k.legal
    assert len(counted) <= 30


def _three_way_choice() -> SeatKnowledge:
    """A seat on turn to play with at least three legal cards."""
    game = play_until(21, 60)
    while game.phase is not Phase.PLAYING or len(game.legal_plays(game.turn or SEATS[0])) < 3:
        game = play_until(game.seed + 1, 60)
    assert game.turn is not None
    return SeatKnowledge.of(game, game.turn)


def _ticking(step: float) -> tuple[list[float], Callable[[], float]]:
    """A fake clock advancing `step` seconds per reading, and its readings so far."""
    now = [0.0]

    def read() -> float:
        now[0] += step
        return now[0]

    return now, read


def _counting_deals(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the deals EXPERT samples (one entry per deal)."""
    worlds: list[int] = []
    original = expert.sample_world

    def counting(*args: Any, **kwargs: Any) -> Any:
        worlds.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(expert, "sample_world", counting)
    return worlds


def test_expert_respects_its_time_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a huge playout cap, the decision stops at the clock: once the deadline has
    passed it samples no further deal (a fake clock advancing 1 ms per reading)."""
    k = _three_way_choice()
    monkeypatch.setattr(expert, "clock", _ticking(0.001)[1])
    worlds = _counting_deals(monkeypatch)
    budget = ExpertBudget(playouts=1_000_000, seconds=0.010, min_worlds=1)
    card = expert.expert_play(k, random.Random(1), budget)
    assert card in k.legal
    # One clock reading per deal before the deadline check: about 10 deals in 10 ms.
    assert 1 <= len(worlds) <= 11


def test_expert_on_a_cpu_budget_ignores_time_it_did_not_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CPU-clock budget (tournaments) counts the deciding thread's CPU time: a wall
    clock leaping a second per reading (a loaded machine) does not cut the search
    short, and the CPU clock ends it as the wall clock would on an idle core."""
    k = _three_way_choice()
    wall, leaping_wall = _ticking(1.0)
    monkeypatch.setattr(expert, "clock", leaping_wall)
    monkeypatch.setattr(expert.time, "thread_time", _ticking(0.001)[1])
    worlds = _counting_deals(monkeypatch)
    budget = ExpertBudget(playouts=1_000_000, seconds=0.010, min_worlds=1, clock=BudgetClock.CPU)
    card = expert.expert_play(k, random.Random(1), budget)
    assert card in k.legal
    assert 5 <= len(worlds) <= 11
    assert wall == [0.0]  # the wall clock was never read
