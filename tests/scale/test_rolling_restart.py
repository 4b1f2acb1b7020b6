"""A rolling restart: two processes on PostgreSQL + Redis, each in turn drained (SIGTERM),
waited for and started again, under a live load of tables (two humans moving over HTTP,
two bots) and spectators over WebSocket, all reaching the processes through a load
balancer that follows /readyz. No acknowledged move is lost or doubled, every follower
resubscribes with `since` on the other process and sees every version once, no seated
player is ever shown disconnected, and the bot turns and turn deadlines the drained
process owed are taken up."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.services.live.presence_store import Mark, RedisPresence
from app.store.migrate import upgrade
from tests.support.drain import SERVICE_RESTART, readiness
from tests.support.server import LiveServer
from tests.support.services import postgres_database, redis_url

from .conftest import StartServer
from .harness import Cluster, FastApi, database_outage, logged_moves
from .rolling import Balancer, Table, audit, drive, open_table, restart_each, settle

SHUTDOWN_SECONDS = 20.0
ENV = {
    "SPADES_DRAIN_SECONDS": "1.5",
    "SPADES_SHUTDOWN_SECONDS": str(SHUTDOWN_SECONDS),
    # A bot moves half a second after the change before it: bot turns are under way, or
    # owed, when a process drains.
    "SPADES_BOT_DELAY_MS": "500",
    "SPADES_TURN_CLOCK_SCALE": "1",
}
TABLES = 4
SPECTATORS = 2  # per table
PACE = 0.5  # seconds between a human's turn and their move


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """Processes A and B on a fresh database (migrated here first) and the test Redis,
    started side by side."""
    env = {"SPADES_BROKER_URL": redis_url(), **ENV}
    with postgres_database() as url:
        upgrade(url)
        a = LiveServer(tmp_path / "a.db", env=env, database_url=url)
        b = LiveServer(tmp_path / "b.db", env=env, database_url=url)
        try:
            with ThreadPoolExecutor(2) as starting:
                list(starting.map(LiveServer.start, (a, b)))
            yield Cluster(a, b, url)
        finally:
            b.stop()
            a.stop()


async def silent_table(cluster: Cluster) -> str:
    """A table on A of one human who never moves (a 5-second turn clock) and three bots,
    waiting for its human: A armed the deadline."""
    host = await FastApi(cluster.a).sign_up()
    table_id = str((await host.create_table(seed=21, turnSeconds=5))["id"])
    for seat in ("EAST", "SOUTH", "WEST"):
        await host.add_bot(table_id, seat)
    deadline = time.monotonic() + 20
    while (await host.game(table_id))["turn"] != "NORTH":
        assert time.monotonic() < deadline, "the bots did not bid"
        await asyncio.sleep(0.1)
    return table_id


async def presence_marks(tables: list[Table]) -> dict[str, dict[str, Mark]]:
    """Each table's presence marks, as every process reads them from Redis."""
    store = RedisPresence(redis_url())
    await store.start()
    try:
        return {table.table_id: await store.marks(table.table_id) for table in tables}
    finally:
        await store.close()


@pytest.mark.slow
async def test_a_rolling_restart_under_load_loses_no_move_and_misses_no_update(
    cluster: Cluster,
) -> None:
    servers = [cluster.a, cluster.b]
    async with Balancer(servers) as balancer:
        tables = [await open_table(balancer, SPECTATORS, north_watches=True) for _ in range(TABLES)]
        feeds = [asyncio.create_task(feed.run()) for t in tables for feed in t.feeds]
        stop = asyncio.Event()
        drivers = [asyncio.create_task(drive(t, balancer, PACE, stop)) for t in tables]
        try:
            await asyncio.sleep(2)
            silent = await silent_table(cluster)
            first_signal = time.time()
            restarts = await restart_each(servers, balancer, SHUTDOWN_SECONDS, pause=1)
            marks = await presence_marks(tables)
            stop.set()
            await asyncio.gather(*drivers)
            stalled = await settle(tables, 15)
            result = await audit(cluster.database_url, tables, stalled)
        finally:
            for task in [*feeds, *drivers]:
                task.cancel()
            await asyncio.gather(*feeds, *drivers, return_exceptions=True)

    print("\n".join(result.lines()))
    assert [restart.exit_code for restart in restarts] == [0, 0]
    assert all(restart.drained_seconds < SHUTDOWN_SECONDS for restart in restarts)
    assert result.acknowledged >= TABLES
    assert (result.lost, result.doubled) == (0, 0)
    assert result.applied == result.acknowledged
    assert (result.gaps, result.repeats, result.behind) == (0, 0, 0)
    # Every follower was on a process that drained, and came back with `since`.
    assert all(feed.reconnected for table in tables for feed in table.feeds)
    assert set(result.close_codes) == {SERVICE_RESTART}
    # Each seated player watching the table came back within their grace period: nobody
    # was ever shown disconnected (their mark is the one of their first connection).
    for table in tables:
        mark = marks[table.table_id][table.north_id]
        assert mark.connected and mark.changed_at < first_signal, (table.table_id, mark)
    # The bot turns the drained processes owed were played by the other one.
    assert result.stalled == 0
    # The silent human's deadline, armed by A before it drained, fired once.
    moves = await logged_moves(cluster.database_url, silent)
    first = next(i for i, move in enumerate(moves) if move["type"] == "timeout")
    assert moves[first] == {"type": "timeout", "seat": "NORTH"}
    assert (moves[first + 1]["type"], moves[first + 1]["seat"]) == ("bid", "NORTH")


async def test_readyz_answers_503_while_the_database_is_unreachable(
    pg_url: str, broker_url: str, start_server: StartServer
) -> None:
    server = start_server(pg_url, broker_url)
    assert await readiness(server) == (200, {"status": "ready"})
    async with database_outage(pg_url):
        status, body = await readiness(server)
        assert (status, body) == (
            503,
            {"status": "unavailable", "database": "unavailable", "broker": "ok"},
        )
    deadline = time.monotonic() + 10
    while await readiness(server) != (200, {"status": "ready"}):
        assert time.monotonic() < deadline, "not ready again after the outage"
        await asyncio.sleep(0.1)
