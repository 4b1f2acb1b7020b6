"""Benchmark the pure rules engine on one core.

Measures validated moves per second and full games per second of bot-vs-bot
play (bot choices and legal-move generation included) for the basic and the
random policy, then the extra cost per move of projecting the game for the
five viewers (four seats and a spectator) and of taking a snapshot.

    .venv/bin/python scripts/bench_engine.py [--games N] [--seed S] [--repeat R]

Times are CPU seconds of this process (robust on a busy machine), best of R
runs. Prints figures only; it asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

# Measure the checkout this script belongs to, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.rules.bots import POLICIES, PolicyName
from app.rules.game import Game, Phase
from app.rules.seats import SEATS, Seat
from app.rules.serialize import game_to_data, game_to_json
from app.rules.simulate import game_seeds, play_game
from app.rules.views import project

VIEWERS: tuple[Seat | None, ...] = (*SEATS, None)
Hook = Callable[[Game], object]


def best_time(repeat: int, run: Callable[[], tuple[int, int, int]]) -> tuple[int, int, int, float]:
    """Run `run` `repeat` times; its counts and its shortest CPU time."""
    best = float("inf")
    counts = (0, 0, 0)
    for _ in range(repeat):
        started = time.process_time()
        counts = run()
        best = min(best, time.process_time() - started)
    return (*counts, best)


def play_all(seeds: list[int], policy: PolicyName) -> tuple[int, int, int]:
    """Play every game with `play_game`; return games, hands and moves."""
    hands = moves = 0
    for seed in seeds:
        game, count = play_game(seed, policy)
        hands += len(game.finished)
        moves += count
    return len(seeds), hands, moves


def play_with_hook(seeds: list[int], hook: Hook | None) -> tuple[int, int, int]:
    """The loop of `play_game` (basic policy), calling `hook(game)` after every move."""
    choose = POLICIES[PolicyName.BASIC]
    hands = moves = 0
    for seed in seeds:
        rng = random.Random(seed)
        game, _ = Game.start([s.bot_id for s in SEATS], seed=seed)
        while game.phase is not Phase.GAME_OVER:
            seat = game.turn
            assert seat is not None
            game.apply(choose(game, seat, rng))
            moves += 1
            if hook is not None:
                hook(game)
        hands += len(game.finished)
    return len(seeds), hands, moves


def project_all(game: Game) -> None:
    """The five projections the server computes after a move."""
    for viewer in VIEWERS:
        project(game, viewer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the pure rules engine on one core.")
    parser.add_argument("--games", type=int, default=300, help="games per run (default 300)")
    parser.add_argument("--seed", type=int, default=1, help="master seed of the games")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, best kept")
    args = parser.parse_args(argv)
    if args.games < 1 or args.repeat < 1:
        parser.error("--games and --repeat must be at least 1")
    seeds = list(game_seeds(args.games, args.seed))

    print(
        f"engine benchmark: {args.games} games per run, seed {args.seed}, best of "
        f"{args.repeat} runs, CPU time of one core, Python {sys.version.split()[0]}"
    )
    for policy in PolicyName:
        games, hands, moves, spent = best_time(args.repeat, partial(play_all, seeds, policy))
        print(
            f"{policy.value + ' play:':<13} {moves / spent:>9,.0f} moves/s"
            f"  {games / spent:>7,.1f} games/s"
            f"  ({games} games, {hands} hands, {moves} moves in {spent:.2f} s)"
        )

    # The extras cost far more than a move: measure them on a tenth of the games.
    sample = seeds[: max(1, len(seeds) // 10)]
    *_, moves, plain = best_time(args.repeat, partial(play_with_hook, sample, None))
    extras: tuple[tuple[str, Hook], ...] = (
        ("projection, 5 viewers:", project_all),
        ("snapshot, game_to_data:", game_to_data),
        ("snapshot, game_to_json:", game_to_json),  # what the server stores per move
    )
    for label, hook in extras:
        *_, spent = best_time(args.repeat, partial(play_with_hook, sample, hook))
        extra = max(spent - plain, 0.0) / moves
        print(
            f"{label:<24} {extra * 1e6:>7.1f} us per move"
            f"  (basic play with it: {moves / spent:,.0f} moves/s; {len(sample)} games)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
