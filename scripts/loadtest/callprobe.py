"""`spades serve` counting the Python function calls it makes (every thread), a measure
of the server's work that a crowded machine does not distort (CPU seconds swell when
neighbours thrash the caches). On SIGUSR1 the count so far is written to the file named
by SPADES_CALLPROBE_OUT. The profiler slows the server several times: compare counts,
not timings, of a run with --count-calls.

With SPADES_CALLPROBE_FUNCS=PREFIX it also counts by function and writes each report's
counts to PREFIX.N.json (N = 1, 2, ...): the difference of two reports shows where the
calls of a measured window went (`python scripts/loadtest/callprobe.py --diff A B`).

Run as a file by the build's own Python, so that it counts whichever build `app` is."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

_calls = 0
_by_code: dict[Any, int] = {}
_reports = 0


def _profile(_frame: FrameType, event: str, _arg: Any) -> None:
    global _calls
    if event == "call":
        _calls += 1


def _profile_by_function(frame: FrameType, event: str, _arg: Any) -> None:
    global _calls
    if event == "call":
        _calls += 1
        code = frame.f_code
        _by_code[code] = _by_code.get(code, 0) + 1


def _report(_signum: int, _frame: FrameType | None) -> None:
    global _reports
    out = Path(os.environ["SPADES_CALLPROBE_OUT"])
    prefix = os.environ.get("SPADES_CALLPROBE_FUNCS")
    if prefix:
        _reports += 1
        counts = {
            f"{code.co_filename}:{code.co_firstlineno}:{code.co_qualname}": n
            for code, n in list(_by_code.items())
        }
        Path(f"{prefix}.{_reports}.json").write_text(json.dumps(counts), encoding="utf-8")
    temporary = out.with_suffix(".tmp")
    temporary.write_text(str(_calls), encoding="ascii")
    temporary.replace(out)


def _library(function: str) -> str:
    path = function.split(":", 1)[0]
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/", 1)[0]
    if "/app/" in path:
        return "app/" + path.split("/app/", 1)[1].split("/", 1)[0]
    return "python" if "/lib/python" in path else path


def diff(before: str, after: str, top: int = 40) -> None:
    """Print the calls made between two reports, by library and by function."""
    a = json.loads(Path(before).read_text(encoding="utf-8"))
    b = json.loads(Path(after).read_text(encoding="utf-8"))
    delta = {f: n - a.get(f, 0) for f, n in b.items() if n - a.get(f, 0) > 0}
    total = sum(delta.values())
    libraries: dict[str, int] = {}
    for function, n in delta.items():
        libraries[_library(function)] = libraries.get(_library(function), 0) + n
    print(f"{total:,} calls")
    for library, n in sorted(libraries.items(), key=lambda kv: -kv[1])[:20]:
        print(f"{n:>12,} {n / total:6.1%}  {library}")
    print()
    for function, n in sorted(delta.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{n:>12,} {n / total:6.1%}  {function.split('site-packages/')[-1]}")


def main() -> None:
    """Count from the start, then run the server's own command line."""
    if sys.argv[1:2] == ["--diff"]:
        diff(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 40)
        return
    signal.signal(signal.SIGUSR1, _report)
    hook = _profile_by_function if os.environ.get("SPADES_CALLPROBE_FUNCS") else _profile
    threading.setprofile(hook)
    sys.setprofile(hook)
    from app.cli import main as spades

    sys.argv[0] = "spades"
    spades()


if __name__ == "__main__":
    main()
