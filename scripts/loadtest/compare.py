"""Compare mode: a baseline commit's server and this work tree's, under the same load
from this work tree's load generator, run alternately in one session (ABBA order), so
that the machine's drift and its neighbours weigh on both alike; prints each run and the
ratios of the medians (work tree / baseline).

The baseline is checked out in a temporary `git worktree` (detached) with its own venv
(`pip install -e`); `--keep-baseline` keeps both for the next comparison."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .measure import calibration_line, calibration_us
from .servers import ROOT, Build

INSTALL_TIMEOUT = 900.0
RUN_TIMEOUT = 3600.0
PACKAGE = Path(__file__).resolve().parent

# (label, path in the result, digits)
FIGURES = (
    ("moves/s", ("moves_per_s",), 1),
    ("p50 ms", ("latency_ms", "p50"), 1),
    ("p95 ms", ("latency_ms", "p95"), 1),
    ("p99 ms", ("latency_ms", "p99"), 1),
    ("server CPU ms/move", ("server_cpu_ms_per_move",), 2),
    ("Python calls/move", ("server_calls_per_move",), 0),
    ("KiB/socket (RSS)", ("kib_per_connection",), 1),
    ("server RSS end KiB", ("server_rss_kib", "end"), 0),
)


def git(*args: str, cwd: Path = ROOT) -> str:
    """Run git in the work tree; its stdout."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def prepare_baseline(commit: str) -> tuple[Build, Path]:
    """A worktree of `commit` with its own venv (reused when already there)."""
    directory = Path(tempfile.gettempdir()) / f"spades-baseline-{commit[:12]}"
    spades = directory / ".venv" / "bin" / "spades"
    if spades.exists():
        print(f"baseline: reusing {directory}", file=sys.stderr)
        return Build(directory, spades), directory
    if directory.exists():
        git("worktree", "remove", "--force", str(directory))
    print(f"baseline: git worktree {directory} at {commit[:12]} ...", file=sys.stderr)
    git("worktree", "add", "--detach", str(directory), commit)
    subprocess.run([sys.executable, "-m", "venv", str(directory / ".venv")], check=True)
    print("baseline: pip install -e (its own venv) ...", file=sys.stderr)
    subprocess.run(
        [str(directory / ".venv" / "bin" / "pip"), "install", "-q", "-e", str(directory)],
        check=True,
        timeout=INSTALL_TIMEOUT,
    )
    return Build(directory, spades), directory


def remove_baseline(directory: Path) -> None:
    """Remove the baseline's worktree (its venv inside it goes too)."""
    try:
        git("worktree", "remove", "--force", str(directory))
    except RuntimeError as exc:
        print(f"note: {exc}", file=sys.stderr)
        shutil.rmtree(directory, ignore_errors=True)


def run_argv(args: argparse.Namespace) -> list[str]:
    """The flags of one run: the resolved load (so both builds get exactly the same)."""
    argv = [
        *(["--tables", str(args.tables), "--rate", str(args.rate)]),
        *(["--duration", str(args.duration), "--warmup", str(args.warmup)]),
        *(["--spectators", str(args.spectators), "--loadgen-gc", args.loadgen_gc]),
        *(["--setup-concurrency", str(args.setup_concurrency), "--quiet"]),
        *(["--processes", str(args.processes), "--server-log-level", args.server_log_level]),
    ]
    if args.scenario:
        argv = [args.scenario, *argv]
    flags = ("saturate", "idle", "lobby", "postgres", "lockstep", "random_deals", "no_uvloop")
    for flag in (*flags, "count_calls"):
        if getattr(args, flag):
            argv.append("--" + flag.replace("_", "-"))
    return argv


