"""`spades simulate`, `spades tournament` and `spades replay`: bot games and records,
without a server."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TextIO

from tqdm import tqdm

from app.rules.bots import BudgetClock, PolicyName
from app.rules.record import ReplayError, export_record, replay_record
from app.rules.simulate import SimulationStats, game_seeds, play_game


def _simulate(args: argparse.Namespace) -> int:
    if args.games < 1:
        print("--games must be at least 1", file=sys.stderr)
        return 2
    out: TextIO = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout  # noqa: SIM115
    stats = SimulationStats()
    started = time.perf_counter()
    try:
        seeds = game_seeds(args.games, args.seed)
        for seed in tqdm(seeds, total=args.games, file=sys.stderr, unit="game", disable=None):
            game, moves = play_game(seed, PolicyName(args.policy))
            stats.add(game, moves)
            out.write(json.dumps(export_record(game), separators=(",", ":")) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    elapsed = time.perf_counter() - started
    _print_summary(stats, elapsed)
    return 0


def _print_summary(stats: SimulationStats, elapsed: float) -> None:
    lines = [
        f"games:          {stats.games}",
        f"hands:          {stats.hands}",
        f"hands per game: {stats.hands / stats.games:.2f}",
        *(f"wins {team.name + ':':<13} {wins}" for team, wins in stats.wins.items()),
        f"nil bids:       {stats.nil_bids}",
        f"blind nil bids: {stats.blind_nil_bids}",
        f"moves:          {stats.moves}",
        f"moves per sec:  {stats.moves / elapsed:,.0f} (records written included)",
    ]
    print("\n".join(lines), file=sys.stderr)


def _tournament(args: argparse.Namespace) -> int:
    from app.rules.bots import ExpertBudget
    from app.rules.levels import BotLevel
    from app.tournament import run_tournament

    if args.games < 1 or args.workers < 1:
        print("--games and --workers must be at least 1", file=sys.stderr)
        return 2
    default = ExpertBudget()
    budget = ExpertBudget(
        playouts=args.expert_playouts or default.playouts,
        seconds=(args.expert_ms / 1000) if args.expert_ms is not None else default.seconds,
        clock=BudgetClock(args.clock),
    )
    out: TextIO | None = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    started = time.perf_counter()
    try:
        totals = run_tournament(
            BotLevel(args.a), BotLevel(args.b), args.games, args.seed, args.workers, out, budget
        )
    finally:
        if out is not None:
            out.close()
    print(totals.table())
    print(f"\nwall time: {time.perf_counter() - started:.1f} s with {args.workers} worker(s)")
    return 0


def _replay(args: argparse.Namespace) -> int:
    count = 0
    with open(args.file, encoding="utf-8") as source:
        for line_number, line in enumerate(source, start=1):
            if not line.strip():
                continue
            try:
                replay_record(json.loads(line))
            except (ReplayError, json.JSONDecodeError) as exc:
                print(f"{args.file}:{line_number}: {exc}", file=sys.stderr)
                return 1
            count += 1
    print(f"{count} records replayed, all correct", file=sys.stderr)
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register simulate, tournament and replay."""
    sim = commands.add_parser("simulate", help="bot-vs-bot games as JSON Lines records")
    sim.add_argument("--games", type=int, required=True)
    sim.add_argument("--seed", type=int, default=None)
    sim.add_argument("--policy", choices=[p.value for p in PolicyName], default="basic")
    sim.add_argument("--out", default=None, help="file to write (default: stdout)")
    sim.set_defaults(run=_simulate)

    levels = ["BASIC", "STANDARD", "EXPERT"]
    tour = commands.add_parser(
        "tournament", help="duplicate games between two bot levels, then their statistics"
    )
    tour.add_argument("--a", choices=levels, type=str.upper, required=True, help="level A")
    tour.add_argument("--b", choices=levels, type=str.upper, required=True, help="level B")
    tour.add_argument(
        "--games", type=int, required=True, help="duplicate pairs: each seed is played twice"
    )
    tour.add_argument("--seed", type=int, default=None)
    tour.add_argument("--workers", type=int, default=1, help="processes playing games")
    tour.add_argument("--out", default=None, help="JSON Lines records (with botLevels)")
    tour.add_argument("--expert-ms", type=float, default=None, help="EXPERT time per decision")
    tour.add_argument("--expert-playouts", type=int, default=None, help="EXPERT playouts cap")
    tour.add_argument(
        "--clock",
        choices=[c.value for c in BudgetClock],
        default=BudgetClock.CPU.value,
        help="what EXPERT's time budget and the decision times count: the deciding "
        "process's CPU time (default: the same on a loaded machine as on an idle core) "
        "or wall-clock time (as the server does)",
    )
    tour.set_defaults(run=_tournament)

    rep = commands.add_parser("replay", help="check every record of a JSON Lines file")
    rep.add_argument("file")
    rep.set_defaults(run=_replay)
