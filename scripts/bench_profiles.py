"""Benchmark careers on PostgreSQL: leaderboard and profile pages on a large database, and
the extra cost of a game's end (its ratings, statistics and summaries).

    .venv/bin/python scripts/bench_profiles.py            # 10,000 players, 100,000 games
    .venv/bin/python scripts/bench_profiles.py --full     # 100,000 players, 1,000,000 games
    .venv/bin/python scripts/bench_profiles.py --players N --games M [--samples S]

It creates (and afterwards drops) its own database on SPADES_BENCH_PG (default
postgresql+asyncpg://postgres@127.0.0.1:5432/postgres's server), applies the migrations,
and fills it with set-based SQL (generate_series): players, finished tables, one game
summary per seat, statistics and ratings. Then it times, through the service code and
its real SQL (no HTTP/GraphQL layer):

- `leaderboard` pages of 20: the first, and pages deep in the list (cursor from a page
  read before);
- `profile` (profile + stats + rating) and its first `games` page, then a later page;
- a game's final move through the Ledger, its table loaded before (a live table is in
  the ledger's cache): without careers (as before them) against with them (the same
  one-trip move writer), unrated, rated with its ratings read ahead (when the table was
  loaded) and rated without (read by the final move), and through the session path (the
  ORM transaction); and the read ahead itself; besides its time, what is robust to the
  machine's load: the CPU it took here and in its PostgreSQL backends, and its round
  trips (requests sent to PostgreSQL).

Prints p50/p95 in milliseconds beside the machine calibration; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import time
import uuid
from asyncio import selector_events
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Measure the checkout this script belongs to, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg  # type: ignore[import-untyped]
from _measure import calibration

from app.broker.memory import MemoryBroker
from app.rules.bots import POLICIES, PolicyName
from app.rules.game import Game, Phase
from app.rules.moves import Move
from app.rules.serialize import game_to_json
from app.services.accounts.auth import Player
from app.services.accounts.profiles import ProfileService
from app.services.accounts.results import game_ends, ratings_ahead
from app.services.play.moves import apply_move
from app.services.tables.change import Change
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import TableSnapshot
from app.store.db import Database
from app.store.migrate import upgrade
from app.store.postgres_writer import KNOWN_RATINGS, KnownRatings, PostgresMoveWriter

SERVER = "postgresql://postgres@127.0.0.1:5432"


async def fill(url: str, players: int, games: int) -> None:
    """Players, finished games (tables, results, four summaries each), statistics and
    ratings, all with set-based SQL."""
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(
            """
            INSERT INTO players (id, username, username_key, password_hash, created_at)
            SELECT 'p' || i, 'user' || i, 'user' || i, 'x', 1.7e9 + i
            FROM generate_series(1, $1) AS i
            """,
            players,
        )
        await connection.execute(
            """
            INSERT INTO tables (id, name, host_id, visibility, join_policy, spectating, status,
                                version, seed, game_state, created_at, updated_at, rated)
            SELECT 't' || g, NULL, 'p' || ((g * 4) % $2 + 1), 'PUBLIC', 'OPEN', true,
                   'FINISHED', 300, NULL, NULL, 1.7e9 + g, 1.7e9 + g, g % 2 = 0
            FROM generate_series(1, $1) AS g
            """,
            games,
            players,
        )
        await connection.execute(
            """
            INSERT INTO game_results (table_id, seq, finished_at, rated)
            SELECT 't' || g, g, 1.7e9 + g, g % 2 = 0 FROM generate_series(1, $1) AS g
            """,
            games,
        )
        # Four distinct players per game: p(base), p(base+1), ... with base = 4g mod N.
        await connection.execute(
            """
            INSERT INTO game_summaries (player_id, seq, table_id, finished_at, rated, seat,
                won, abandoned, score_for, score_against, partner_id, opponents,
                rating_before, rating_after)
            SELECT 'p' || ((g * 4 + k) % $2 + 1), g, 't' || g, 1.7e9 + g, g % 2 = 0,
                   (ARRAY['NORTH','EAST','SOUTH','WEST'])[k + 1], (k + g) % 2 = 0, false,
                   250, 120, 'p' || ((g * 4 + (k + 2) % 4) % $2 + 1),
                   'p' || ((g * 4 + (k + 1) % 4) % $2 + 1) || ','
                       || 'p' || ((g * 4 + (k + 3) % 4) % $2 + 1),
                   CASE WHEN g % 2 = 0 THEN 1500 END, CASE WHEN g % 2 = 0 THEN 1510 END
            FROM generate_series(1, $1) AS g, generate_series(0, 3) AS k
            """,
            games,
            players,
        )
        await connection.execute(
            """
            INSERT INTO player_stats
            SELECT player_id, count(*), count(*) FILTER (WHERE won), 0, count(*) * 6,
                   count(*) * 3, count(*) * 3, count(*) / 5, count(*) / 10, 0, 0, count(*) * 4
            FROM game_summaries GROUP BY player_id
            """
        )
        await connection.execute(
            """
            INSERT INTO ratings (player_id, username_key, mu, sigma, value, deviation, games,
                                 seq, listed, board_value, board_games)
            SELECT 'p' || i, 'user' || i, r.mu, 2.5, round(1500 + 42 * (r.mu - 25)), 105,
                   r.games, 0, r.games >= 10, -round(1500 + 42 * (r.mu - 25)), -r.games
            FROM generate_series(1, $1) AS i,
                 LATERAL (SELECT 25 + 6 * (random() + random() + random() - 1.5) AS mu,
                                 (i % 40) + (4 * $2 / $1) / 2 AS games) AS r
            """,
            players,
            games,
        )
        await connection.execute("UPDATE counters SET value = $1 WHERE name = 'games'", games)
        await connection.execute("ANALYZE")
    finally:
        await connection.close()


async def timed(samples: int, run: Callable[[int], Awaitable[Any]]) -> tuple[float, float]:
    """p50 and p95 in ms of `samples` calls of `run(i)` (after a few warm-up calls)."""
    for i in range(5):
        await run(i)
    times = []
    for i in range(samples):
        start = time.perf_counter()
        await run(i)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def final_positions(count: int) -> list[tuple[Game, Move]]:
    """Bot games played to their last move: (the game before it, that move)."""
    out = []
    choose = POLICIES[PolicyName.BASIC]
    for seed in range(count):
        rng = random.Random(seed)
        game, _ = Game.start(["p1", "p2", "p3", "p4"], seed=seed)
        while True:
            seat = game.turn
            assert seat is not None
            move = choose(game, seat, rng)
            probe = game.copy()
            probe.apply(move)
            if probe.phase is Phase.GAME_OVER:
                out.append((game, move))
                break
            game.apply(move)
    return out


async def store_table(db: Database, table_id: str, game: Game, rated: bool) -> None:
    """A playing table at its last move, straight into the database."""
    async with db.write() as session:
        connection = await session.connection()
        await connection.exec_driver_sql(
            "INSERT INTO tables (id, name, host_id, visibility, join_policy, spectating, status,"
            " version, seed, game_state, created_at, updated_at, rated) VALUES"
            " ($1, NULL, 'p1', 'PUBLIC', 'OPEN', true, 'PLAYING', 100, NULL, $2, 0, 0, $3)",
            (table_id, game_to_json(game), rated),
        )
        for seat, player in zip(("NORTH", "EAST", "SOUTH", "WEST"), game.players, strict=True):
            await connection.exec_driver_sql(
                "INSERT INTO seats (table_id, seat, player_id) VALUES ($1, $2, $3)",
                (table_id, seat, player),
            )


@dataclass
class Variant:
    """One way of making a table's final move, and the tables it makes it on."""

    label: str
    ledger: Ledger
    careers: bool
    rated: bool
    ahead: bool  # a rated game's ratings read ahead, when its table is loaded
    tables: list[tuple[str, Move]] = field(default_factory=list)

    async def load(self, i: int) -> None:
        """Load the i-th table into the ledger's cache, as a live table is (reading its
        ratings ahead if so), with nothing known of its players' ratings before."""
        ledger = self.ledger
        ledger.on_finish = game_ends(ledger.moves) if self.careers else None
        ledger.prepare_finish = ratings_ahead(ledger.db) if self.ahead else None
        writer = ledger.db.move_writer
        if isinstance(writer, PostgresMoveWriter):
            writer.known = KnownRatings(KNOWN_RATINGS)
        await ledger.get(self.tables[i][0])

    async def finish(self, i: int) -> None:
        """Make the i-th table's final move."""
        table_id, move = self.tables[i]

        def decide(table: TableSnapshot) -> Change:
            return apply_move(table, move)

        await self.ledger.change(table_id, decide)


