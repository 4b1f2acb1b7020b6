"""The `spades` command: `simulate` writes game records, `replay` checks them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.rules.bots import PolicyName
from app.rules.record import export_record, replay_record
from app.rules.simulate import game_seeds, play_game

SPADES = Path(sys.executable).with_name("spades")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the command in-process; return its exit code, stdout and stderr."""
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    code = info.value.code
    assert isinstance(code, int)
    return code, out, err


def summary(err: str) -> dict[str, str]:
    """The `name: value` lines of the simulate summary."""
    pairs = (line.split(":", 1) for line in err.splitlines() if ":" in line)
    return {name.strip(): value.strip() for name, value in pairs}


def records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def bids(recs: list[dict[str, Any]], value: str) -> int:
    return sum(b["bid"] == value for r in recs for h in r["hands"] for b in h["bids"])


# ----------------------------------------------------------------------------- simulate


def test_simulate_writes_one_record_per_line_to_the_out_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "games.jsonl"
    code, stdout, _ = run(capsys, "simulate", "--games", "3", "--seed", "5", "--out", str(out))
    assert code == 0
    assert stdout == ""
    text = out.read_text(encoding="utf-8")
    assert text.endswith("\n") and text.count("\n") == 3
    recs = records(text)
    expected = [export_record(play_game(s)[0]) for s in game_seeds(3, 5)]
    assert recs == expected
    for rec in recs:
        assert rec["format"] == "spades-record/1" and "winner" in rec
        replay_record(rec)


def test_simulate_writes_to_stdout_by_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, stdout, _ = run(capsys, "simulate", "--games", "2", "--seed", "9")
    assert code == 0
    assert len(records(stdout)) == 2
    out = tmp_path / "games.jsonl"
    run(capsys, "simulate", "--games", "2", "--seed", "9", "--out", str(out))
    assert out.read_text(encoding="utf-8") == stdout


def test_same_seed_gives_byte_identical_output(capsys: pytest.CaptureFixture[str]) -> None:
    first = run(capsys, "simulate", "--games", "4", "--seed", "123")[1]
    second = run(capsys, "simulate", "--games", "4", "--seed", "123")[1]
    other = run(capsys, "simulate", "--games", "4", "--seed", "124")[1]
    assert first == second
    assert first != other
    random_first = run(capsys, "simulate", "--games", "4", "--seed", "1", "--policy", "random")[1]
    random_second = run(capsys, "simulate", "--games", "4", "--seed", "1", "--policy", "random")[1]
    assert random_first == random_second


def test_unseeded_runs_differ(capsys: pytest.CaptureFixture[str]) -> None:
    first = run(capsys, "simulate", "--games", "2")[1]
    second = run(capsys, "simulate", "--games", "2")[1]
    assert first != second


def test_summary_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err = run(capsys, "simulate", "--games", "5", "--seed", "2")
    assert code == 0
    recs = records(stdout)
    facts = summary(err)
    hands = sum(len(r["hands"]) for r in recs)
    assert int(facts["games"]) == 5
    assert int(facts["hands"]) == hands
    assert float(facts["hands per game"]) == pytest.approx(hands / 5, abs=0.005)
    for team in ("NORTH_SOUTH", "EAST_WEST"):
        assert int(facts[f"wins {team}"]) == sum(r["winner"] == team for r in recs)
    assert int(facts["nil bids"]) == 0
    assert int(facts["blind nil bids"]) == 0
    # Four bids and 52 cards per hand, plus the basic bot's occasional reveals.
    moves = int(facts["moves"])
    assert 56 * hands <= moves <= 60 * hands
    assert re.match(r"^[\d,]+ ", facts["moves per sec"])
    assert int(facts["moves per sec"].split()[0].replace(",", "")) > 0


