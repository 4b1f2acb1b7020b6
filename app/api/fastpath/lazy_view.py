"""A move's answer built only as far as it is read.

A move's answer usually selects only `{ version }`: a stand-in answers `id`, `tableId`
and `version` from the table itself, and the first other field read builds the whole
view once (by the same converter the normal path uses, for the same viewer), so no
hand, trick or history is converted for nothing. strawberry and graphql-core read the
fields of a GameView as attributes, which is all the stand-in needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.rules.seats import Seat
from app.services.tables.snapshot import TableSnapshot

Build = Callable[[TableSnapshot, Seat | None], Any]


class LazyGameView:
    """A GameView of `table` for `viewer`, built by `build` on the first field read
    beyond `id`, `tableId` and `version`."""

    __slots__ = ("_build", "_table", "_view", "_viewer")

    def __init__(self, table: TableSnapshot, viewer: Seat | None, build: Build) -> None:
        self._table = table
        self._viewer = viewer
        self._build = build
        self._view: Any = None

    @property
    def id(self) -> str:
        """The table's id."""
        return self._table.id

    @property
    def table_id(self) -> str:
        """The table's id."""
        return self._table.id

    @property
    def version(self) -> int:
        """The table's version."""
        return self._table.version

    def __getattr__(self, name: str) -> object:
        # Any other field (and only fields: strawberry reads nothing else of a GameView).
        if name.startswith("_"):
            raise AttributeError(name)
        view = self._view
        if view is None:
            view = self._view = self._build(self._table, self._viewer)
        return getattr(view, name)
