"""A real uvicorn server process on a free port with its own SQLite file."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]

# Cheap password hashing keeps sign-ups fast in tests; everything else is as in production.
TEST_ENV = {
    "SPADES_ARGON2_TIME_COST": "1",
    "SPADES_ARGON2_MEMORY_KIB": "1024",
    "SPADES_ALLOW_SEEDED_TABLES": "1",
    "SPADES_LOG_LEVEL": "warning",
    # Most tests sign many players up from one IP; the rate-limit tests turn limits on.
    "SPADES_RATE_LIMITS": "0",
    # Turns last hours: a test's game stands still while it looks. Tests about turn clocks
    # set their own scale (test_turn_clocks, test_real_clock, test_live_processes).
    "SPADES_TURN_CLOCK_SCALE": "1000",
    # A stopped test server exits at once; the drain's own tests set a window.
    "SPADES_DRAIN_SECONDS": "0",
}


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """`spades serve` in a subprocess. Can be stopped (even killed) and started again on
    the same database."""

    def __init__(
        self,
        database: Path,
        env: dict[str, str] | None = None,
        database_url: str | None = None,
        port: int | None = None,
        entry: str = "from app.cli import main; main()",
    ) -> None:
        self.database = database
        self.entry = entry  # the Python code that runs the server (its arguments follow)
        self.database_url = database_url or f"sqlite+aiosqlite:///{database}"
        self.port = port or free_port()
        self.extra_env = env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = database.with_suffix(".log")

    @property
    def http_url(self) -> str:
        """The GraphQL endpoint over HTTP."""
        return f"http://127.0.0.1:{self.port}/graphql"

    @property
    def ws_url(self) -> str:
        """The GraphQL endpoint over WebSocket."""
        return f"ws://127.0.0.1:{self.port}/graphql"

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until /healthz answers (a minute: on a loaded
        2-core machine the imports alone took over 20 s)."""
        env = {**os.environ, **TEST_ENV, **self.extra_env}
        command = [
            sys.executable,
            "-c",
            self.entry,
            "serve",
            "--port",
            str(self.port),
            "--database-url",
            self.database_url,
        ]
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child process owns it
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        # One client for all polls: a new httpx client loads the CA bundle each time.
        with httpx.Client(verify=False, timeout=1) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited: {self.log_path.read_text()[-2000:]}")
                try:
                    if client.get(f"http://127.0.0.1:{self.port}/healthz").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
        raise RuntimeError("server did not start in time")

    def stop(self, kill: bool = False) -> None:
        """Stop the server: gracefully (SIGTERM) or abruptly (SIGKILL)."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def signal(self, number: signal.Signals) -> None:
        """Send the server process a signal (SIGTERM: it drains)."""
        assert self.process is not None, "not running"
        self.process.send_signal(number)

    def exit_code(self, timeout: float) -> int:
        """Wait up to `timeout` seconds for the process to end; its exit code (it is then
        stopped, and may be started again)."""
        assert self.process is not None, "not running"
        try:
            code = self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.process = None
        return code

    def restart(self, kill: bool = False) -> None:
        """Stop, then start a new process on the same database (and port)."""
        self.stop(kill=kill)
        self.start()

    def logs(self) -> str:
        """What the server printed."""
        return self.log_path.read_text() if self.log_path.exists() else ""


@contextmanager
def running(
    database: Path, env: dict[str, str] | None = None, database_url: str | None = None
) -> Iterator[LiveServer]:
    """A live server for the duration of the block."""
    live = LiveServer(database, env=env, database_url=database_url)
    live.start(timeout=60)
    try:
        yield live
    finally:
        live.stop()
