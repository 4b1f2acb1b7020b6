"""`spades tournament`: duplicate games between two bot levels, and their statistics."""

from __future__ import annotations

import json
import multiprocessing
import sys
from collections.abc import Iterator
from typing import TextIO

from tqdm import tqdm

from app.rules.bots import ExpertBudget
from app.rules.levels import BotLevel
from app.rules.simulate import game_seeds
from app.tournament.report import Totals, percentile, wilson
from app.tournament.runner import GameOutcome, SideStats, play_pair

_Job = tuple[int, BotLevel, BotLevel, ExpertBudget | None, bool]


def _run_pair(job: _Job) -> list[GameOutcome]:
    seed, a, b, budget, with_records = job
    return play_pair(seed, a, b, budget, with_records)


def run_tournament(
    a: BotLevel,
    b: BotLevel,
    pairs: int,
    seed: int | None = None,
    workers: int = 1,
    out: TextIO | None = None,
    budget: ExpertBudget | None = None,
    progress: bool = True,
) -> Totals:
    """Play `pairs` duplicate pairs (2 games each); write records to `out` if given.

    With several workers the games run in a process pool; records are written in
    the order of the seeds whatever order the workers finish in."""
    totals = Totals(a, b)
    jobs: list[_Job] = [(s, a, b, budget, out is not None) for s in game_seeds(pairs, seed)]
    bar = tqdm(total=pairs * 2, file=sys.stderr, unit="game", disable=not progress or None)
    try:
        for outcomes in _results(jobs, workers):
            for outcome in outcomes:
                totals.add(outcome)
                if out is not None and outcome.record is not None:
                    out.write(json.dumps(outcome.record, separators=(",", ":")) + "\n")
            bar.update(len(outcomes))
    finally:
        bar.close()
    return totals


def _results(jobs: list[_Job], workers: int) -> Iterator[list[GameOutcome]]:
    if workers <= 1:
        yield from map(_run_pair, jobs)
        return
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        yield from pool.imap(_run_pair, jobs)


__all__ = ["GameOutcome", "SideStats", "Totals", "percentile", "run_tournament", "wilson"]
