"""Opaque page cursors. Each names its list (the leaderboard, one player's games, or the
moderators' queue of reports of one status) and holds the keyset position of its last
entry, so paging resumes exactly after it however many games finish (or reports come)
meanwhile. Each is signed (HMAC-SHA256 with the server's secret), so a
forged or altered one is refused before it is parsed, as is one of another list (another
kind, or another player's games)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from app.rules.errors import ErrorCode, RuleError

MAX_PAGE = 100
MAX_CURSOR_CHARS = 300
# 128 bits of HMAC-SHA256: forging one is out of reach, and it keeps cursors short.
TAG_BYTES = 16


@dataclass(frozen=True, slots=True)
class BoardCursor:
    """After leaderboard entry `rank` (key: -value, -games, username key), in snapshot
    `snapshot` (the last game applied when the first page was read)."""

    snapshot: int
    key: tuple[int, int, str]
    rank: int


@dataclass(frozen=True, slots=True)
class GamesCursor:
    """After the game numbered `seq` in `player_id`'s list."""

    player_id: str
    seq: int


@dataclass(frozen=True, slots=True)
class ReportsCursor:
    """After the report stored at position `seq` in the queue of reports of `status`."""

    status: str
    seq: int


def page_size(first: int) -> int:
    """`first`, if 1..100 (else BAD_USER_INPUT)."""
    if isinstance(first, bool) or not isinstance(first, int) or not 1 <= first <= MAX_PAGE:
        raise RuleError(ErrorCode.BAD_USER_INPUT, f"first must be 1..{MAX_PAGE}")
    return first


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _tag(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).digest()[:TAG_BYTES]


def _encode(key: bytes, body: list[Any]) -> str:
    raw = json.dumps(body, separators=(",", ":")).encode()
    return f"{_b64(raw)}.{_b64(_tag(key, raw))}"


def _decode(key: bytes, cursor: object, kind: str, length: int) -> list[Any]:
    bad = RuleError(ErrorCode.BAD_USER_INPUT, "not a cursor of this list")
    if not isinstance(cursor, str) or not 0 < len(cursor) <= MAX_CURSOR_CHARS:
        raise bad
    body_text, _, tag_text = cursor.partition(".")
    try:
        raw, tag = _unb64(body_text), _unb64(tag_text)
    except (binascii.Error, ValueError):
        raise bad from None
    # The signature is checked before the body is parsed: nothing forged reaches json.
    if not hmac.compare_digest(tag, _tag(key, raw)):
        raise bad
    try:
        body = json.loads(raw)
    except ValueError:
        raise bad from None
    if not isinstance(body, list) or len(body) != length or body[0] != kind:
        raise bad
    return body


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 2**62:
        raise RuleError(ErrorCode.BAD_USER_INPUT, "not a cursor of this list")
    return value


def _str(value: object) -> str:
    if not isinstance(value, str) or len(value) > 40:
        raise RuleError(ErrorCode.BAD_USER_INPUT, "not a cursor of this list")
    return value


def encode_board(key: bytes, cursor: BoardCursor) -> str:
    """The opaque, signed form of a leaderboard cursor."""
    return _encode(key, ["lb", cursor.snapshot, *cursor.key, cursor.rank])


def decode_board(key: bytes, cursor: object) -> BoardCursor:
    """A leaderboard cursor signed with `key` (BAD_USER_INPUT if it is not one)."""
    _, snapshot, value, games, username, rank = _decode(key, cursor, "lb", 6)
    parsed = BoardCursor(_int(snapshot), (_int(value), _int(games), _str(username)), _int(rank))
    if parsed.snapshot < 0 or parsed.rank < 1:
        raise RuleError(ErrorCode.BAD_USER_INPUT, "not a cursor of this list")
    return parsed


def encode_games(key: bytes, cursor: GamesCursor) -> str:
    """The opaque, signed form of a game-list cursor."""
    return _encode(key, ["gm", cursor.player_id, cursor.seq])


def decode_games(key: bytes, cursor: object, player_id: str) -> GamesCursor:
    """A cursor of `player_id`'s game list signed with `key` (BAD_USER_INPUT if not)."""
    _, owner, seq = _decode(key, cursor, "gm", 3)
    if owner != player_id:
        raise RuleError(ErrorCode.BAD_USER_INPUT, "not a cursor of this list")
    return GamesCursor(_str(owner), _int(seq))


def encode_reports(key: bytes, cursor: ReportsCursor) -> str:
    """The opaque, signed form of a report queue's cursor."""
    return _encode(key, ["rp", cursor.status, cursor.seq])


def decode_reports(key: bytes, cursor: object, status: str) -> ReportsCursor:
    """A cursor of the queue of `status` reports signed with `key` (BAD_USER_INPUT if
    not)."""
    _, listed, seq = _decode(key, cursor, "rp", 3)
    if listed != status:
        raise RuleError(ErrorCode.BAD_USER_INPUT, "not a cursor of this list")
    return ReportsCursor(_str(listed), _int(seq))
