"""The measurement scripts run end to end on small loads (their figures are printed, never
asserted: only that they measured real moves without errors)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.services import redis_url, require_service

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))

import scaling  # noqa: E402


def run_script(name: str, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )


def test_the_load_test_plays_real_moves_on_sqlite(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_script(
        "loadtest.py", "--tables", "2", "--duration", "2", "--warmup", "0", "--json", str(out)
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["moves"] > 0 and result["subscriptions"] == 8
    assert result["errors"] == {} and result["version_gaps"] == 0
    assert "moves/s:" in done.stdout and "latency" in done.stdout


def test_the_scaling_run_compares_one_and_two_processes(tmp_path: Path) -> None:
    require_service("PostgreSQL", "127.0.0.1", 5432)
    redis_url()
    out = tmp_path / "scaling.json"
    done = run_script(
        "scaling.py", "--tables", "2", "--duration", "2", "--rate", "2", "--json", str(out)
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert figures["one"]["server_processes"] == 1 and figures["many"]["server_processes"] == 2
    for run in (figures["one"], figures["many"]):
        assert run["moves"] > 0 and run["errors"] == {} and run["version_gaps"] == 0
    assert "scaling ratio:" in done.stdout


def run_figures(processes: int, moves_per_s: float, server_ms: float, machine_ms: float) -> Any:
    return {
        "server_processes": processes,
        "moves_per_s": moves_per_s,
        "server_cpu_ms_per_move": server_ms,
        "machine_cpu_ms_per_move": machine_ms,
        "cpu_count": 2,
    }


def test_scaling_ratios_come_from_the_two_runs() -> None:
    figures = scaling.ratios(run_figures(1, 400, 2.0, 3.0), run_figures(2, 500, 2.5, 4.0))
    assert figures["ratio"] == 500 / 400
    assert figures["efficiency"] == 2.0 / 2.5
    assert figures["projected"] == 2 * 2.0 / 2.5
    # 2 cores at 4 ms of machine CPU per move: 500 moves/s at most, over 400.
    assert figures["machine_ceiling"] == 2 * 1000 / 4.0 / 400


def test_the_bot_benchmark_times_every_level() -> None:
    done = run_script(
        "bench_bots.py", "--games", "2", "--expert-games", "1", "--expert-ms", "2", timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "calibration" in done.stdout and "loops" in done.stdout
    for level in ("BASIC", "STANDARD", "EXPERT"):
        assert any(line.startswith(level) for line in done.stdout.splitlines()), level


def test_the_profiles_benchmark_measures_pages_and_game_ends_on_postgres() -> None:
    require_service("PostgreSQL", "127.0.0.1", 5432)
    done = run_script("bench_profiles.py", "--players", "200", "--games", "1000", "--samples", "10")
    assert done.returncode == 0, done.stderr
    assert "calibration:" in done.stdout and "usec per loop" in done.stdout
    for line in ("leaderboard, first page", "profile + its first games page", "rated"):
        assert line in done.stdout
    assert "extra cost of a game's end" in done.stdout
