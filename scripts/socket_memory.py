"""Memory per idle subscribed WebSocket, by allocation site (tracemalloc).

Starts a server under tracemalloc (scripts/loadtest/memprobe.py), opens K tables x 4
players, each with its own WebSocket subscribed to its table's `gameUpdates`, and no
moves; compares the server's live allocations before and after the sockets and prints
the KiB per socket, in all and by the places that allocated them (grouped by the first
frame of ours or of a library that is not the standard library), beside the machine's
calibration. tracemalloc counts Python allocations only (not the kernel's socket
buffers, nor the allocator's slack that RSS also shows).

Usage (from the repository root):

    .venv/bin/python scripts/socket_memory.py --tables 250        # 1,000 sockets
    .venv/bin/python scripts/socket_memory.py --tables 50 --top 30 --group line
    .venv/bin/python scripts/socket_memory.py --tables 25 --start-timeout 600  # loaded
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import sys
import tempfile
import time
import tracemalloc
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadtest.harness import Api, TableSlot, bounded_gather, stub_sniffio
from loadtest.measure import Stats, calibration_line, calibration_us
from loadtest.servers import Build, ServerProcess

PROBE = Path(__file__).resolve().parent / "loadtest" / "memprobe.py"
SNAPSHOT_TIMEOUT = 120.0


class ProbedServer(ServerProcess):
    """The server run by memprobe.py (with the build's Python), reporting snapshots."""

    def __init__(self, out: Path, build: Build) -> None:
        python = str(build.spades.parent / "python")
        super().__init__(
            "warning",
            extra_env={"SPADES_MEMPROBE_OUT": str(out)},
            build=build,
            command=[python, str(PROBE)],
        )
        self.out = out

    async def snapshot(self) -> tuple[tracemalloc.Snapshot, dict[str, list[int]]]:
        """Ask for a snapshot and load it, with the census of objects by type."""
        self.out.unlink(missing_ok=True)
        assert self.process is not None
        self.process.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + SNAPSHOT_TIMEOUT
        while not self.out.exists():
            if time.monotonic() > deadline:
                raise RuntimeError("no snapshot from the server")
            await asyncio.sleep(0.1)
        census = json.loads(self.out.with_suffix(".census.json").read_text())
        return tracemalloc.Snapshot.load(str(self.out)), census


def site(trace_frames: tracemalloc.Traceback, group: str) -> str:
    """Where an allocation is charged: its innermost frame, and when that is in the
    standard library (asyncio, ssl...) the innermost frame outside it that led there."""
    frames = list(reversed(trace_frames))  # a Traceback is oldest first: innermost first
    stdlib = os.path.dirname(os.__file__)

    def name(frame: tracemalloc.Frame) -> str:
        return f"{frame.filename}:{frame.lineno}" if group == "line" else frame.filename

    def ours(frame: tracemalloc.Frame) -> bool:
        return not frame.filename.startswith(stdlib) or "site-packages" in frame.filename

    if ours(frames[0]):
        return short(name(frames[0]))
    caller = next((f for f in frames if ours(f)), None)
    via = f" <- {short(name(caller))}" if caller is not None else ""
    return short(name(frames[0])) + via


def short(path: str) -> str:
    """A path without the venv and the checkout's prefixes."""
    for marker in ("site-packages/", "/app/", "/lib/python3"):
        if marker in path:
            _head, tail = path.split(marker, 1)
            return ("app/" if marker == "/app/" else "") + tail
    return path


async def open_sockets(slot: TableSlot, args: argparse.Namespace) -> None:
    """The table's four sockets, each subscribed to the table (unless --unsubscribed)."""
    if not args.unsubscribed:
        await slot.connect()
        return
    for seat in slot.seats:
        await seat.open(slot.ws_urls[seat.index])


async def measure(args: argparse.Namespace, server: ProbedServer) -> None:
    stats = Stats()
    api = Api(server.url, pool=8)
    run_id = secrets.token_hex(3)
    slots = [
        TableSlot(i, [api] * 4, [server.url.replace("http", "ws")] * 4, stats, run_id, i + 1)
        for i in range(args.tables)
    ]
    try:
        await bounded_gather([s.sign_up for s in slots], 8, "sign-ups", True)
        await bounded_gather([s.new_table for s in slots], 16, "tables", True)
        await asyncio.sleep(1.0)
        before, census_before = await server.snapshot()
        await bounded_gather([partial(open_sockets, s, args) for s in slots], 16, "sockets", True)
        await asyncio.sleep(2.0)
        after, census_after = await server.snapshot()
    finally:
        await asyncio.gather(*(s.close() for s in slots), return_exceptions=True)
        await api.close()
    sockets = 4 * len(slots)
    totals: dict[str, list[int]] = {}
    stacks: dict[str, dict[str, list[int]]] = {}
    for stat in after.compare_to(before, "traceback"):
        key = site(stat.traceback, args.group)
        entry = totals.setdefault(key, [0, 0])
        entry[0] += stat.size_diff
        entry[1] += stat.count_diff
        stack = " < ".join(short(f"{f.filename}:{f.lineno}") for f in reversed(stat.traceback))
        entry = stacks.setdefault(key, {}).setdefault(stack, [0, 0])
        entry[0] += stat.size_diff
        entry[1] += stat.count_diff
    total = sum(size for size, _ in totals.values())
    count = sum(n for _, n in totals.values())
    subscribed = "no subscription" if args.unsubscribed else "one gameUpdates subscription"
    print(f"sockets:            {sockets} ({subscribed} each, no moves)")
    print(
        f"live allocations:   {total / sockets / 1024:.1f} KiB and {count / sockets:.0f} "
        "blocks per socket (tracemalloc)"
    )
    print(f"by place ({args.group}), KiB per socket:")
    for key, (size, n) in sorted(totals.items(), key=lambda item: -item[1][0])[: args.top]:
        print(f"  {size / sockets / 1024:7.2f} KiB {n / sockets:6.1f} blocks  {key}")
        for stack, (size, n) in sorted(stacks[key].items(), key=lambda item: -item[1][0])[
            : args.stacks
        ]:
            print(f"      {size / sockets / 1024:7.2f} KiB {n / sockets:6.1f} blocks  {stack}")
    print_census(census_before, census_after, sockets, args.top)


def print_census(
    before: dict[str, list[int]], after: dict[str, list[int]], sockets: int, top: int
) -> None:
    """The objects the collector tracks that the sockets added, by type, per socket."""
    added = {
        kind: (count - before.get(kind, [0, 0])[0], size - before.get(kind, [0, 0])[1])
        for kind, (count, size) in after.items()
    }
    print("by type (objects the collector tracks, sys.getsizeof), per socket:")
    for kind, (count, size) in sorted(added.items(), key=lambda item: -item[1][1])[:top]:
        print(f"  {size / sockets / 1024:7.2f} KiB {count / sockets:6.1f} objects  {kind}")


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description="Memory per idle subscribed WebSocket.")
    parser.add_argument("--tables", type=int, default=50, help="4 sockets each")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--group", choices=("file", "line"), default="file")
    parser.add_argument(
        "--unsubscribed",
        action="store_true",
        help="sockets acknowledged but not subscribed (what the connection alone costs)",
    )
    parser.add_argument(
        "--stacks", type=int, default=0, help="under each place, its N largest full stacks"
    )
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=180.0,
        help="seconds to wait for the traced server's /healthz (a loaded machine needs more)",
    )
    args = parser.parse_args(argv)
    stub_sniffio()
    print(calibration_line(calibration_us()))
    with tempfile.TemporaryDirectory(prefix="spades-memory-") as scratch:
        server = ProbedServer(Path(scratch) / "snapshot.bin", Build.here())
        try:
            server.launch()  # tracemalloc makes the start slow: wait longer
            server.wait_healthy(time.monotonic() + args.start_timeout)
            asyncio.run(measure(args, server))
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
