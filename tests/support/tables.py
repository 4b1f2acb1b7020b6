"""Table snapshots built in memory for tests of the layers below the server (wire
format, writers, decisions): one default table, changed field by field."""

from __future__ import annotations

from typing import Any

from app.services.tables.snapshot import (
    JoinPolicy,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)

PLAYERS = ("p0", "p1", "p2", "p3")


def table_snapshot(**fields: Any) -> TableSnapshot:
    """A public, open, watchable table of four humans waiting to start (version 1),
    with `fields` in place of the defaults."""
    defaults: dict[str, Any] = {
        "id": "t1",
        "name": "test",
        "host_id": PLAYERS[0],
        "host_name": PLAYERS[0],
        "visibility": Visibility.PUBLIC,
        "join_policy": JoinPolicy.OPEN,
        "spectating": True,
        "status": TableStatus.WAITING,
        "version": 1,
        "occupants": tuple(Occupant(p, p) for p in PLAYERS),
        "game": None,
    }
    return TableSnapshot(**(defaults | fields))