def run_once(args: argparse.Namespace, build: Build, label: str, out: Path) -> dict[str, Any]:
    """One run of the load against `build` (a fresh process of this load generator)."""
    command = [sys.executable, str(PACKAGE), *run_argv(args), "--json", str(out)]
    command += ["--spades", str(build.spades), "--build-label", label]
    done = subprocess.run(
        command, cwd=ROOT, timeout=RUN_TIMEOUT, check=False, text=True, stdout=subprocess.PIPE
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {label} run failed ({done.returncode})")
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def figure(result: dict[str, Any], path: tuple[str, ...]) -> float | None:
    """A figure of a result by its path (None when missing)."""
    value: Any = result
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return float(value) if isinstance(value, int | float) else None


def median(results: list[dict[str, Any]], path: tuple[str, ...]) -> float | None:
    """The median of a figure over runs (None if a run lacks it)."""
    values = [figure(r, path) for r in results]
    if not values or any(v is None for v in values):
        return None
    return statistics.median(v for v in values if v is not None)


def number(value: float | None, digits: int) -> str:
    """A figure for the table."""
    return "n/a" if value is None else f"{value:,.{digits}f}"


def summary(runs: dict[str, list[dict[str, Any]]], commit: str) -> tuple[str, dict[str, Any]]:
    """The comparison table (medians, ratio work/baseline) and its figures."""
    lines = [
        "",
        f"=== compare: work tree vs baseline {commit[:12]} "
        f"({len(runs['baseline'])} and {len(runs['work'])} runs, alternating; medians) ===",
        f"{'figure':<22}{'baseline':>12}{'work tree':>12}{'ratio':>9}",
    ]
    table: dict[str, Any] = {}
    for name, path, digits in FIGURES:
        base, work = median(runs["baseline"], path), median(runs["work"], path)
        ratio = work / base if base and work is not None else None
        table[name] = {"baseline": base, "work": work, "ratio": ratio}
        lines.append(
            f"{name:<22}{number(base, digits):>12}{number(work, digits):>12}"
            f"{'n/a' if ratio is None else f'{ratio:.2f}x':>9}"
        )
    errors = {label: [r["errors"] for r in rs if r["errors"]] for label, rs in runs.items()}
    lines.append(f"errors: {errors if any(errors.values()) else 'none'}")
    return "\n".join(lines), table


def compare(args: argparse.Namespace, _argv: list[str]) -> int:
    """Run both builds alternately; print each run and the ratios."""
    commit = git("rev-parse", "--verify", f"{args.compare}^{{commit}}")
    head = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    print(calibration_line(calibration_us()), file=sys.stderr)
    baseline, directory = prepare_baseline(commit)
    work = Build.here()
    runs: dict[str, list[dict[str, Any]]] = {"baseline": [], "work": []}
    builds = {"baseline": baseline, "work": work}
    failures = {"baseline": 0, "work": 0}
    try:
        with tempfile.TemporaryDirectory(prefix="spades-compare-") as scratch:
            for round_number in range(args.rounds):
                order = ("baseline", "work") if round_number % 2 == 0 else ("work", "baseline")
                for label in order:
                    out = Path(scratch) / f"{label}-{round_number}.json"
                    name = f"baseline {commit[:12]}" if label == "baseline" else "work tree"
                    print(f"round {round_number + 1}/{args.rounds}: {name} ...", file=sys.stderr)
                    try:
                        result = run_once(args, builds[label], name, out)
                    except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
                        # One failed run (a timeout on a crowded machine) is reported
                        # and left out; the comparison goes on with the others.
                        failures[label] += 1
                        print(f"  {name:<22} FAILED: {exc}")
                        continue
                    runs[label].append(result)
                    print(run_line(name, result))
    finally:
        if not args.keep_baseline:
            remove_baseline(directory)
    text, table = summary(runs, commit)
    print(text)
    if any(failures.values()):
        print(f"failed runs (left out): {failures}")
    after = calibration_us()
    print(calibration_line(after))
    if args.json:
        document = {
            "baseline_commit": commit,
            "work_tree_head": head,
            "work_tree_dirty": dirty,
            "table": table,
            "runs": runs,
            "failed_runs": failures,
            "calibration_us_end": after,
        }
        Path(args.json).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


def run_line(name: str, result: dict[str, Any]) -> str:
    """One run in one line, with the calibration read just before it."""
    lat = result["latency_ms"]
    cpu = result.get("server_cpu_ms_per_move")
    kib = result.get("kib_per_connection")
    return (
        f"  {name:<22} calib {result['calibration_us']:6.1f} µs  "
        f"{result['moves_per_s']:7.1f} moves/s  p50/p95/p99 {lat['p50']:.1f}/{lat['p95']:.1f}/"
        f"{lat['p99']:.1f} ms  CPU/move {'n/a' if cpu is None else f'{cpu:.2f}'} ms  "
        f"{'n/a' if kib is None else f'{kib:.1f}'} KiB/socket  loadgen GC "
        f"{result['loadgen_gc']['pause_total_ms']:.0f} ms  errors {sum(result['errors'].values())}"
    )
