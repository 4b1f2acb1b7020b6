"""Processes a server starts never outlive it: the workers of the EXPERT bots' pool end
when the server stops, and die with it when it is killed (SIGKILL, as the OOM killer
does), and so do the workers of `spades serve --workers N` when their supervisor is
killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.client import Api
from tests.support.server import ROOT, TEST_ENV, LiveServer, free_port

# Each EXPERT decision thinks this long: a worker is busy when its server goes.
EXPERT_ENV = {"SPADES_EXPERT_MS": "3000", "SPADES_BOT_WORKERS": "1"}


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (its children, theirs, ...), from /proc."""
    found: set[int] = set()
    pending = [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    pending.append(child)
    return found


def running(pid: int) -> bool:
    """Whether the process exists and has not ended (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition: object, seconds: float, what: str) -> float:
    """Poll `condition` (a callable) until true; the seconds it took."""
    assert callable(condition)
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, f"timed out waiting for {what}"
        time.sleep(0.05)
    return time.monotonic() - started


async def warm_expert_pool(server: LiveServer) -> set[int]:
    """A table of one human and three EXPERT bots, whose first bidder (EAST) thinks in the
    pool; the server's processes once its worker runs."""
    host = await Api(server).sign_up()
    table = await host.create_table(name="experts")
    for seat in ("EAST", "SOUTH", "WEST"):
        await host.call(
            "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s, level: EXPERT) { id } }",
            t=table["id"],
            s=seat,
        )
    assert server.process is not None
    pid = server.process.pid
    wait_for(lambda: descendants(pid), 60, "the EXPERT pool's worker")
    time.sleep(0.5)  # the worker takes its first decision
    return descendants(pid)


@pytest.mark.slow
async def test_the_bot_pool_ends_with_its_server_whether_stopped_or_killed(
    tmp_path: Path,
) -> None:
    server = LiveServer(tmp_path / "spades.db", env=EXPERT_ENV)
    server.start()
    try:
        workers = await warm_expert_pool(server)
        server.signal(signal.SIGTERM)
        assert server.exit_code(timeout=30) == 0
        wait_for(lambda: not any(map(running, workers)), 5, f"workers {workers} to end")

        # Started again, the bots resume in a new pool; the server is killed outright.
        server.start()
        assert server.process is not None
        pid = server.process.pid
        wait_for(lambda: descendants(pid), 60, "the EXPERT pool's worker")
        workers = descendants(pid)
        server.signal(signal.SIGKILL)
        server.exit_code(timeout=10)
        wait_for(lambda: not any(map(running, workers)), 5, f"workers {workers} to die")
    finally:
        server.stop()


@pytest.mark.slow
def test_the_workers_of_a_killed_supervisor_die_with_it(tmp_path: Path) -> None:
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "from app.cli import main; main()",
        "serve",
        "--port",
        str(port),
        "--workers",
        "2",
        "--database-url",
        f"sqlite+aiosqlite:///{tmp_path / 'spades.db'}",
    ]
    env = {**os.environ, **TEST_ENV}
    with open(tmp_path / "serve.log", "wb") as log:
        supervisor = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
    try:

        def serving() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(serving, 90, "the workers to serve")
        workers = descendants(supervisor.pid)
        assert len(workers) >= 2
        supervisor.kill()
        supervisor.wait(timeout=10)
        wait_for(lambda: not any(map(running, workers)), 5, f"workers {workers} to die")
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
