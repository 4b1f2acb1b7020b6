"""`spades serve` watched for event-loop stalls: a callback on the server's loop beats
every millisecond or so, and a watchdog thread, whenever the beat is late by more than
SPADES_STALLPROBE_MS (default 50), samples the main thread's stack every 2 ms until the
loop beats again. Each stall is appended to SPADES_STALLPROBE_OUT as one JSON line:
when it started (epoch s), how long it lasted (ms), and its stacks by sample count,
innermost frame last. A stall that no Python stack explains (the samples show the loop
waiting) is the process not getting a CPU, or C code outside Python.

Run as a file by the build's own Python (`scripts/loadtest ... --stall-probe`)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

_last_beat = time.monotonic()
_BEAT_S = 0.001
_SAMPLE_S = 0.002


def _beat(loop: asyncio.AbstractEventLoop) -> None:
    global _last_beat
    _last_beat = time.monotonic()
    loop.call_later(_BEAT_S, _beat, loop)


def _watched(factory: Any) -> Any:
    def new_event_loop(*args: Any, **kwargs: Any) -> Any:
        loop = factory(*args, **kwargs)
        loop.call_soon(_beat, loop)
        return loop

    return new_event_loop


def _stack(frame: Any) -> str:
    entries = traceback.extract_stack(frame)[-12:]
    return " > ".join(f"{Path(e.filename).name}:{e.lineno}:{e.name}" for e in entries)


def _watch(main_ident: int, threshold_s: float, out: Path, stop: threading.Event) -> None:
    while not stop.is_set():
        time.sleep(_SAMPLE_S)
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
        record = {
            "at": round(started, 3),
            "ms": round((time.monotonic() - beat_seen) * 1000, 1),
            "stacks": stacks.most_common(8),
        }
        with out.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")


def main() -> None:
    """Watch the loop from the start, then run the server's own command line."""
    out = Path(os.environ["SPADES_STALLPROBE_OUT"])
    threshold_s = float(os.environ.get("SPADES_STALLPROBE_MS", "50")) / 1000
    asyncio.new_event_loop = _watched(asyncio.new_event_loop)
    try:
        import uvloop

        uvloop.new_event_loop = _watched(uvloop.new_event_loop)
    except ImportError:
        pass
    watchdog = threading.Thread(
        target=_watch,
        args=(threading.get_ident(), threshold_s, out, threading.Event()),
        daemon=True,
    )
    watchdog.start()
    from app.cli import main as spades

    sys.argv[0] = "spades"
    spades()


if __name__ == "__main__":
    main()