def test_random_policy_bids_nil_and_blind_nil(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err = run(
        capsys, "simulate", "--games", "20", "--seed", "3", "--policy", "random"
    )
    assert code == 0
    recs = records(stdout)
    facts = summary(err)
    assert int(facts["nil bids"]) == bids(recs, "NIL") > 0
    assert int(facts["blind nil bids"]) == bids(recs, "BLIND_NIL") > 0
    assert any(h["exchanges"] for r in recs for h in r["hands"])
    expected = [export_record(play_game(s, PolicyName.RANDOM)[0]) for s in game_seeds(20, 3)]
    assert recs == expected


@pytest.mark.parametrize("games", ["0", "-1"])
def test_no_games_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, games: str
) -> None:
    out = tmp_path / "games.jsonl"
    code, stdout, err = run(capsys, "simulate", "--games", games, "--out", str(out))
    assert code == 2
    assert stdout == ""
    assert "--games" in err
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate"],
        ["simulate", "--games", "two"],
        ["simulate", "--games", "1", "--policy", "clever"],
        ["replay"],
        [],
    ],
)
def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, stdout, err = run(capsys, *argv)
    assert code == 2
    assert stdout == ""
    assert "usage: spades" in err


# ----------------------------------------------------------------------------- replay


@pytest.fixture
def good_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    path = tmp_path / "good.jsonl"
    code, _, _ = run(
        capsys, "simulate", "--games", "4", "--seed", "8", "--policy", "random", "--out", str(path)
    )
    assert code == 0
    return path


def test_replay_accepts_good_records(capsys: pytest.CaptureFixture[str], good_file: Path) -> None:
    code, stdout, err = run(capsys, "replay", str(good_file))
    assert code == 0
    assert stdout == ""
    assert "4 records replayed" in err


def test_replay_skips_blank_lines(capsys: pytest.CaptureFixture[str], good_file: Path) -> None:
    lines = good_file.read_text(encoding="utf-8").splitlines()
    good_file.write_text("\n" + "\n\n".join(lines) + "\n\n", encoding="utf-8")
    code, _, err = run(capsys, "replay", str(good_file))
    assert code == 0
    assert "4 records replayed" in err


def tamper_winner(line: str) -> str:
    rec = json.loads(line)
    rec["winner"] = "EAST_WEST" if rec["winner"] == "NORTH_SOUTH" else "NORTH_SOUTH"
    return json.dumps(rec)


def tamper_card(line: str) -> str:
    rec = json.loads(line)
    plays = rec["hands"][0]["tricks"][1]["plays"]
    plays[1]["card"] = plays[0]["card"]  # the card just played by the seat before
    return json.dumps(rec)


def tamper_bid(line: str) -> str:
    rec = json.loads(line)
    rec["hands"][0]["bids"][0]["bid"] = "PASS"
    return json.dumps(rec)


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (tamper_winner, r"end: winner is"),
        (tamper_card, r"hand 1, trick 2: .*CARD_NOT_IN_HAND"),
        (tamper_bid, r"hand 1, bid 1: .*not a bid"),
        (lambda line: line.rstrip("}"), r"Expecting .* delimiter"),
        (lambda line: "[1, 2]", r"not a spades-record/1 record"),
    ],
)
def test_replay_names_the_line_of_the_first_bad_record(
    capsys: pytest.CaptureFixture[str], good_file: Path, tamper: Any, message: str
) -> None:
    lines = good_file.read_text(encoding="utf-8").splitlines()
    lines[2] = tamper(lines[2])
    lines[3] = "not json"  # a second bad record, after the first
    good_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, stdout, err = run(capsys, "replay", str(good_file))
    assert code != 0
    assert stdout == ""
    assert err.startswith(f"{good_file}:3: ")
    assert re.search(message, err), err
    assert ":4:" not in err
    assert "Traceback" not in err


# ----------------------------------------------------------------------------- console script


@pytest.mark.skipif(not SPADES.exists(), reason="console script not installed")
def test_console_script_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "games.jsonl"
    done = subprocess.run(
        [str(SPADES), "simulate", "--games", "3", "--seed", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "games:          3" in done.stderr
    in_process = run(capsys, "simulate", "--games", "3", "--seed", "1")[1]
    assert out.read_text(encoding="utf-8") == in_process
    checked = subprocess.run(
        [str(SPADES), "replay", str(out)], capture_output=True, text=True, timeout=60, check=False
    )
    assert checked.returncode == 0, checked.stderr
    assert "3 records replayed" in checked.stderr
    refused = subprocess.run(
        [str(SPADES), "simulate", "--games", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2
