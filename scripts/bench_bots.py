"""Benchmark the bot levels: decision time per level, and a game of four EXPERT bots.

    .venv/bin/python scripts/bench_bots.py [--games N] [--expert-games M] [--seed S]
        [--expert-ms MS]

Each level plays all four seats of N games (M for EXPERT); every decision is timed
in CPU seconds of this process (robust on a busy machine) and in wall-clock seconds.
Prints the machine calibration and the figures; asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

# Measure the checkout this script belongs to, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _measure import calibration

from app.rules.bots import ExpertBudget, SeatKnowledge, decide
from app.rules.game import Game, Phase
from app.rules.levels import BotLevel
from app.rules.seats import SEATS
from app.rules.simulate import game_seeds
from app.tournament.report import percentile


def play(
    level: BotLevel, seed: int, budget: ExpertBudget | None
) -> tuple[list[float], list[float], float, float]:
    """One game of four `level` bots: CPU and wall time per decision, and for the game."""
    rng = random.Random(seed)
    game, _ = Game.start([s.bot_id for s in SEATS], seed=seed)
    cpu: list[float] = []
    wall: list[float] = []
    game_cpu, game_wall = time.process_time(), time.perf_counter()
    while game.phase is not Phase.GAME_OVER:
        seat = game.turn
        assert seat is not None
        c, w = time.process_time(), time.perf_counter()
        move = decide(level, SeatKnowledge.of(game, seat), rng, budget)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
        game.apply(move)
    return cpu, wall, time.process_time() - game_cpu, time.perf_counter() - game_wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the bot levels.")
    parser.add_argument("--games", type=int, default=50, help="games for BASIC and STANDARD")
    parser.add_argument("--expert-games", type=int, default=2, help="games of four EXPERTs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--expert-ms", type=float, default=None, help="EXPERT time budget")
    args = parser.parse_args(argv)
    if args.games < 1 or args.expert_games < 0:
        parser.error("--games must be at least 1, --expert-games at least 0")
    budget = None
    if args.expert_ms is not None:
        budget = ExpertBudget(seconds=args.expert_ms / 1000)
    print(f'calibration (python3 -m timeit "sum(range(10000))"): {calibration()}')
    print(f"Python {sys.version.split()[0]}, seed {args.seed}")
    print(f"{'level':<10}{'games':>6}{'decisions':>11}{'p50 ms':>10}{'p95 ms':>10}"
          f"{'max ms':>10}{'wall p95':>10}{'game s':>9}{'game wall s':>13}")  # fmt: skip
    for level in BotLevel:
        count = args.expert_games if level is BotLevel.EXPERT else args.games
        if count == 0:
            continue
        cpu: list[float] = []
        wall: list[float] = []
        games_cpu: list[float] = []
        games_wall: list[float] = []
        for seed in game_seeds(count, args.seed):
            c, w, g, gw = play(level, seed, budget)
            cpu += c
            wall += w
            games_cpu.append(g)
            games_wall.append(gw)
        print(
            f"{level.value:<10}{count:>6}{len(cpu):>11}"
            f"{percentile(cpu, 0.5) * 1e3:>10.3f}{percentile(cpu, 0.95) * 1e3:>10.3f}"
            f"{max(cpu) * 1e3:>10.1f}{percentile(wall, 0.95) * 1e3:>10.3f}"
            f"{sum(games_cpu) / len(games_cpu):>9.2f}{sum(games_wall) / len(games_wall):>13.2f}"
        )
    print(
        "(CPU ms per decision; 'game s', 'game wall s': mean CPU and wall-clock seconds"
        " of one game of four such bots)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
