"""`spades tournament`: duplicate pairs, the statistics table, records that replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.rules.levels import BotLevel
from app.rules.record import ReplayError, replay_record
from app.rules.seats import Team
from app.tournament import percentile, run_tournament, wilson
from app.tournament.runner import play_pair


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def test_wilson_interval_matches_the_formula() -> None:
    low, high = wilson(75, 100)
    assert low == pytest.approx(0.6569, abs=1e-4) and high == pytest.approx(0.8245, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0 and percentile(values, 0.95) == 95.0


def test_a_duplicate_pair_deals_the_same_cards_with_the_levels_swapped() -> None:
    first, second = play_pair(11, BotLevel.STANDARD, BotLevel.BASIC, with_records=True)
    assert (first.a_team, second.a_team) == (Team.NORTH_SOUTH, Team.EAST_WEST)
    assert first.record is not None and second.record is not None
    assert first.record["hands"][0]["deal"] == second.record["hands"][0]["deal"]
    assert first.record["botLevels"] == {
        "NORTH": "STANDARD",
        "EAST": "BASIC",
        "SOUTH": "STANDARD",
        "WEST": "BASIC",
    }
    assert second.record["botLevels"]["NORTH"] == "BASIC"


def test_tournament_prints_the_table_and_writes_records_that_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    code, stdout, _ = run(
        capsys, "tournament", "--a", "standard", "--b", "BASIC", "--games", "3",
        "--seed", "4", "--out", str(out),
    )  # fmt: skip
    assert code == 0
    assert "6 games (3 seeds" in stdout and "games won by A:" in stdout and "95% CI" in stdout
    for row in ("contracts made", "contracts set", "NIL bids", "NIL made", "bags", "STANDARD"):
        assert row in stdout
    lines = out.read_text().splitlines()
    assert len(lines) == 6
    for line in lines:
        record = json.loads(line)
        assert set(record["botLevels"].values()) == {"STANDARD", "BASIC"}
        replay_record(record)
    code, _, err = run(capsys, "replay", str(out))
    assert code == 0 and "6 records replayed" in err


def test_same_seed_same_tournament() -> None:
    first = run_tournament(BotLevel.STANDARD, BotLevel.BASIC, 4, seed=3, progress=False)
    second = run_tournament(BotLevel.STANDARD, BotLevel.BASIC, 4, seed=3, progress=False)
    assert (first.a_wins, first.margins, first.a_stats) == (
        second.a_wins,
        second.margins,
        second.a_stats,
    )


def test_workers_play_the_same_games(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    run(capsys, "tournament", "--a", "BASIC", "--b", "STANDARD", "--games", "2", "--seed", "8",
        "--out", str(one))  # fmt: skip
    run(capsys, "tournament", "--a", "BASIC", "--b", "STANDARD", "--games", "2", "--seed", "8",
        "--workers", "2", "--out", str(two))  # fmt: skip
    assert one.read_text() == two.read_text()


def test_replay_refuses_a_bot_level_that_does_not_exist(tmp_path: Path) -> None:
    first, _ = play_pair(5, BotLevel.BASIC, BotLevel.BASIC, with_records=True)
    assert first.record is not None
    record = dict(first.record)
    record["botLevels"] = {"NORTH": "GENIUS"}
    with pytest.raises(ReplayError, match="botLevels"):
        replay_record(record)
    record["players"] = {**record["players"], "NORTH": "alice"}
    record["botLevels"] = {"NORTH": "BASIC"}
    with pytest.raises(ReplayError, match="not held by a bot"):
        replay_record(record)


def test_tournament_refuses_no_games(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "tournament", "--a", "BASIC", "--b", "BASIC", "--games", "0")
    assert code == 2 and "--games" in err
