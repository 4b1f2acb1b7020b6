"""The PostgreSQL and Redis that this machine kind runs (127.0.0.1:5432 and :6379).

Tests that are about them must run in CI: when CI is set and a service is
unreachable, they fail instead of skipping.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

POSTGRES_ADMIN_URL = os.environ.get(
    "SPADES_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
# A developer running several suites at once points each at a Redis of its own (the
# fault tests stop and restart the one they use).
REDIS_URL = os.environ.get("SPADES_TEST_REDIS", "redis://127.0.0.1:6379/0")
REDIS_PORT = int(REDIS_URL.rsplit(":", 1)[1].split("/", 1)[0])


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Skip when a service is missing on a developer machine; fail in CI."""
    if _reachable(host, port):
        return
    message = f"{name} is not reachable at {host}:{port}"
    if os.environ.get("CI"):
        pytest.fail(message + " (required in CI)")
    pytest.skip(message)


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database for one test (dropped afterwards); yields its async URL."""
    require_service("PostgreSQL", "127.0.0.1", 5432)
    import asyncio

    import asyncpg

    name = f"spades_test_{uuid.uuid4().hex[:12]}"

    async def run(sql: str) -> None:
        connection = await asyncpg.connect(POSTGRES_ADMIN_URL)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
    try:
        yield f"{base}/{name}"
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def redis_url() -> str:
    """The Redis URL, after checking Redis is there."""
    require_service("Redis", "127.0.0.1", REDIS_PORT)
    return REDIS_URL
