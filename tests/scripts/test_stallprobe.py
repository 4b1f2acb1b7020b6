"""The stall probe records an event-loop stall with the stack that caused it (a busy
machine may add stalls of its own: only the one caused here is asserted)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from loadtest import stallprobe  # noqa: E402


def block_the_loop_for_a_while() -> None:
    time.sleep(0.6)


def test_a_blocked_loop_is_recorded_with_the_blocking_stack(tmp_path: Path) -> None:
    out = tmp_path / "stalls.jsonl"
    loop = stallprobe._watched(asyncio.new_event_loop)()
    stop = threading.Event()
    watchdog = threading.Thread(
        target=stallprobe._watch, args=(threading.get_ident(), 0.1, out, stop), daemon=True
    )
    watchdog.start()
    try:
        loop.run_until_complete(asyncio.sleep(0.1))  # beating
        loop.call_soon(block_the_loop_for_a_while)
        loop.run_until_complete(asyncio.sleep(0.3))
        deadline = time.monotonic() + 5
        while not out.exists() and time.monotonic() < deadline:
            loop.run_until_complete(asyncio.sleep(0.05))
    finally:
        stop.set()
        watchdog.join(5)
        loop.close()
    assert not watchdog.is_alive()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    caused = [
        r
        for r in records
        if any("block_the_loop_for_a_while" in stack for stack, _count in r["stacks"])
    ]
    assert len(caused) == 1
    assert 500 <= caused[0]["ms"] < 5000
