"""Helpers for the game-end tests of the move writers: a table stored one move before
its game ends, the careers as stored, and a process that makes that last move (run by
the SIGKILL tests as `python -m tests.store.game_ends URL TABLE SEED PLAYERS... --hang
MARKER`)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import time
from asyncio import selector_events
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import select

from app.broker.memory import MemoryBroker
from app.rules.bots import basic_move
from app.rules.game import Game, Phase
from app.rules.moves import Move
from app.rules.rating import Skill
from app.services.accounts.results import game_ends, ratings_ahead
from app.services.play.moves import apply_move
from app.services.tables.change import Change
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import Occupant, TableSnapshot, TableStatus
from app.store.career import HISTORY, RATINGS, RESULTS, STATS, SUMMARIES, GameEnd
from app.store.db import Database
from tests.support.tables import table_snapshot


def last_move(players: Sequence[str], seed: int) -> tuple[Game, Move]:
    """A game of four BASIC bots played to one move before its end: (game, that move)."""
    rng = random.Random(seed)
    game, _ = Game.start(list(players), seed=seed)
    while True:
        assert game.turn is not None
        move = basic_move(game, game.turn, rng)
        probe = game.copy()
        probe.apply(move)
        if probe.phase is Phase.GAME_OVER:
            return game, move
        game.apply(move)


async def table_at_last_move(
    db: Database, table_id: str, players: Sequence[str], seed: int, rated: bool
) -> Move:
    """Store a playing table of `players` one move before its game ends; that move."""
    game, move = last_move(players, seed)
    table = table_snapshot(
        id=table_id,
        host_id=players[0],
        host_name=players[0],
        occupants=tuple(Occupant(p, p) for p in players),
        status=TableStatus.PLAYING,
        game=game,
        version=100,
        rated=rated,
    )
    await Ledger(db, MemoryBroker()).create(table)
    return move


def careers_ledger(db: Database) -> Ledger:
    """A ledger that writes careers at each game end and reads a rated game's ratings
    ahead of it, as the server's does."""
    ledger = Ledger(db, MemoryBroker())
    ledger.on_finish = game_ends(ledger.moves)
    ledger.prepare_finish = ratings_ahead(db)
    return ledger


# asyncio's TCP transport (private, not in the stubs): every socket write goes through it.
_TRANSPORT: Any = vars(selector_events)["_SelectorSocketTransport"]


@contextmanager
def round_trips() -> Iterator[list[int]]:
    """Counts the requests this process sends over TCP meanwhile (the one-item list):
    asyncpg writes each request at once, then waits for its answer, and with the memory
    broker PostgreSQL is the only peer (as `scripts/bench_profiles.py` counts them)."""
    count = [0]
    original = _TRANSPORT.write

    def write(transport: Any, data: Any) -> None:
        count[0] += 1
        original(transport, data)

    _TRANSPORT.write = write
    try:
        yield count
    finally:
        _TRANSPORT.write = original


async def finish(ledger: Ledger, table_id: str, move: Move) -> TableSnapshot:
    """Make the last move of the table's game; the table after it."""

    def decide(table: TableSnapshot) -> Change:
        return apply_move(table, move)

    _, after = await ledger.change(table_id, decide)
    return after


async def stored(db: Database) -> dict[str, list[dict[str, Any]]]:
    """Every row of the career tables, as dicts, in key order."""
    tables = {
        "results": (RESULTS, RESULTS.c.seq),
        "stats": (STATS, STATS.c.player_id),
        "ratings": (RATINGS, RATINGS.c.player_id),
        "history": (HISTORY, HISTORY.c.seq, HISTORY.c.player_id),
        "summaries": (SUMMARIES, SUMMARIES.c.seq, SUMMARIES.c.player_id),
    }
    out = {}
    async with db.read() as session:
        connection = await session.connection()
        for name, (table, *order) in tables.items():
            rows = await connection.execute(select(table).order_by(*order))
            out[name] = [dict(r._mapping) for r in rows]
    return out


def hanging(end: GameEnd, marker: Path) -> GameEnd:
    """`end` whose new ratings, once the current ones are read, are never computed: it
    marks the moment (a file) and waits to be killed."""

    def rate(before: Mapping[str, Skill]) -> dict[str, Skill]:
        marker.touch()
        time.sleep(600)
        raise AssertionError("not killed")

    return dataclasses.replace(end, rate=rate)


async def _main(args: argparse.Namespace) -> None:
    db = Database(args.url)
    try:
        ledger = careers_ledger(db)
        describe = ledger.on_finish
        assert describe is not None
        if args.hang is not None:
            marker = Path(args.hang)

            async def hang(table: TableSnapshot, change: Change) -> GameEnd | None:
                end = await describe(table, change)
                return None if end is None else hanging(end, marker)

            ledger.on_finish = hang
        _, move = last_move(args.players, args.seed)
        await finish(ledger, args.table, move)
    finally:
        await db.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("table")
    parser.add_argument("seed", type=int)
    parser.add_argument("players", nargs=4)
    parser.add_argument("--hang", default=None, help="a file to create, then wait forever")
    asyncio.run(_main(parser.parse_args()))
