"""`spades serve` watched for event-loop stalls: a callback on the server's loop beats
every millisecond or so, and a watchdog thread, whenever the beat is late by more than
SPADES_STALLPROBE_MS (default 50), samples the main thread's stack every 2 ms until the
loop beats again. Each stall is appended to SPADES_STALLPROBE_OUT as one JSON line:
when it started (epoch s), how long it lasted (ms), and its stacks by sample count,
innermost frame last. A stall that no Python stack explains (the samples show the loop
waiting) is the process not getting a CPU, or C code outside Python.

To tell those apart, each record also says what the kernel saw meanwhile (Linux only):
how long the main thread ran (of that, in the kernel), its page faults, how long it
waited for a CPU on the run queue (/proc/self/task/TID/schedstat and stat), the CPU time
the hypervisor stole from the whole machine (/proc/stat, summed over CPUs), and the
garbage collections that overlapped the stall. A thread that neither ran nor waited
while the machine lost CPU time to steal was descheduled with its virtual machine; one
that ran all along while the watchdog got no samples held the GIL in C code.

The probe has a cost of its own (three /proc reads every 2 ms): at 500 tables the
server's CPU per move read 5.3-5.7 ms probed against 3.6-3.9 ms unprobed, so take CPU
figures from runs without it.

Run as a file by the build's own Python (`scripts/loadtest ... --stall-probe`)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
import traceback
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_last_beat = time.monotonic()
_BEAT_S = 0.001
_SAMPLE_S = 0.002


def _beat(loop: asyncio.AbstractEventLoop) -> None:
    global _last_beat
    _last_beat = time.monotonic()
    loop.call_later(_BEAT_S, _beat, loop)


# The process's recent garbage collections: (started, ended, generation, objects found
# unreachable), monotonic s.
_collections: deque[tuple[float, float, int, int]] = deque(maxlen=256)
_collecting_since = 0.0


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    global _collecting_since
    if phase == "start":
        _collecting_since = time.monotonic()
    else:
        _collections.append(
            (_collecting_since, time.monotonic(), info["generation"], info["collected"])
        )


def collections_between(start: float, end: float) -> list[list[float]]:
    """[generation, ms, objects collected] of each collection that overlapped start..end
    (monotonic s)."""
    return [
        [generation, round((ended - began) * 1000, 1), collected]
        for began, ended, generation, collected in list(_collections)
        if ended >= start and began <= end
    ]


def _watched(factory: Any) -> Any:
    def new_event_loop(*args: Any, **kwargs: Any) -> Any:
        loop = factory(*args, **kwargs)
        loop.call_soon(_beat, loop)
        return loop

    return new_event_loop


@dataclass(frozen=True)
class Clocks:
    """What the kernel has counted so far: for the watched thread, CPU time and time
    runnable but waiting for a CPU; for the machine, CPU time stolen by the hypervisor."""

    ran_ns: int = 0
    waited_ns: int = 0
    stolen_ms: int = 0
    system_ms: int = 0  # of ran_ns, in the kernel (page faults, system calls)
    faults: int = 0  # page faults, minor and major

    def since(self, earlier: Clocks) -> dict[str, float]:
        """The counts between `earlier` and this reading, in ms (and faults)."""
        return {
            "ran_ms": round((self.ran_ns - earlier.ran_ns) / 1e6, 1),
            "system_ms": self.system_ms - earlier.system_ms,
            "faults": self.faults - earlier.faults,
            "waited_ms": round((self.waited_ns - earlier.waited_ns) / 1e6, 1),
            "stolen_ms": self.stolen_ms - earlier.stolen_ms,
        }


_JIFFY_MS = 1000 // (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


def read_clocks(native_id: int) -> Clocks:
    """The kernel's counts now for thread `native_id` (zeros where /proc cannot tell)."""
    try:
        task = Path(f"/proc/self/task/{native_id}")
        ran, waited = (task / "schedstat").read_text().split()[:2]
        # After the command's closing parenthesis: fields 3.. of proc(5)'s stat.
        own = (task / "stat").read_text().rsplit(")", 1)[1].split()
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()  # "cpu user nice system idle iowait irq softirq steal"
        return Clocks(
            ran_ns=int(ran),
            waited_ns=int(waited),
            stolen_ms=int(fields[8]) * _JIFFY_MS,
            system_ms=int(own[12]) * _JIFFY_MS,
            faults=int(own[7]) + int(own[9]),
        )
    except (OSError, ValueError, IndexError):
        return Clocks()


def _before(readings: deque[tuple[float, Clocks]], moment: float) -> Clocks:
    """The newest reading taken at or before `moment` (else the oldest there is)."""
    chosen = readings[0][1] if readings else Clocks()
    for taken, clocks in readings:
        if taken > moment:
            break
        chosen = clocks
    return chosen


def _stack(frame: Any) -> str:
    entries = traceback.extract_stack(frame)[-12:]
    return " > ".join(f"{Path(e.filename).name}:{e.lineno}:{e.name}" for e in entries)


def _watch(
    main_ident: int, threshold_s: float, out: Path, stop: threading.Event, main_native: int = 0
) -> None:
    # Readings of the last second, to find the last one taken before a stall began (the
    # stall is only seen once it has lasted threshold_s, and may have stopped this thread).
    readings: deque[tuple[float, Clocks]] = deque(maxlen=int(1 / _SAMPLE_S))
    while not stop.is_set():
        time.sleep(_SAMPLE_S)
        readings.append((time.monotonic(), read_clocks(main_native)))
        late = time.monotonic() - _last_beat
        if late < threshold_s:
            continue
        started = time.time() - late
        stacks: Counter[str] = Counter()
        beat_seen = _last_beat
        while _last_beat == beat_seen and not stop.is_set():
            frame = sys._current_frames().get(main_ident)
            if frame is not None:
                stacks[_stack(frame)] += 1
            del frame
            time.sleep(_SAMPLE_S)
        ended = time.monotonic()
        record = {
            "at": round(started, 3),
            "ms": round((ended - beat_seen) * 1000, 1),
            **read_clocks(main_native).since(_before(readings, beat_seen)),
            "gc": collections_between(beat_seen, ended),
            "stacks": stacks.most_common(8),
        }
        readings.clear()
        with out.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")


def main() -> None:
    """Watch the loop from the start, then run the server's own command line."""
    out = Path(os.environ["SPADES_STALLPROBE_OUT"])
    threshold_s = float(os.environ.get("SPADES_STALLPROBE_MS", "50")) / 1000
    asyncio.new_event_loop = _watched(asyncio.new_event_loop)
    gc.callbacks.append(_on_gc)
    try:
        import uvloop

        uvloop.new_event_loop = _watched(uvloop.new_event_loop)
    except ImportError:
        pass
    watchdog = threading.Thread(
        target=_watch,
        args=(
            threading.get_ident(),
            threshold_s,
            out,
            threading.Event(),
            threading.get_native_id(),
        ),
        daemon=True,
    )
    watchdog.start()
    from app.cli import main as spades

    sys.argv[0] = "spades"
    spades()


if __name__ == "__main__":
    main()
