"""The GameView fields every viewer of a table state shares are built once per state
and never carry a viewer's own: a view built after another viewer's of the same state
equals the one built cold, for every viewer, watching or not."""

from __future__ import annotations

from app.api import types
from app.api.types import game_view
from app.rules.seats import Seat
from app.services.model import TableStatus
from tests.server.test_plans import positions
from tests.support.tables import table_snapshot

VIEWERS: list[tuple[Seat | None, bool]] = [(s, True) for s in Seat] + [(None, True), (None, False)]


def cold(table: object, viewer: Seat | None, watching: bool) -> object:
    types._last_public.clear()
    return game_view(table, viewer, watching)  # type: ignore[arg-type]


def test_each_viewer_gets_the_same_view_whoever_was_served_before() -> None:
    tables = [table_snapshot(version=1)] + [
        table_snapshot(game=g, version=v, status=TableStatus.PLAYING)
        for v, g in enumerate(positions(23, every=3), start=2)
    ]
    for table in tables:
        expected = {(v, w): cold(table, v, w) for v, w in VIEWERS}
        for order in (VIEWERS, VIEWERS[::-1]):
            types._last_public.clear()
            for viewer, watching in order:
                assert game_view(table, viewer, watching) == expected[(viewer, watching)]


def test_a_spectator_without_watching_rights_never_gets_the_tricks_of_one_with_them() -> None:
    table = next(
        table_snapshot(game=g, version=9, status=TableStatus.PLAYING)
        for g in positions(23, every=1)
        if g.hand.current
    )
    watching = game_view(table, None, True)
    assert watching.current_trick
    hidden = game_view(table, None, False)
    assert hidden.current_trick == [] and hidden.last_trick is None
    assert game_view(table, Seat.NORTH).hand != game_view(table, Seat.EAST).hand
