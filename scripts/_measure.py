"""What every measurement script prints beside its figures: the machine calibration.

Absolute timings move with the machine and its neighbours, so each script prints
`python3 -m timeit "sum(range(10000))"` as measured right now. Scripts import this
as `from _measure import calibration` (a script's own folder is on sys.path)."""

from __future__ import annotations

import subprocess
import sys


def calibration() -> str:
    """`python3 -m timeit "sum(range(10000))"` on this machine, now (its output line)."""
    done = subprocess.run(
        [sys.executable, "-m", "timeit", "sum(range(10000))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()
