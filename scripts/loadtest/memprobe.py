"""`spades serve` under tracemalloc: on SIGUSR1 the server writes a snapshot of its live
allocations to the file named by SPADES_MEMPROBE_OUT (written whole, then renamed).

Run as a file by the build's own Python (python memprobe.py serve --port ...), so that
it measures whichever build `app` is installed from."""

from __future__ import annotations

import gc
import os
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType

FRAMES = 8  # enough to see who allocated under library code


def snapshot(_signum: int, _frame: FrameType | None) -> None:
    """Collect, then dump a snapshot of what lives now."""
    gc.collect()
    out = Path(os.environ["SPADES_MEMPROBE_OUT"])
    temporary = out.with_suffix(".tmp")
    tracemalloc.take_snapshot().dump(str(temporary))
    temporary.replace(out)


def main() -> None:
    """Trace allocations from the start, then run the server's own command line."""
    tracemalloc.start(FRAMES)
    signal.signal(signal.SIGUSR1, snapshot)
    from app.cli import main as spades

    sys.argv[0] = "spades"
    spades()


if __name__ == "__main__":
    main()
