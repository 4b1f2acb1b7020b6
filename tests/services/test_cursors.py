"""Page cursors are signed: one made under another secret, or altered after signing, is
refused as BAD_USER_INPUT, as is one of another list; a genuine one reads back exactly."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.rules.errors import ErrorCode, RuleError
from app.services.accounts.cursors import (
    BoardCursor,
    GamesCursor,
    decode_board,
    decode_games,
    encode_board,
    encode_games,
)

KEY = b"server secret"


def refused(call: Callable[[], object]) -> None:
    """Assert that calling `call` raises BAD_USER_INPUT."""
    with pytest.raises(RuleError) as raised:
        call()
    assert raised.value.code is ErrorCode.BAD_USER_INPUT


def test_a_signed_cursor_reads_back_as_written() -> None:
    games = GamesCursor("p1", 42)
    board = BoardCursor(7, (-1500, -12, "alice"), 3)
    assert decode_games(KEY, encode_games(KEY, games), "p1") == games
    assert decode_board(KEY, encode_board(KEY, board)) == board


def test_a_cursor_signed_under_another_secret_is_refused() -> None:
    games = encode_games(b"another server", GamesCursor("p1", 42))
    board = encode_board(b"another server", BoardCursor(7, (-1500, -12, "alice"), 3))
    refused(lambda: decode_games(KEY, games, "p1"))
    refused(lambda: decode_board(KEY, board))


def test_a_cursor_altered_after_signing_is_refused() -> None:
    genuine = encode_games(KEY, GamesCursor("p1", 42))
    body, _, tag = genuine.partition(".")
    other_body = encode_games(KEY, GamesCursor("p1", 43)).partition(".")[0]
    flipped = tag[:-2] + ("A" if tag[-2] != "A" else "B") + tag[-1]
    for bad in (f"{other_body}.{tag}", f"{body}.{flipped}", body, f"{body}.", f".{tag}"):
        refused(lambda bad=bad: decode_games(KEY, bad, "p1"))


def test_a_cursor_of_another_list_is_refused_though_genuinely_signed() -> None:
    games = encode_games(KEY, GamesCursor("p1", 42))
    board = encode_board(KEY, BoardCursor(7, (-1500, -12, "alice"), 3))
    refused(lambda: decode_games(KEY, games, "p2"))  # another player's games
    refused(lambda: decode_board(KEY, games))  # games, not the leaderboard
    refused(lambda: decode_games(KEY, board, "p1"))  # the leaderboard, not games
