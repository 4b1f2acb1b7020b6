"""The PostgreSQL and Redis that this machine kind runs (127.0.0.1:5432 and :6379).

Tests that are about them must run in CI: when CI is set and a service is
unreachable, they fail instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
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


class PrivateRedis:
    """A Redis server of one test's own (Debian's redis-server on a free port), for the
    tests that stop and start Redis: the machine's Redis, which every other test shares,
    is never stopped."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def up(self) -> bool:
        """Whether it answers PING."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self) -> None:
        """Start it (if it is not running) and wait until it answers."""
        if self._process is not None and self._process.poll() is None:
            return
        binary = shutil.which("redis-server")
        if binary is None:
            message = "redis-server is not installed"
            if os.environ.get("CI"):
                pytest.fail(message + " (required in CI)")
            pytest.skip(message)
        self._process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_until(self.up, 10, "the test's Redis to start")

    def stop(self) -> None:
        """Stop it, nothing saved, and wait until it is gone."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        self._process = None
        _wait_until(lambda: not self.up(), 10, "the test's Redis to stop")


def _wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)
