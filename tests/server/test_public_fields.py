"""The GameView fields every viewer of a table state shares are built once per state
and never carry a viewer's own: a view built after another viewer's of the same state
equals the one built cold, for every viewer, watching or not."""

from __future__ import annotations

from app.api.graphql import game_view as types
from app.api.graphql.game_view import game_view
from app.rules.seats import Seat
from app.services.tables.snapshot import TableStatus
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


def test_finished_hands_are_converted_once_per_game_and_equal_a_fresh_conversion() -> None:
    games = [g for g in positions(29, every=1) if len(g.history) >= 4]
    assert len(games) > 10
    views = []
    for version, game in enumerate(games, start=2):
        types._last_public.clear()
        views.append(
            game_view(table_snapshot(game=game, version=version, status=TableStatus.PLAYING), None)
        )
    for view, game in zip(views, games, strict=True):
        assert view.history == [types._result(r) for r in game.history]
    same_hands = [
        (a, b)
        for a, b, ga, gb in zip(views, views[1:], games, games[1:], strict=False)
        if len(ga.history) == len(gb.history)
    ]
    assert same_hands and all(a.history is b.history for a, b in same_hands)
    types._HISTORIES.clear()
    again = game_view(table_snapshot(game=games[-1], version=99, status=TableStatus.PLAYING), None)
    assert again.history == views[-1].history and again.history is not views[-1].history
