"""What a run measures: latency samples, /proc figures of the server processes, the
machine's calibration, the load generator's own CPU and garbage-collector pauses, and
py-spy profiles."""

from __future__ import annotations

import gc
import math
import os
import subprocess
import sys
import time
import timeit
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------- results


@dataclass
class Stats:
    """Everything measured inside the recording window."""

    latencies: list[float] = field(default_factory=list)  # s: request start -> all 4 updated
    http_latencies: list[float] = field(default_factory=list)  # s: request start -> answer
    starts: list[float] = field(default_factory=list)  # perf_counter at each move's request
    errors: Counter[str] = field(default_factory=Counter)
    late_ticks: int = 0  # rate mode: a move started later than its slot
    gaps: int = 0  # an update whose version did not follow the previous one
    updates_received: int = 0
    lobby_updates: int = 0
    games_finished: int = 0
    recording: bool = False

    def error(self, kind: str) -> None:
        """Count an error (always, warmup included: errors are never noise)."""
        self.errors[kind] += 1


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an already sorted list (nan when empty)."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


# --------------------------------------------------------------------------- process figures


def read_rss_kib(pid: int) -> int | None:
    """VmRSS of a process in KiB, from /proc."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def read_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (all its threads), from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def read_schedstat(pid: int) -> tuple[float, float] | None:
    """(seconds on a CPU, seconds runnable but waiting for a CPU) of a process's main
    thread, from /proc/PID/task/PID/schedstat."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat", encoding="ascii") as stat:
            running, waiting, _slices = stat.read().split()
    except (OSError, ValueError):
        return None
    return int(running) / 1e9, int(waiting) / 1e9


def read_machine_cpu() -> tuple[float, float] | None:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            values = [int(v) for v in stat.readline().split()[1:]]
    except OSError:
        return None
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    total = sum(values[:8])
    return total - idle, total


# --------------------------------------------------------------------------- the run


def summed(values: list[float | None] | list[int | None]) -> float | None:
    """The sum of per-process figures; None when there are none or one is unknown."""
    if not values or any(v is None for v in values):
        return None
    return float(sum(v for v in values if v is not None))


def read_rss_total_kib(pids: list[int]) -> int | None:
    """VmRSS summed over the server processes, in KiB (None if one is unknown)."""
    total = summed([read_rss_kib(pid) for pid in pids])
    return None if total is None else int(total)


@dataclass
class Sample:
    """Process and machine counters at one instant (server figures per server process)."""

    at: float
    server_cpus: list[float | None]
    own_cpu: float
    machine: tuple[float, float] | None
    # Per server process, its main thread: (on CPU, runnable-waiting).
    main_threads: list[tuple[float, float] | None]

    @classmethod
    def take(cls, pids: list[int]) -> Sample:
        """Read the counters now."""
        return cls(
            at=time.perf_counter(),
            server_cpus=[read_cpu_seconds(pid) for pid in pids],
            own_cpu=time.process_time(),
            machine=read_machine_cpu(),
            main_threads=[read_schedstat(pid) for pid in pids],
        )

    @property
    def server_cpu(self) -> float | None:
        """CPU seconds of all the server processes together."""
        return summed(self.server_cpus)


def main_thread_shares(before: Sample, after: Sample, measured: float) -> list[dict[str, float]]:
    """Per server process: share of the window its main thread was on a CPU / waiting."""
    shares = []
    for first, last in zip(before.main_threads, after.main_threads, strict=True):
        if first is None or last is None or not measured:
            return []
        shares.append(
            {
                "on_cpu": (last[0] - first[0]) / measured,
                "waiting_for_cpu": (last[1] - first[1]) / measured,
            }
        )
    return shares


def start_profilers(
    out: str | None, pids: list[int], seconds: float
) -> list[subprocess.Popen[bytes]]:
    """`py-spy record` of each server process over the measured window, if asked and
    possible (with several processes, OUT gets a `.pN` suffix before its extension)."""
    if out is None:
        return []
    if not pids:
        print("note: --py-spy needs the server's PID (--server-pid)", file=sys.stderr)
        return []
    executable = Path(sys.executable).parent / "py-spy"
    if not executable.exists():
        print(f"note: no {executable}; pip install py-spy to profile", file=sys.stderr)
        return []
    if len(pids) == 1:
        return [start_profiler(str(executable), out, pids[0], seconds)]
    path = Path(out)
    return [
        start_profiler(
            str(executable), str(path.with_name(f"{path.stem}.p{n}{path.suffix}")), pid, seconds
        )
        for n, pid in enumerate(pids)
    ]


