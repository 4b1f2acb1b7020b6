"""`spades serve` counting the Python function calls it makes (every thread), a measure
of the server's work that a crowded machine does not distort (CPU seconds swell when
neighbours thrash the caches). On SIGUSR1 the count so far is written to the file named
by SPADES_CALLPROBE_OUT. The profiler slows the server several times: compare counts,
not timings, of a run with --count-calls.

Run as a file by the build's own Python, so that it counts whichever build `app` is."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

_calls = 0


def _profile(_frame: FrameType, event: str, _arg: Any) -> None:
    global _calls
    if event == "call":
        _calls += 1


def _report(_signum: int, _frame: FrameType | None) -> None:
    out = Path(os.environ["SPADES_CALLPROBE_OUT"])
    temporary = out.with_suffix(".tmp")
    temporary.write_text(str(_calls), encoding="ascii")
    temporary.replace(out)


def main() -> None:
    """Count from the start, then run the server's own command line."""
    signal.signal(signal.SIGUSR1, _report)
    threading.setprofile(_profile)
    sys.setprofile(_profile)
    from app.cli import main as spades

    sys.argv[0] = "spades"
    spades()


if __name__ == "__main__":
    main()