# asyncio's TCP transport (private, not in the stubs): every socket write goes through it.
_TRANSPORT: Any = vars(selector_events)["_SelectorSocketTransport"]


class Trips:
    """Counts the requests this process sends to PostgreSQL: each is one write on a
    socket transport (asyncpg writes a request at once, then waits for its answer; the
    broker here is in memory, so PostgreSQL is the only peer)."""

    def __init__(self) -> None:
        self.count = 0
        self._original = _TRANSPORT.write

    def __enter__(self) -> Trips:
        original = self._original

        def write(transport: Any, data: Any) -> None:
            self.count += 1
            original(transport, data)

        _TRANSPORT.write = write
        return self

    def __exit__(self, *_exc: object) -> None:
        _TRANSPORT.write = self._original


def backends(database: str) -> list[int]:
    """The PostgreSQL processes serving `database` (their process titles name it)."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if f" {database} ".encode() in Path(entry.path, "cmdline").read_bytes():
                    pids.append(int(entry.name))
    return pids


def cpu_ns(pids: list[int]) -> int:
    """The CPU time these processes have used so far (ns, from /proc/PID/schedstat)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError):
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    return total


@dataclass
class Cost:
    """What the final moves of one variant took, sample by sample."""

    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # this process
    server_cpu_ms: list[float] = field(default_factory=list)  # PostgreSQL's backends
    trips: list[int] = field(default_factory=list)

    def medians(self) -> tuple[float, float, float, float]:
        """Wall time, CPU here, PostgreSQL's CPU (ms) and round trips."""
        return (
            statistics.median(self.wall_ms),
            statistics.median(self.cpu_ms),
            statistics.median(self.server_cpu_ms),
            statistics.median(self.trips),
        )

    def line(self, label: str) -> str:
        """p50/p95 of the wall time, then the medians of the rest."""
        wall = sorted(self.wall_ms)
        _, cpu, server, trips = self.medians()
        p50, p95 = statistics.median(wall), wall[int(len(wall) * 0.95) - 1]
        return f"{label:52} {p50:8.2f} {p95:8.2f} {cpu:8.2f} {server:8.2f} {trips:6.0f}"


