"""The live-table state stored beside a game: away players, consecutive timeouts, and a
timed-out seat whose move is still owed (one JSON text column, `tables.live_state`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.rules.seats import SEATS, Seat
from app.services.tables.snapshot import NO_AWAY, NO_TIMEOUTS, Occupant, TableSnapshot


@dataclass(frozen=True, slots=True)
class LiveState:
    """The live-table fields of a snapshot."""

    away: tuple[Occupant | None, ...] = NO_AWAY
    timeouts: tuple[int, ...] = NO_TIMEOUTS
    timed_out: Seat | None = None


def live_data(table: TableSnapshot) -> dict[str, Any] | None:
    """The live state as JSON data; None when there is nothing to keep (the common case)."""
    if table.away == NO_AWAY and table.timeouts == NO_TIMEOUTS and table.timed_out is None:
        return None
    return {
        "away": [[o.player_id, o.username] if o is not None else None for o in table.away],
        "timeouts": list(table.timeouts),
        "timedOut": table.timed_out.name if table.timed_out is not None else None,
    }


def live_to_json(table: TableSnapshot) -> str | None:
    """The live state as stored."""
    data = live_data(table)
    return json.dumps(data, separators=(",", ":")) if data is not None else None


def live_from_data(data: dict[str, Any] | None) -> LiveState:
    """The live state `live_data` made."""
    if not data:
        return LiveState()
    away = tuple(Occupant(a[0], a[1]) if a is not None else None for a in data["away"])
    timed_out = data.get("timedOut")
    return LiveState(
        away=away if len(away) == len(SEATS) else NO_AWAY,
        timeouts=tuple(int(t) for t in data["timeouts"]),
        timed_out=Seat[timed_out] if timed_out else None,
    )


def live_from_json(text: str | None) -> LiveState:
    """The live state as stored (away players carry their username)."""
    return live_from_data(json.loads(text) if text else None)
