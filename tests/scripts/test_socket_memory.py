"""scripts/socket_memory.py charges an allocation to the frame that made it, and its
census names what holds an object."""

from __future__ import annotations

import gc
import sys
import tracemalloc
import weakref
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import socket_memory  # noqa: E402
from loadtest import memprobe  # noqa: E402

MARK = 123457


def allocate_a_marked_list() -> list[int]:
    return [MARK] * 50_000


def call_through(levels: int) -> list[int]:
    return allocate_a_marked_list() if levels == 0 else call_through(levels - 1)


def test_an_allocation_is_charged_to_its_innermost_frame() -> None:
    tracemalloc.start(8)
    try:
        kept = call_through(3)
        snapshot = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    biggest = max(snapshot.statistics("traceback"), key=lambda stat: stat.size)
    assert biggest.size >= 8 * len(kept)  # the list's items, its own block
    place = socket_memory.site(biggest.traceback, "line")
    line = allocate_a_marked_list.__code__.co_firstlineno + 1
    assert place.endswith(f"test_socket_memory.py:{line}"), place


class Holder:
    def __init__(self) -> None:
        self.waiters: deque[int] = deque()


def test_the_census_names_the_holder_of_a_container() -> None:
    holders = [Holder() for _ in range(3)]
    census = memprobe.census()
    assert census["collections.deque in Holder"][0] >= len(holders)


def test_the_census_counts_a_dead_weak_proxy_without_touching_it() -> None:
    dead = weakref.proxy(Holder())  # its referent is gone: any use of it raises
    assert gc.is_tracked(dead)
    census = memprobe.census()
    assert census["weakref.ProxyType"][0] >= 1