class Meter:
    """Measures awaited work: wall time, this process's CPU, its PostgreSQL backends'
    CPU and the round trips."""

    def __init__(self, database: str, trips: Trips) -> None:
        self.database = database
        self.trips = trips

    async def measure(self, run: Awaitable[None], cost: Cost | None) -> None:
        """Await `run`, adding what it took to `cost` (None: a warm-up, not counted)."""
        pids = backends(self.database)
        server, cpu, sent = cpu_ns(pids), time.process_time(), self.trips.count
        start = time.perf_counter()
        await run
        wall = time.perf_counter() - start
        if cost is not None:
            cost.wall_ms.append(wall * 1000)
            cost.cpu_ms.append((time.process_time() - cpu) * 1000)
            cost.server_cpu_ms.append((cpu_ns(pids) - server) / 1e6)
            cost.trips.append(self.trips.count - sent)


AHEAD = "read ahead of a rated game's end (at its load)"


async def game_end_cost(url: str, database: str, samples: int) -> dict[str, Cost]:
    """The final move through the Ledger, its table loaded before: without careers
    (before them), and with them on unrated and rated tables through the move writer
    (the ratings read ahead or not), and on unrated tables through the session path
    (the ORM transaction: a finishing change that also changes seats, or a database
    without a move writer); and the read ahead. The variants take turns, sample by
    sample, so that a change in the machine's load weighs on all of them alike."""
    db, session_db = Database(url), Database(url)
    session_db.move_writer = None
    writer_ledger = Ledger(db, MemoryBroker())
    session_ledger = Ledger(session_db, MemoryBroker())
    positions = final_positions(8)
    variants = [
        Variant("final move, no careers (before)", writer_ledger, False, False, False),
        Variant("final move + careers, unrated", writer_ledger, True, False, False),
        Variant("final move + careers, rated, read ahead", writer_ledger, True, True, True),
        Variant("final move + careers, rated, not read ahead", writer_ledger, True, True, False),
        Variant("final move + careers, unrated, session path", session_ledger, True, False, False),
    ]
    costs = {variant.label: Cost() for variant in variants}
    costs[AHEAD] = Cost()
    try:
        for variant in variants:
            for i in range(samples + 5):
                table_id = uuid.uuid4().hex
                game, move = positions[i % len(positions)]
                await store_table(db, table_id, game, variant.rated)
                variant.tables.append((table_id, move))
        with Trips() as trips:
            meter = Meter(database, trips)
            for i in range(samples + 5):
                for variant in variants:
                    await variant.load(i)  # the first five of each warm up
                    ahead = costs[AHEAD] if variant.ahead and i >= 5 else None
                    await meter.measure(variant.ledger.settle(), ahead)
                    await meter.measure(variant.finish(i), costs[variant.label] if i >= 5 else None)
    finally:
        await db.dispose()
        await session_db.dispose()
    return costs


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="100,000 players, 1,000,000 games")
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    players, games = (100_000, 1_000_000) if args.full else (args.players, args.games)
    name = f"bench_profiles_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(f"{SERVER}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    try:
        await asyncio.to_thread(upgrade, url)
        started = time.perf_counter()
        await fill(f"{SERVER}/{name}", players, games)
        print(f"calibration: {calibration()}; load average {os.getloadavg()[0]:.1f}")
        print(
            f"filled {players:,} players and {games:,} games in "
            f"{time.perf_counter() - started:.1f} s"
        )
        db = Database(url)
        service = ProfileService(db, b"bench")
        viewer = Player("p1", "user1")
        rng = random.Random(1)
        try:
            deep = []
            after = None
            pages = max(2, min(200, players // 20 - 2))
            for page in range(pages):
                result = await service.leaderboard(viewer, 20, after)
                after = result.edges[-1][0]
                if page % (pages // 2 if pages < 20 else 20) == 0:
                    deep.append(after)
            lines = [
                ("leaderboard, first page of 20", lambda i: service.leaderboard(viewer, 20, None)),
                (
                    "leaderboard, a page of 20 from rank 400..4000",
                    lambda i: service.leaderboard(viewer, 20, deep[i % len(deep)]),
                ),
            ]

            async def profile_page(i: int) -> None:
                name = f"user{rng.randrange(1, players + 1)}"
                found = await service.profile(viewer, name)
                assert found is not None
                await service.games(found.player.id, 20, None)

            async def later_page(i: int) -> None:
                player_id = f"p{rng.randrange(1, players + 1)}"
                first = await service.games(player_id, 10, None)
                cursor = first.edges[-1][0]
                start = time.perf_counter()
                await service.games(player_id, 20, cursor)
                later_times.append((time.perf_counter() - start) * 1000)

            later_times: list[float] = []
            print(f"{'operation':52} {'p50 ms':>8} {'p95 ms':>8}")
            for label, run in lines:
                p50, p95 = await timed(args.samples, run)
                print(f"{label:52} {p50:8.2f} {p95:8.2f}")
            p50, p95 = await timed(args.samples, profile_page)
            print(f"{'profile + its first games page of 20':52} {p50:8.2f} {p95:8.2f}")
            await timed(args.samples, later_page)
            later_times.sort()
            p50, p95 = statistics.median(later_times), later_times[int(len(later_times) * 0.95) - 1]
            print(f"{'games page of 20 after a cursor':52} {p50:8.2f} {p95:8.2f}")
        finally:
            await db.dispose()
        costs = await game_end_cost(url, name, max(50, args.samples // 2))
        print(
            f"{'':52} {'p50 ms':>8} {'p95 ms':>8} {'cpu ms':>8} {'pg cpu':>8} {'trips':>6}"
            "  (cpu: this process; pg cpu: its PostgreSQL backends; medians)"
        )
        for label, cost in costs.items():
            print(cost.line(label))
        base = costs["final move, no careers (before)"].medians()
        for label in list(costs)[1:-1]:
            wall, cpu, server, trips = (
                m - b for m, b in zip(costs[label].medians(), base, strict=True)
            )
            print(
                f"extra cost of a game's end ({label.split(', ', 1)[-1]}), medians: "
                f"{wall:+.2f} ms, {cpu:+.2f} ms CPU, {server:+.2f} ms PostgreSQL CPU, "
                f"{trips:+.0f} round trips"
            )
        print(f"calibration: {calibration()}; load average {os.getloadavg()[0]:.1f}")
    finally:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name
        )
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main())
