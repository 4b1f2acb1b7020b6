"""Turn clocks at scale, in one server process (the service layer on a SQLite file).

1. Idle cost: N timed tables (default 10,000) whose human on turn has a long clock
   (300 s, run 100x longer so none runs out): the process's CPU share while nothing
   happens but its timers and sweeps, next to the same process with no table at all.
   The tables are stored in the state a started game leaves them (cached, deadline
   written and armed), one write each: four changes per table would take many minutes.
2. Lateness: M tables (default 1,000) of four humans who never move, on a T-second
   clock (default 30), started spread over one clock period: every turn runs out, is
   played for (then the seat is replaced after two timeouts); prints the lateness of
   the fired deadlines (from the deadline to the committed TURN_TIMED_OUT).

    .venv/bin/python scripts/bench_clocks.py [--idle-tables N] [--late-tables M]
        [--turn-seconds T] [--measure S]

Prints figures and the machine calibration; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

# Measure the checkout this script belongs to, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _measure import calibration

from app.rules.game import Game
from app.rules.seats import Seat
from app.services.container import Services
from app.services.social.model import Viewer
from app.services.tables.deadlines import clocked
from app.services.tables.snapshot import (
    JoinPolicy,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)
from app.settings import Settings

SEATS = (Seat.EAST, Seat.SOUTH, Seat.WEST)


async def services_on(folder: Path, name: str, scale: float = 1.0) -> Services:
    settings = Settings(
        turn_clock_scale=scale,
        database_url=f"sqlite+aiosqlite:///{folder / name}",
        argon2_time_cost=1,
        argon2_memory_kib=1024,
        rate_limits=False,
        log_level="warning",
    )
    services = Services(settings)
    await services.start()
    return services


async def humans(services: Services) -> list[Viewer]:
    viewers = []
    for i in range(4):
        _, player = await services.auth.sign_up(f"bench{i}{int(time.time()) % 10000}", "pw123456")
        viewers.append(await services.social.viewer(player))
    return viewers


async def start_table(services: Services, players: list[Viewer], seconds: int) -> str:
    """A table of four humans whose game has started (EAST's timed turn to bid)."""
    table = await services.tables.create(
        players[0], None, Visibility.PUBLIC, None, True, turn_seconds=seconds
    )
    for viewer, seat in zip(players[1:], SEATS, strict=True):
        await services.tables.join(viewer, table.id, seat)
    return table.id


async def stored_table(
    services: Services, players: list[Viewer], seconds: int, scale: float
) -> str:
    """A table of four humans in the state a started game leaves it (EAST's timed turn
    to bid), stored in one write and armed like a change would arm it: the idle state
    of a live server, without the minutes four changes per table take to set up."""
    occupants = tuple(Occupant(v.id, v.player.username) for v in players)
    game, _ = Game.start([v.id for v in players])
    table = TableSnapshot(
        id=uuid.uuid4().hex,
        name=None,
        host_id=players[0].id,
        host_name=players[0].player.username,
        visibility=Visibility.PUBLIC,
        join_policy=JoinPolicy.OPEN,
        spectating=True,
        status=TableStatus.PLAYING,
        version=5,
        occupants=occupants,
        game=game,
        created_at=time.time(),
        turn_seconds=seconds,
    )
    table = clocked(table, time.time(), scale)
    await services.ledger.create(table)
    services.clocks.arm(table)
    return table.id


async def cpu_share(seconds: float) -> float:
    """This process's CPU time per wall second over `seconds` of the event loop idling."""
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(seconds)
    return (time.process_time() - cpu) / (time.monotonic() - wall)


async def idle_cost(folder: Path, tables: int, measure: float) -> None:
    # Setting 10,000 tables up takes minutes here: the clocks run 100x longer (300 s ->
    # 8 h), so that none runs out before or while the process is measured idle.
    services = await services_on(folder, "idle.db", scale=100.0)
    try:
        await asyncio.sleep(2)
        empty = await cpu_share(measure)
        players = await humans(services)
        started = time.monotonic()
        for _ in range(tables):
            await stored_table(services, players, 300, 100.0)
        setup = time.monotonic() - started
        await asyncio.sleep(2)
        armed = services.clocks.armed
        busy = await cpu_share(measure)
    finally:
        await services.stop()
    print(
        f"idle: {tables} timed tables set up in {setup:.1f} s; {armed} deadlines armed", flush=True
    )
    print(f"idle: {services.clocks.fired} deadlines fired (must be 0: nothing ran out)", flush=True)
    print(
        f"idle: CPU share of one core over {measure:.0f} s: no table {empty * 100:.2f}%, ",
        flush=True,
    )
    print(
        f"      {tables} timed tables {busy * 100:.2f}% (extra {(busy - empty) * 100:.2f}%)",
        flush=True,
    )


async def lateness(folder: Path, tables: int, seconds: int, measure: float) -> None:
    services = await services_on(folder, "late.db")
    try:
        players = await humans(services)
        # Start the tables spread over one clock period, as a live server's would be.
        period = float(seconds)
        began = time.monotonic()
        for i in range(tables):
            wait = began + period * i / tables - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await start_table(services, players, seconds)
        cpu, wall = time.process_time(), time.monotonic()
        services.clocks.lateness.clear()
        fired = services.clocks.fired
        await asyncio.sleep(measure)
        share = (time.process_time() - cpu) / (time.monotonic() - wall)
        late = sorted(services.clocks.lateness)
        count = services.clocks.fired - fired
    finally:
        await services.stop()
    if not late:
        print("lateness: no deadline fired (measure longer than the clock)")
        return
    p = statistics.quantiles(late, n=100)
    print(
        f"lateness: {tables} tables, {seconds} s clock, {count} deadlines fired in "
        f"{measure:.0f} s (CPU {share * 100:.0f}% of a core)"
    )
    print(
        f"lateness: p50 {p[49] * 1000:.1f} ms, p95 {p[94] * 1000:.1f} ms, "
        f"p99 {p[98] * 1000:.1f} ms, max {late[-1] * 1000:.1f} ms"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--idle-tables", type=int, default=10_000)
    parser.add_argument("--late-tables", type=int, default=1_000)
    parser.add_argument("--turn-seconds", type=int, default=30)
    parser.add_argument("--measure", type=float, default=30.0, help="seconds per measurement")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"calibration (python3 -m timeit 'sum(range(10000))'): {calibration()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        if args.idle_tables:
            await idle_cost(Path(folder), args.idle_tables, args.measure)
        if args.late_tables:
            measure = max(args.measure, 2.0 * args.turn_seconds)
            await lateness(Path(folder), args.late_tables, args.turn_seconds, measure)
    print(f"calibration after: {calibration()}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
