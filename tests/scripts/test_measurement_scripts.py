"""The measurement scripts run end to end on small loads (their figures are printed, never
asserted: only that they measured real moves without errors)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import redis_url, require_service

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))

import scaling  # noqa: E402
from loadtest import cli, compare  # noqa: E402


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
        "loadtest", "--tables", "2", "--duration", "2", "--warmup", "0", "--json", str(out)
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["moves"] > 0 and result["subscriptions"] == 8
    assert result["errors"] == {} and result["version_gaps"] == 0
    assert result["loadgen_gc"]["mode"] == "off" and result["calibration_us"] > 0
    assert "moves/s:" in done.stdout and "latency" in done.stdout
    assert "calibration:" in done.stdout


def test_a_scaled_down_spectator_scenario_reaches_every_spectator(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_script(
        "loadtest", "spectators-500", "--scale", "0.01", "--duration", "2", "--warmup", "0",
        "--quiet", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["scenario"] == "spectators-500" and result["subscriptions"] == 4 + 5
    assert result["moves"] > 0 and result["errors"] == {} and result["version_gaps"] == 0
    # Every move reached the 4 players and the 5 spectators.
    assert result["updates_received"] >= 9 * result["moves"]


def test_a_scenario_sets_the_load_and_flags_win() -> None:
    args = cli.parse_args(["tables-1000", "--scale", "0.1"])
    assert (args.tables, args.rate, args.spectators) == (100, 0.25, 0)
    args = cli.parse_args(["saturate-50", "--tables", "3"])
    assert args.tables == 3 and args.saturate and not args.idle


def test_compare_runs_both_builds_with_the_same_load() -> None:
    args = cli.parse_args(["spectators-500", "--scale", "0.1", "--compare", "HEAD"])
    argv = compare.run_argv(args)
    again = cli.parse_args(argv)
    assert (again.tables, again.spectators, again.rate) == (1, 50, 2.0)
    assert again.compare is None and again.quiet


def test_compare_ratios_are_work_tree_over_baseline() -> None:
    def result(cpu: float, p95: float) -> dict[str, Any]:
        return {"server_cpu_ms_per_move": cpu, "latency_ms": {"p95": p95}, "errors": {}}

    runs = {"baseline": [result(10, 100), result(12, 300)], "work": [result(3, 50), result(2, 40)]}
    _text, table = compare.summary(runs, "ba71337")
    assert table["server CPU ms/move"]["ratio"] == 2.5 / 11
    assert table["p95 ms"]["ratio"] == 45 / 200
    assert table["moves/s"]["ratio"] is None


@pytest.mark.xdist_group("redis")
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


def test_the_quick_play_load_seats_every_player_once_on_sqlite(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_script(
        "loadtest", "--players", "8", "--processes", "1", "--quiet", "--json", str(out)
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["matched"] == 8 and result["tables"] >= 2
    assert result["seated_twice"] == 0 and result["errors"] == {}
    assert result["time_to_matched_ms"]["p50"] > 0
    assert "time to MATCHED" in done.stdout and "calibration" in done.stdout


def test_the_quick_play_scenario_is_400_players_on_two_processes() -> None:
    args = cli.parse_args(["quickplay-400"])
    assert (args.players, args.processes, args.postgres, args.spread) == (400, 2, True, 2.0)
    assert cli.parse_args(["quickplay-400", "--players", "40"]).players == 40


def test_the_matcher_benchmark_times_a_wave() -> None:
    done = run_script("bench_matcher.py", "--tickets", "200", "--repeat", "1")
    assert done.returncode == 0, done.stderr
    assert "calibration" in done.stdout and "burst" in done.stdout and "steady" in done.stdout
