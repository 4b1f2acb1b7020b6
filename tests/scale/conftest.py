"""Fixtures of the scale-out tests: a fresh PostgreSQL database, Redis, and server
processes sharing them (their logs are printed when a test fails)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.server import LiveServer, free_port
from tests.support.services import PrivateRedis, postgres_database, redis_url

StartServer = Callable[..., LiveServer]


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, f"report_{report.when}", report)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database (SQLAlchemy asyncpg URL), dropped afterwards."""
    with postgres_database() as url:
        yield url


@pytest.fixture
def broker_url() -> str:
    """The machine's Redis, shared with every other test (never stopped)."""
    return redis_url()


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    """A Redis of the test's own, to stop and start."""
    redis = PrivateRedis(free_port())
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


@pytest.fixture
def start_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StartServer]:
    """Start `spades serve` processes; every one is stopped after the test."""
    started: list[LiveServer] = []

    def start(
        database_url: str, broker: str | None = None, env: dict[str, str] | None = None
    ) -> LiveServer:
        extra = dict(env or {})
        if broker is not None:
            extra["SPADES_BROKER_URL"] = broker
        server = LiveServer(
            tmp_path / f"server{len(started)}.db", env=extra, database_url=database_url
        )
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.stop()
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        for number, server in enumerate(started):
            print(f"----- server {number} log -----\n{server.logs()[-6000:]}")
