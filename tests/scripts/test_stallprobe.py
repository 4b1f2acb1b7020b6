"""The stall probe records an event-loop stall with the stack that caused it (a busy
machine may add stalls of its own: only the one caused here is asserted)."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from loadtest import stallprobe  # noqa: E402


def block_the_loop_for_a_while() -> None:
    time.sleep(0.6)


def spin_the_loop_for_a_while() -> None:
    deadline = time.monotonic() + 0.6
    while time.monotonic() < deadline:
        pass


def collect_in_the_loop() -> None:
    gc.collect()  # a full collection, then a pause long enough to be a stall
    time.sleep(0.3)


def stalls_caused_by(blocker: Callable[[], None], out: Path) -> list[dict[str, Any]]:
    """The stall records naming `blocker`, from a loop that runs it once while watched."""
    loop = stallprobe._watched(asyncio.new_event_loop)()
    stop = threading.Event()
    watchdog = threading.Thread(
        target=stallprobe._watch,
        args=(threading.get_ident(), 0.1, out, stop, threading.get_native_id()),
        daemon=True,
    )
    watchdog.start()
    try:
        loop.run_until_complete(asyncio.sleep(0.1))  # beating
        loop.call_soon(blocker)
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
    return [r for r in records if any(blocker.__name__ in stack for stack, _count in r["stacks"])]


def test_a_blocked_loop_is_recorded_with_the_blocking_stack(tmp_path: Path) -> None:
    caused = stalls_caused_by(block_the_loop_for_a_while, tmp_path / "stalls.jsonl")
    assert len(caused) == 1
    assert 500 <= caused[0]["ms"] < 5000


@pytest.mark.skipif(not Path("/proc/self/schedstat").exists(), reason="Linux /proc only")
def test_a_stall_says_whether_the_loop_thread_ran_or_slept(tmp_path: Path) -> None:
    asleep = stalls_caused_by(block_the_loop_for_a_while, tmp_path / "asleep.jsonl")[0]
    busy = stalls_caused_by(spin_the_loop_for_a_while, tmp_path / "busy.jsonl")[0]
    assert asleep["ran_ms"] < asleep["ms"] / 4
    assert busy["ran_ms"] > busy["ms"] / 4
    for record in (asleep, busy):
        assert record["waited_ms"] >= 0 and record["stolen_ms"] >= 0


def test_clocks_between_two_readings_are_in_milliseconds() -> None:
    earlier = stallprobe.Clocks(ran_ns=1_000_000, stolen_ms=30, system_ms=10, faults=5)
    later = stallprobe.Clocks(
        ran_ns=251_000_000, waited_ns=5_500_000, stolen_ms=70, system_ms=40, faults=9
    )
    assert later.since(earlier) == {
        "ran_ms": 250.0,
        "system_ms": 30,
        "faults": 4,
        "waited_ms": 5.5,
        "stolen_ms": 40,
    }


def test_a_stall_names_the_garbage_collections_it_overlapped(tmp_path: Path) -> None:
    gc.callbacks.append(stallprobe._on_gc)
    try:
        caused = stalls_caused_by(collect_in_the_loop, tmp_path / "stalls.jsonl")
    finally:
        gc.callbacks.remove(stallprobe._on_gc)
    assert any(generation == 2 for generation, _ms, _collected in caused[0]["gc"])
