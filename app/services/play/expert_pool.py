"""EXPERT thinking off the event loop, in a process pool.

A search takes tens of milliseconds of CPU; done on the event loop it would
hold up every other table served by the process. The pool gets only the
bot seat's `SeatKnowledge` (picklable, and all the bot may know) and returns
a move; the caller applies it through the ledger only if the table is still
at the version the move was computed for.

The workers die with the server, however it ends (app/processes.py), and a pool
whose worker was killed is replaced by a fresh one at the next decision.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from app.processes import die_with_parent, spawn_arguments
from app.rules.bots import ExpertBudget, SeatKnowledge, expert_move
from app.rules.moves import Move


def think(knowledge: SeatKnowledge, seed: int, budget: ExpertBudget) -> Move:
    """One EXPERT decision (runs in a pool worker)."""
    return expert_move(knowledge, random.Random(seed), budget)


class ExpertPool:
    """A lazily started process pool for EXPERT decisions; `workers` 0 thinks in a thread
    instead (still off the loop, but sharing the server process's CPU)."""

    def __init__(self, workers: int, expert_ms: int) -> None:
        self.workers = workers
        default = ExpertBudget()
        self.budget = ExpertBudget(
            # A longer think gets a proportionally larger playout cap.
            playouts=max(
                default.playouts, int(default.playouts * expert_ms / 1000 / default.seconds)
            ),
            seconds=expert_ms / 1000,
            min_worlds=default.min_worlds,
        )
        self._pool: Executor | None = None
        self._seeds = random.SystemRandom()

    async def decide(self, knowledge: SeatKnowledge) -> Move:
        """The EXPERT move for the knowledge's seat, computed off the event loop."""
        seed = self._seeds.getrandbits(64)
        if self.workers <= 0:
            return await asyncio.to_thread(think, knowledge, seed, self.budget)
        pool = self._pool
        if pool is None:
            pool = self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=die_with_parent,
                initargs=spawn_arguments(),
            )
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(pool, think, knowledge, seed, self.budget)
        except BrokenProcessPool:
            # A worker was killed (out of memory, by hand): the pool is unusable for good.
            # The bot driver retries this decision, on a fresh pool.
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            raise

    def close(self) -> None:
        """Stop the workers (pending decisions are dropped: the bot sweep redoes them)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
