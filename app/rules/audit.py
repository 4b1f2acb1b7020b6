"""A table's stored state checked against its move log.

The move log is the table's history: replayed through the engine from its `start`
entry, it must give exactly the game the table row holds, and its rows must cover every
version from 1 to the row's version with no gap. `audit_table` says where they disagree,
one `Mismatch` each, without printing any value (a stored game holds hidden cards).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from app.compact_json import dumps
from app.rules.errors import RuleError
from app.rules.game import Game, Phase
from app.rules.movelog import LogEntry, entry_move
from app.rules.serialize import game_to_data


class MismatchKind(Enum):
    """What part of a table disagrees with its move log."""

    LOG = "log"  # the log itself: unreadable, a gap, a move the engine refuses
    VERSION = "version"  # the row's version is not where the log ends
    STATUS = "status"  # the row's status is not what the log leads to
    GAME = "game"  # the row's game is not what the log replays to


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One disagreement between a table row and its move log."""

    table_id: str
    kind: MismatchKind
    detail: str

    def line(self) -> str:
        """The one-line report of this mismatch (the table id first)."""
        return f"{self.table_id}: {self.kind.value}: {self.detail}"


@dataclass(frozen=True, slots=True)
class StoredTable:
    """What a table row says: its version, status and game state (JSON, or None)."""

    id: str
    version: int
    status: str
    game_state: str | None


@dataclass(frozen=True, slots=True)
class LogRow:
    """One move-log row: the first version it made, how many it made, its entry (JSON)."""

    seq: int
    changes: int
    move: str


@dataclass(slots=True)
class _Replay:
    """Where a replay of the log stands."""

    version: int = 0
    game: Game | None = None
    closed: bool = False


class _Broken(Exception):
    """The log cannot be replayed past this row."""


def audit_table(table: StoredTable, log: Sequence[LogRow]) -> list[Mismatch]:
    """Every way `table` differs from what its move `log` (in order) replays to."""
    try:
        replay = _replay(log)
    except _Broken as broken:
        return [Mismatch(table.id, MismatchKind.LOG, str(broken))]
    found: list[Mismatch] = []
    if table.version != replay.version:
        found.append(
            Mismatch(
                table.id,
                MismatchKind.VERSION,
                f"the row is at version {table.version}, the log ends at {replay.version}",
            )
        )
    expected_status = _status(replay)
    if table.status != expected_status:
        found.append(
            Mismatch(
                table.id,
                MismatchKind.STATUS,
                f"the row is {table.status}, the log leads to {expected_status}",
            )
        )
    problem = _game_problem(table.game_state, replay.game)
    if problem is not None:
        found.append(Mismatch(table.id, MismatchKind.GAME, problem))
    return found


def _replay(log: Sequence[LogRow]) -> _Replay:
    """The log replayed row by row: versions checked to follow on, moves through the
    engine (each must make as many changes as its row says)."""
    replay = _Replay()
    for row in log:
        if row.seq != replay.version + 1 or row.changes < 1:
            raise _Broken(
                f"row {row.seq} (+{row.changes}) does not follow version {replay.version}"
            )
        entry = _entry(row)
        if replay.closed:
            raise _Broken(f"row {row.seq} comes after the table closed")
        _apply(replay, entry, row)
        replay.version = row.seq + row.changes - 1
    return replay


def _entry(row: LogRow) -> LogEntry:
    try:
        entry = json.loads(row.move)
    except ValueError:
        raise _Broken(f"row {row.seq} is not JSON") from None
    if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
        raise _Broken(f"row {row.seq} has no entry type")
    return entry


def _apply(replay: _Replay, entry: LogEntry, row: LogRow) -> None:
    kind = entry["type"]
    try:
        if kind == "start":
            game, _ = Game.start(list(entry["players"]), seed=int(entry["seed"]))
            game.seed_public = bool(entry["public"])
            replay.game = game
            return
        if kind == "close":
            replay.closed = True
            return
        move = entry_move(entry)
        if move is None:
            return
        if replay.game is None:
            raise _Broken(f"row {row.seq} is a move before the game started")
        steps = len(replay.game.apply_steps(move))
    except (RuleError, KeyError, ValueError, TypeError) as exc:
        raise _Broken(f"row {row.seq} ({kind}) does not replay: {exc}") from None
    if steps != row.changes:
        raise _Broken(f"row {row.seq} ({kind}) replays to {steps} changes, logged {row.changes}")


def _status(replay: _Replay) -> str:
    """The status the log leads to (the values of the tables' status column)."""
    if replay.closed:
        return "CLOSED"
    if replay.game is None:
        return "WAITING"
    return "FINISHED" if replay.game.phase is Phase.GAME_OVER else "PLAYING"


def _game_problem(stored: str | None, replayed: Game | None) -> str | None:
    """Why the stored game is not the replayed one, or None when it is."""
    if replayed is None:
        return None if stored is None else "the row holds a game the log never started"
    if stored is None:
        return "the row holds no game, the log started one"
    try:
        data = json.loads(stored)
    except ValueError:
        return "the row's game is not JSON"
    expected = json.loads(dumps(game_to_data(replayed)))
    where = first_difference(data, expected)
    return None if where is None else f"the row's game differs at {where or 'its root'}"


def first_difference(actual: Any, expected: Any, path: str = "") -> str | None:
    """The path of the first place where two JSON values differ (`hand.hands[2]`), ""
    for the root, or None when they are equal. Only the path, never the values."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        for key in sorted(expected.keys() | actual.keys()):
            inner = f"{path}.{key}" if path else key
            if key not in actual or key not in expected:
                return inner
            found = first_difference(actual[key], expected[key], inner)
            if found is not None:
                return found
        return None
    if isinstance(actual, list) and isinstance(expected, list):
        if len(actual) != len(expected):
            return f"{path} (length)"
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            found = first_difference(a, e, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    return None if actual == expected and type(actual) is type(expected) else path
