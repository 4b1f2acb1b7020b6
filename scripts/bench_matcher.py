"""Benchmark quick play's matcher (app/rules/matchmaking.py): the CPU of one wave at N
searching tickets, the pure function alone (no database, no network).

Each wave is made of N tickets, half rated, ratings drawn around 1500 (sd 250), some
blocks between random players, in two shapes:

- burst: every ticket new (waited 0-5 s: narrow windows, no bots yet), as when a crowd
  presses Play at once;
- steady: tickets that waited 0-30 s (wider windows, unrated ones past the bot wait
  filled with bots), as a wave finds them on a busy server.

    .venv/bin/python scripts/bench_matcher.py [--tickets 1000,10000,100000] [--repeat 5]

Times are CPU seconds of this process (robust on a busy machine), best of R runs, with
the machine's calibration. Prints figures only; it asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

# Measure the checkout this script belongs to, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadtest.measure import calibration_line, calibration_us

from app.rules.matchmaking import Match, MatchPolicy, Ticket, match_tickets

NOW = 1_000_000.0
SHAPES = {"burst": 5.0, "steady": 30.0}  # the longest wait of a shape's tickets


def wave(count: int, longest_wait: float, seed: int) -> tuple[list[Ticket], list[tuple[str, str]]]:
    """`count` tickets and count/5 blocks between random players."""
    rng = random.Random(seed)
    tickets = [
        Ticket(
            id=f"t{i}",
            player_id=f"p{i}",
            rated=rng.random() < 0.5,
            started_at=NOW - rng.uniform(0, longest_wait),
            rating=round(rng.gauss(1500, 250)),
        )
        for i in range(count)
    ]
    blocks = [(f"p{rng.randrange(count)}", f"p{rng.randrange(count)}") for _ in range(count // 5)]
    return tickets, blocks


def best_cpu(repeat: int, run: object) -> tuple[float, list[Match]]:
    """The shortest CPU time of `repeat` runs, and the last run's answer."""
    assert callable(run)
    best, answer = float("inf"), []
    for _ in range(repeat):
        started = time.process_time()
        answer = run()
        best = min(best, time.process_time() - started)
    return best, answer


def main() -> None:
    """Parse the flags, time each size and shape, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tickets", default="1000,10000,100000", help="wave sizes")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(calibration_line(calibration_us()))
    policy = MatchPolicy()
    print(f"{'tickets':>8} {'shape':>7} {'CPU ms/wave':>12} {'µs/ticket':>10} {'tables':>7} "
          f"{'with bots':>9} {'seated':>7}")  # fmt: skip
    for count in (int(n) for n in args.tickets.split(",")):
        for shape, longest in SHAPES.items():
            tickets, blocks = wave(count, longest, args.seed)
            seconds, matches = best_cpu(
                args.repeat, lambda t=tickets, b=blocks: match_tickets(t, b, NOW, policy)
            )
            bots = sum(1 for m in matches if None in m.seats)
            seated = sum(len(m.tickets) for m in matches)
            print(
                f"{count:>8} {shape:>7} {seconds * 1000:>12.1f} {seconds / count * 1e6:>10.1f} "
                f"{len(matches):>7} {bots:>9} {seated:>7}"
            )


if __name__ == "__main__":
    main()
