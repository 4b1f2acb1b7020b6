"""The processes below a server process, read from /proc (Linux)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from .client import Api
from .server import LiveServer


def descendants(pid: int) -> set[int]:
    """Every process below `pid`: its children, theirs, and so on."""
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


def wait_for(condition: Callable[[], object], seconds: float, what: str) -> float:
    """Poll `condition` until it holds (AssertionError after `seconds`); the time taken."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, f"timed out waiting for {what}"
        time.sleep(0.05)
    return time.monotonic() - started


def all_gone(pids: set[int]) -> Callable[[], bool]:
    """A condition: none of `pids` is running."""
    return lambda: not any(map(running, pids))


async def warm_expert_pool(server: LiveServer) -> set[int]:
    """A table of one human and three EXPERT bots on `server`, whose first bidder (EAST)
    thinks in the EXPERT pool; the server's processes below it once the pool runs."""
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
    return descendants(pid)
