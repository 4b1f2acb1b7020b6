"""/healthz reports the database and the broker; /metrics exposes Prometheus metrics."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.server import LiveServer, free_port
from tests.support.services import PrivateRedis, postgres_database

from .harness import (
    FastApi,
    choose_move,
    error_code,
    send,
    take_turn,
    wait_for_health,
    watching,
)

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture(scope="module")
def module_redis() -> Iterator[PrivateRedis]:
    """A Redis of the module's own: one test stops and starts it."""
    redis = PrivateRedis(free_port())
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, module_redis: PrivateRedis
) -> Iterator[LiveServer]:
    """One server on PostgreSQL and Redis for the module."""
    with postgres_database() as url:
        live = LiveServer(
            tmp_path_factory.mktemp("observed") / "spades.db",
            env={"SPADES_BROKER_URL": module_redis.url},
            database_url=url,
        )
        live.start()
        try:
            yield live
        finally:
            live.stop()


async def scrape(server: LiveServer) -> Samples:
    """Every sample /metrics exposes, by name and labels."""
    async with httpx.AsyncClient(verify=False, timeout=10) as client:
        response = await client.get(f"http://127.0.0.1:{server.port}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value (0 when it is not there yet)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_healthz_reports_database_and_broker_ok(server: LiveServer) -> None:
    # The server may still be connecting to a Redis that the previous test restarted
    # (its start waits 5 s at most; a loaded machine can take longer): ok once connected.
    body = await wait_for_health(server, 200, timeout=30)
    assert body == {"status": "ok", "database": "ok", "broker": "ok"}


async def test_healthz_answers_503_with_the_broker_unavailable_while_redis_is_down(
    server: LiveServer, module_redis: PrivateRedis
) -> None:
    try:
        module_redis.stop()
        body = await wait_for_health(server, 503, timeout=10)
        assert body == {"status": "degraded", "database": "ok", "broker": "unavailable"}
    finally:
        module_redis.start()
    started = time.monotonic()
    body = await wait_for_health(server, 200, timeout=10)
    assert body["broker"] == "ok"
    assert time.monotonic() - started < 10


async def test_metrics_count_operations_errors_subscriptions_moves_and_fanout_latency(
    server: LiveServer,
) -> None:
    before = await scrape(server)
    alice = await FastApi(server).sign_up()
    table_id = str((await alice.create_table(name="metrics"))["id"])
    async with watching(alice, table_id) as mine:
        await mine.next()
        for seat in ("EAST", "SOUTH", "WEST"):
            await alice.add_bot(table_id, seat)
        view = await mine.until_turn("NORTH")
        stale = view["version"] - 1
        assert await error_code(send(alice, table_id, choose_move(view), stale)) == "CONFLICT"
        await alice.game(table_id)
        await take_turn(alice, table_id, mine, "NORTH")
        async with watching(alice, "0" * 32) as nowhere:
            assert await error_code(nowhere.next()) == "NOT_FOUND"
        during = await scrape(server)
        delivered = len(mine.updates) - 1  # the SNAPSHOT is not a fan-out
    # The subscription is gone once the server notices the closed socket.
    deadline = time.monotonic() + 10
    after = await scrape(server)
    while value(after, "spades_active_subscriptions", kind="game") > value(
        before, "spades_active_subscriptions", kind="game"
    ):
        assert time.monotonic() < deadline, "the closed subscription is still counted"
        await asyncio.sleep(0.1)
        after = await scrape(server)

    def grew(name: str, **labels: str) -> float:
        return value(during, name, **labels) - value(before, name, **labels)

    # signUp, createTable, three addBot, the refused and the accepted move
    assert grew("spades_graphql_operations_total", type="mutation") >= 7
    assert grew("spades_graphql_operations_total", type="query") >= 1
    assert grew("spades_graphql_operations_total", type="subscription") >= 2
    assert grew("spades_graphql_errors_total", code="CONFLICT") >= 1
    assert grew("spades_graphql_errors_total", code="NOT_FOUND") >= 1  # a subscription's
    assert grew("spades_active_subscriptions", kind="game") == 1
    assert grew("spades_moves_total", kind="PlaceBid") >= 1
    assert grew("spades_fanout_latency_seconds_count") >= delivered
    assert grew("spades_fanout_latency_seconds_sum") >= 0
    assert value(during, "spades_fanout_latency_seconds_bucket", le="+Inf") == value(
        during, "spades_fanout_latency_seconds_count"
    )