def start_profiler(executable: str, out: str, pid: int, seconds: float) -> subprocess.Popen[bytes]:
    """One `py-spy record` of one process."""
    fmt = "speedscope" if out.endswith(".json") else "flamegraph" if out.endswith(".svg") else "raw"
    command = [
        executable,
        "record",
        "--pid",
        str(pid),
        "--rate",
        "200",
        "--gil",
        "--nonblocking",
    ]
    command += ["--duration", str(max(1, round(seconds))), "--format", fmt, "-o", out]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stop_profiler(profiler: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait (bounded) for py-spy to write its file."""
    try:
        _out, err = profiler.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        profiler.kill()
        profiler.communicate(timeout=10)
        print("note: py-spy did not finish in time", file=sys.stderr)
        return
    if profiler.returncode != 0:
        print(f"note: py-spy failed: {err.decode(errors='replace')[-500:]}", file=sys.stderr)


def write_samples(path: str, stats: Stats, origin: float) -> None:
    """One CSV row per measured move, in start order."""
    rows = sorted(zip(stats.starts, stats.latencies, stats.http_latencies, strict=True))
    lines = ["start_s,latency_ms,http_ms"]
    lines += [f"{s - origin:.4f},{lat * 1000:.2f},{http * 1000:.2f}" for s, lat, http in rows]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- calibration


def calibration_us() -> float:
    """The machine's speed right now: µs per `sum(range(10000))` (best of 5 x 200), the
    figure `python3 -m timeit "sum(range(10000))"` prints. Printed beside every run's
    figures, since absolute timings move with the machine and its neighbours."""
    best = min(timeit.repeat("sum(range(10000))", number=200, repeat=5))
    return best / 200 * 1e6


def calibration_line(us: float) -> str:
    """The calibration as printed on every run."""
    return f'calibration:        python3 -m timeit "sum(range(10000))" -> {us:.1f} µs per loop'


# --------------------------------------------------------------------------- load generator GC


class LoadgenGc:
    """Keeps the load generator's own garbage collector out of the measured latency.

    After setup everything alive (sockets, clients, accounts) is frozen, so collections
    never traverse it again, and during the measured window the collector is off (or,
    with `mode="on"`, left at its default thresholds); every collection's pause is
    recorded, so the report shows what the load generator paused for."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.pauses: list[float] = []  # s, each collection while recording
        self.recording = False
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self.recording:
            self.pauses.append(time.perf_counter() - self._started)

    def settle(self) -> None:
        """Setup is over, before any move: collect and freeze what lives, and (mode "off")
        stop collecting. (A full collection of thousands of sockets pauses this process
        for a few hundred ms: at the start of the window it delayed every update then.)"""
        gc.collect()
        gc.freeze()
        if self.mode == "off":
            gc.disable()

    def measure(self) -> None:
        """The measured window starts: record every collection from now on."""
        self.recording = True

    def done(self) -> None:
        """The window is over: collect again (outside the measured window)."""
        self.recording = False
        gc.enable()
        gc.unfreeze()
        gc.callbacks.remove(self._callback)

    def figures(self) -> dict[str, Any]:
        """Collections and pauses while recording."""
        return {
            "mode": self.mode,
            "collections": len(self.pauses),
            "pause_total_ms": sum(self.pauses) * 1000,
            "pause_max_ms": max(self.pauses, default=0.0) * 1000,
        }


async def server_gc_collections(url: str) -> dict[str, float] | None:
    """The garbage collections a server process has run so far, by generation ("0" young,
    "2" full), from its /metrics (prometheus_client's GC collector); None if unavailable."""
    import httpx

    metrics_url = url.rsplit("/", 1)[0] + "/metrics"
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            text = (await client.get(metrics_url)).text
    except httpx.HTTPError:
        return None
    counts: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith('python_gc_collections_total{generation="'):
            counts[line.split('"')[1]] = float(line.rsplit(" ", 1)[1])
    return counts or None
