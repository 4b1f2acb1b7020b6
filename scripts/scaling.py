"""Scaling: the same load against 1 and N server processes (PostgreSQL + Redis), side by side.

Runs `scripts/loadtest --postgres` twice, with 1 process and with N (players of each
table spread over the processes, so every update crosses Redis), and prints for both:
moves/s, p95 latency (request -> all 4 subscribers updated), server CPU per move and
the machine's busy cores; then the scaling ratio (moves/s with N over moves/s with 1),
the efficiency (server CPU per move with 1 process over with N) and the ratio it
projects with a spare core per process (N x efficiency), and the highest ratio this machine
could show at all: its cores divided by the whole machine's CPU per move in the N
process run (servers, PostgreSQL, Redis and the load generator together), over the
1-process moves/s.

Usage (from the repository root):

    .venv/bin/python scripts/scaling.py                       # 50 tables, saturate, 2 processes
    .venv/bin/python scripts/scaling.py --processes 3 --tables 100 --rate 1 --duration 60

Flags: --processes N (default 2), --tables K (default 50), --rate R (moves/s per table;
without it the tables saturate), --duration S (default 30), --json OUT (both runs and the
ratios), --quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

LOADTEST = Path(__file__).with_name("loadtest")  # the package, run as a directory
RUN_TIMEOUT = 3600.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line flags."""
    parser = argparse.ArgumentParser(description="The same load on 1 and N server processes.")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--rate", type=float, default=None, help="moves/s per table")
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--json", default=None)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if not 2 <= args.processes <= 16:
        parser.error("--processes must be between 2 and 16")
    return args


def run_loadtest(args: argparse.Namespace, processes: int) -> dict[str, Any]:
    """One load test run; its figures (the loadtest's --json output)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "result.json"
        command = [
            sys.executable,
            str(LOADTEST),
            "--postgres",
            "--processes",
            str(processes),
            "--tables",
            str(args.tables),
            "--duration",
            str(args.duration),
            "--json",
            str(out),
            "--quiet",
        ]
        command += ["--rate", str(args.rate)] if args.rate is not None else ["--saturate"]
        if not args.quiet:
            print(f"running {processes} process(es) ...", file=sys.stderr)
        subprocess.run(command, check=True, timeout=RUN_TIMEOUT, stdout=subprocess.DEVNULL)
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return result


def ratios(one: dict[str, Any], many: dict[str, Any]) -> dict[str, float | None]:
    """Scaling ratio, scaling per server CPU, and this machine's ceiling on the ratio."""
    moves_one, moves_many = one["moves_per_s"], many["moves_per_s"]
    cpu_one, cpu_many = one["server_cpu_ms_per_move"], many["server_cpu_ms_per_move"]
    machine_many = many["machine_cpu_ms_per_move"]
    cores = many["cpu_count"] or os.cpu_count() or 1
    efficiency = cpu_one / cpu_many if cpu_one and cpu_many else None
    return {
        "ratio": moves_many / moves_one if moves_one else None,
        "efficiency": efficiency,
        "projected": many["server_processes"] * efficiency if efficiency else None,
        "machine_ceiling": (
            cores * 1000 / machine_many / moves_one if machine_many and moves_one else None
        ),
    }


def _num(value: float | None, digits: int = 1, unit: str = "") -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}{unit}"


def report(one: dict[str, Any], many: dict[str, Any], figures: dict[str, float | None]) -> str:
    """The side-by-side table."""
    n = many["server_processes"]
    mode = (
        "saturate"
        if one["mode"] == "saturate"
        else f"{one['rate_per_table']:g} move/s per table (target {one['target_moves_per_s']:g})"
    )
    rows = [
        ("moves/s", _num(one["moves_per_s"]), _num(many["moves_per_s"])),
        (
            "p95 latency",
            _num(one["latency_ms"]["p95"], unit=" ms"),
            _num(many["latency_ms"]["p95"], unit=" ms"),
        ),
        (
            "server CPU per move",
            _num(one["server_cpu_ms_per_move"], 2, " ms"),
            _num(many["server_cpu_ms_per_move"], 2, " ms"),
        ),
        (
            "machine busy (cores)",
            _num(one["machine_cpu_cores_busy"], 2),
            _num(many["machine_cpu_cores_busy"], 2),
        ),
        ("errors", str(sum(one["errors"].values())), str(sum(many["errors"].values()))),
    ]
    lines = [
        "=== Spades scaling (PostgreSQL + Redis) ===",
        f"load:               {one['tables']} tables, {mode}, {one['duration_s']:.0f} s measured",
        f"{'':22}{'1 process':>16}{f'{n} processes':>16}",
        *(f"{name:22}{a:>16}{b:>16}" for name, a, b in rows),
        f"scaling ratio:      {_num(figures['ratio'], 2)}x (moves/s with {n} over 1)",
        f"efficiency:         {_num(figures['efficiency'], 2)} (server CPU per move with 1 "
        f"process over with {n})",
        f"projected ratio:    {_num(figures['projected'], 2)}x ({n} x efficiency: with a core "
        "per process to spare)",
        f"machine ceiling:    {_num(figures['machine_ceiling'], 2)}x (the highest ratio this "
        f"{many['cpu_count']}-core machine could show with everything on it)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = parse_args(argv)
    try:
        one = run_loadtest(args, 1)
        many = run_loadtest(args, args.processes)
    except (subprocess.SubprocessError, OSError, ValueError) as exc:
        print(f"scaling run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    figures = ratios(one, many)
    print(report(one, many, figures))
    if args.json:
        Path(args.json).write_text(
            json.dumps({"one": one, "many": many, **figures}, indent=2) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
