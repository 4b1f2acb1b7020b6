"""`spades serve` with a garbage probe: every object the cycle collector finds is kept
(gc.DEBUG_SAVEALL) and, on SIGUSR1, the server collects, writes how many it found since
the last report (and of which types) to the JSON file named by SPADES_GC_PROBE_OUT, and
forgets them. Memory freed by reference counting never shows up there, so this counts
exactly what a hot path leaves to the cycle collector."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path
from types import FrameType


def _type_name(value: object) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def report(_signum: int, _frame: FrameType | None) -> None:
    """Collect now; write the cyclic garbage found since the last report; forget it."""
    gc.collect()
    found = Counter(_type_name(value) for value in gc.garbage)
    figures = {"garbage": len(gc.garbage), "types": dict(found.most_common(40))}
    # Forget them for good: once out of gc.garbage, cycles are unreachable again, so they
    # are collected (not saved) once before the probe goes back to saving.
    gc.set_debug(0)
    gc.garbage.clear()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    out = Path(os.environ["SPADES_GC_PROBE_OUT"])
    temporary = out.with_suffix(".tmp")
    temporary.write_text(json.dumps(figures), encoding="utf-8")
    temporary.replace(out)  # the reader never sees half a file


def main() -> None:
    """Install the probe, then run the server's own command line."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    signal.signal(signal.SIGUSR1, report)
    from app.cli import main as spades

    sys.argv[0] = "spades"
    spades()


if __name__ == "__main__":
    main()
