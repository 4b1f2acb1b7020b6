"""Rolling restart under load: N server processes on PostgreSQL + Redis behind a load
balancer that follows /readyz, each drained (SIGTERM), waited for and started again in
turn while K tables play and spectators watch; then every acknowledged move is checked
against the move log and every follower's sequence of versions for gaps.

Each table has two humans (NORTH, SOUTH) who move over HTTP and two bots (EAST, WEST);
a human moves 1/R s after their turn comes and a bot 1/R s after the change before it,
so each table makes about R moves per second. Each table has S spectators over
WebSocket (graphql-transport-ws), the first of them also the eye its humans' driver
watches; whenever a spectator's socket closes, it resubscribes on a ready process with
`since` (the last version it received). The load balancer is the script's own: a new
connection goes to a process whose /readyz answered 200 at its last poll (every 0.2 s).

Usage (from the repository root):

    .venv/bin/python scripts/rolling_restart.py                     # 50 tables x 1 move/s
    .venv/bin/python scripts/rolling_restart.py --tables 20 --spectators 5 --pause 20
    .venv/bin/python scripts/rolling_restart.py --redis redis://127.0.0.1:6381/0

Flags: --processes N (default 2), --tables K (50), --rate R (moves/s per table, 1),
--spectators S (per table, 2), --warmup S (seconds of load before the first restart,
10), --pause S (seconds between restarts and after the last, 10), --drain S
(SPADES_DRAIN_SECONDS, 5), --shutdown S (SPADES_SHUTDOWN_SECONDS, 30), --redis URL
(default SPADES_TEST_REDIS, else redis://127.0.0.1:6379/0). PostgreSQL is the test one
(127.0.0.1:5432, SPADES_TEST_POSTGRES): a fresh database is made and dropped.

It prints the machine's calibration, the restarts (exit codes, time to exit, time until
ready again), moves acknowledged / applied / lost / doubled, gaps seen, and the
spectators' reconnection times (close to the new socket's connection_ack), p50 and p95;
the figures' definitions are in tests/scale/rolling.py. Exit status 1 if anything was
lost, doubled, missed or stalled.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _measure import calibration  # noqa: E402

from app.store.migrate import upgrade  # noqa: E402
from tests.scale.rolling import (  # noqa: E402
    Audit,
    Balancer,
    Restart,
    Table,
    audit,
    drive,
    open_table,
    percentiles,
    restart_each,
    settle,
)
from tests.support.server import LiveServer  # noqa: E402
from tests.support.services import postgres_database  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line flags."""
    parser = argparse.ArgumentParser(description="A rolling restart under load.")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--rate", type=float, default=1.0, help="moves/s per table")
    parser.add_argument("--spectators", type=int, default=2, help="per table")
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--pause", type=float, default=10.0)
    parser.add_argument("--drain", type=float, default=5.0)
    parser.add_argument("--shutdown", type=float, default=30.0)
    parser.add_argument(
        "--redis",
        default=os.environ.get("SPADES_TEST_REDIS", "redis://127.0.0.1:6379/0"),
    )
    args = parser.parse_args(argv)
    if args.processes < 2 or args.tables < 1 or args.rate <= 0 or args.spectators < 1:
        parser.error("needs 2+ processes, 1+ tables, a positive rate and 1+ spectators")
    return args


def server_env(args: argparse.Namespace) -> dict[str, str]:
    """The servers' settings besides the test defaults (tests/support/server.py)."""
    return {
        "SPADES_BROKER_URL": args.redis,
        "SPADES_DRAIN_SECONDS": str(args.drain),
        "SPADES_SHUTDOWN_SECONDS": str(args.shutdown),
        "SPADES_BOT_DELAY_MS": str(round(1000 / args.rate)),
        "SPADES_SECRET": "rolling-restart-benchmark",
    }


async def open_tables(balancer: Balancer, args: argparse.Namespace) -> list[Table]:
    """The tables, ten at a time."""
    tables: list[Table] = []
    while len(tables) < args.tables:
        batch = min(10, args.tables - len(tables))
        tables += await asyncio.gather(
            *(open_table(balancer, args.spectators) for _ in range(batch))
        )
    return tables


async def under_load(
    servers: list[LiveServer], args: argparse.Namespace
) -> tuple[Audit, list[Restart], float]:
    """Open the tables, run the load, restart each process, audit; with the moves per
    second the tables made from the first restart to the end."""
    async with Balancer(servers) as balancer:
        tables = await open_tables(balancer, args)
        feeds = [asyncio.create_task(feed.run()) for t in tables for feed in t.feeds]
        stop = asyncio.Event()
        drivers = [asyncio.create_task(drive(t, balancer, 1 / args.rate, stop)) for t in tables]
        try:
            await asyncio.sleep(args.warmup)
            started, first = time.monotonic(), sum(t.eye.last or 0 for t in tables)
            restarts = await restart_each(servers, balancer, args.shutdown, args.pause)
            rate = (sum(t.eye.last or 0 for t in tables) - first) / (time.monotonic() - started)
            stop.set()
            await asyncio.gather(*drivers)
            stalled = await settle(tables, 30)
            result = await audit(servers[0].database_url, tables, stalled)
        finally:
            for task in [*feeds, *drivers]:
                task.cancel()
            await asyncio.gather(*feeds, *drivers, return_exceptions=True)
    return result, restarts, rate


def outage_reasons(servers: list[LiveServer]) -> Counter[str]:
    """Why requests were answered UNAVAILABLE, from the servers' logs (the database or
    the broker failed them)."""
    reasons: Counter[str] = Counter()
    for server in servers:
        for line in server.logs().splitlines():
            _, found, reason = line.partition("request failed on an outage: ")
            if found:
                reasons[reason[:120]] += 1
    return reasons


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print its figures."""
    args = parse_args(argv)
    print(f"calibration: {calibration()}")
    print(
        f"{args.processes} processes (PostgreSQL + Redis {args.redis}), {args.tables} tables x "
        f"{args.rate:g} move/s (2 humans over HTTP, 2 bots), {args.spectators} spectators per "
        f"table; drain {args.drain:g} s, shutdown {args.shutdown:g} s; warm-up "
        f"{args.warmup:g} s, {args.pause:g} s between restarts",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as scratch, postgres_database() as url:
        upgrade(url)
        servers = [
            LiveServer(Path(scratch) / f"p{n}.db", env=server_env(args), database_url=url)
            for n in range(args.processes)
        ]
        try:
            with ThreadPoolExecutor(len(servers)) as starting:
                list(starting.map(LiveServer.start, servers))
            result, restarts, rate = asyncio.run(under_load(servers, args))
        finally:
            for server in servers:
                server.stop()
        outages = outage_reasons(servers)
    for number, restart in enumerate(restarts):
        until = restarts[number + 1].signalled_at if number + 1 < len(restarts) else math.inf
        mine = [s for at, s in result.reconnected if restart.signalled_at <= at < until]
        print(
            f"restart of :{restart.port}: exit {restart.exit_code} after "
            f"{restart.drained_seconds:.1f} s, ready again after {restart.back_seconds:.1f} s; "
            f"{len(mine)} spectators reconnected elsewhere ({percentiles(mine)})"
        )
    print(f"table changes/s during the restarts: {rate:.1f}")
    print("\n".join(result.lines()))
    for reason, count in outages.most_common(3):
        print(f"  UNAVAILABLE in the servers' logs, {count}x: {reason}")
    failed = (
        result.lost
        or result.doubled
        or result.gaps
        or result.repeats
        or result.behind
        or result.stalled
        or any(r.exit_code for r in restarts)
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
