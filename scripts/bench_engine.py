"""Benchmark the pure rules engine on one core.

Measures validated moves per second and full games per second of bot-vs-bot
play (bot choices and legal-move generation included) for the basic and the
random policy, then the extra cost per move of projecting the game for the
five viewers (four seats and a spectator) and of taking a snapshot.

    .venv/bin/python scripts/bench_engine.py [--games N] [--seed S]

Prints figures only; it asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.rules.bots import POLICIES, PolicyName  # noqa: E402
from app.rules.game import Game, Phase  # noqa: E402
from app.rules.seats import SEATS, Seat  # noqa: E402
from app.rules.serialize import game_to_data  # noqa: E402
from app.rules.simulate import game_seeds, play_game  # noqa: E402
from app.rules.views import project  # noqa: E402

VIEWERS: tuple[Seat | None, ...] = (*SEATS, None)


def bench_play(seeds: list[int], policy: PolicyName) -> tuple[int, int, int, float]:
    """Play every game; return games, hands, moves and the elapsed seconds."""
    hands = moves = 0
    started = time.perf_counter()
    for seed in seeds:
        game, count = play_game(seed, policy)
        hands += len(game.finished)
        moves += count
    return len(seeds), hands, moves, time.perf_counter() - started


def bench_per_move(seeds: list[int], extra: Callable[[Game], object]) -> tuple[int, float]:
    """Play the games with the basic policy, timing only `extra(game)` after each move."""
    choose = POLICIES[PolicyName.BASIC]
    moves = 0
    spent = 0.0
    clock = time.perf_counter
    for seed in seeds:
        rng = random.Random(seed)
        game, _ = Game.start([s.bot_id for s in SEATS], seed=seed)
        while game.phase is not Phase.GAME_OVER:
            seat = game.turn
            assert seat is not None
            game.apply(choose(game, seat, rng))
            moves += 1
            t0 = clock()
            extra(game)
            spent += clock() - t0
    return moves, spent


def project_all(game: Game) -> None:
    """The five projections the server computes after a move."""
    for viewer in VIEWERS:
        project(game, viewer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=300, help="games per measurement")
    parser.add_argument("--seed", type=int, default=1, help="master seed of the games")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    seeds = list(game_seeds(args.games, args.seed))

    print(f"engine benchmark: {args.games} games per run, seed {args.seed}, one core")
    print(f"python {sys.version.split()[0]}")
    basic_rate = 0.0
    for policy in PolicyName:
        games, hands, moves, elapsed = bench_play(seeds, policy)
        rate = moves / elapsed
        if policy is PolicyName.BASIC:
            basic_rate = rate
        print(
            f"{policy.value:>6} play: {rate:>10,.0f} moves/s  {games / elapsed:>8,.1f} games/s"
            f"  ({games} games, {hands} hands, {moves} moves in {elapsed:.2f} s)"
        )

    extras: tuple[tuple[str, Callable[[Game], object]], ...] = (
        ("projection (5 viewers)", project_all),
        ("snapshot (game_to_data)", game_to_data),
    )
    for label, extra in extras:
        moves, spent = bench_per_move(seeds, extra)
        per_move = spent / moves
        combined = 1 / (1 / basic_rate + per_move)
        print(
            f"{label:<24} {per_move * 1e6:>8.1f} us/move"
            f"  ({1 / per_move:>10,.0f}/s alone; basic play + this: {combined:,.0f} moves/s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
