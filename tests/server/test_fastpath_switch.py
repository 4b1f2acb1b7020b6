"""The fast path's seam: one switch (SPADES_FASTPATH) turns every piece of it off, and
it turns itself off when a library it patches is outside the versions it was written
for."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from app.api import fastpath
from app.api.fastpath import versions
from app.api.transport.websocket import CheckedTransportWSHandler, LegacyWSHandler
from app.settings import Settings
from tests.support.tables import table_snapshot


@pytest.fixture(autouse=True)
def switch_restored() -> Iterator[None]:
    """The switch is process-wide: each test leaves it as it found it."""
    before = fastpath._SWITCH.on
    yield
    fastpath._SWITCH.on = before


class View:
    """What a converter builds, counting how often it was asked."""

    made = 0

    def __init__(self, table: object, viewer: object) -> None:
        View.made += 1
        self.table, self.viewer, self.hand = table, viewer, ["AS"]


def test_off_every_piece_is_the_libraries_own() -> None:
    assert fastpath.configure(Settings(fastpath=False)) is False
    assert fastpath.websocket_handlers() == (CheckedTransportWSHandler, LegacyWSHandler)
    assert fastpath.http_shortcut(object(), object()) is None  # type: ignore[arg-type]
    assert fastpath.shared_message_encoder() is None
    table = table_snapshot()
    answer = fastpath.move_answer(table, None, View)
    assert isinstance(answer, View) and answer.table is table
    assert fastpath.uvicorn_protocols() == {"http": "httptools", "ws": "websockets-sansio"}


def test_on_the_handlers_park_and_a_move_answer_is_built_when_read() -> None:
    assert fastpath.configure(Settings(fastpath=True)) is True
    transport, legacy = fastpath.websocket_handlers()
    assert issubclass(transport, CheckedTransportWSHandler)
    assert issubclass(legacy, LegacyWSHandler)
    assert (transport, legacy) != (CheckedTransportWSHandler, LegacyWSHandler)
    table = table_snapshot(version=7)
    made = View.made
    answer = fastpath.move_answer(table, None, View)
    assert answer.version == 7 and answer.table_id == table.id
    assert View.made == made  # nothing built for what the table itself answers
    assert answer.hand == ["AS"] and answer.hand == ["AS"]
    assert View.made == made + 1  # any other field: the view, built once


def test_a_library_outside_its_bounds_turns_the_fast_path_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(versions, "unsupported", lambda: ["graphql-core 3.4.0 is outside <3.4"])
    with caplog.at_level(logging.WARNING):
        assert fastpath.configure(Settings(fastpath=True)) is False
    assert not fastpath.enabled()
    assert "graphql-core 3.4.0 is outside <3.4" in caplog.text


def test_the_installed_libraries_are_the_ones_the_fast_path_was_written_for() -> None:
    assert versions.unsupported() == []
