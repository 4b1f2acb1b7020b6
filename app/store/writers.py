"""Move writers: one database trip per game move (see `sqlite_writer`, `postgres_writer`).

A game move changes the table row (a compare-and-swap on its version) and appends
its move-log rows. Through the general session path that took several trips
between the event loop and the database and most of the server's database CPU;
each writer does it in one, all or nothing, the change that ends a game with its
careers (statistics, summaries, ratings). Other writes (seats, social) keep the
session path.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

from sqlalchemy import exc

from app.rules.rating import Skill
from app.store.career import GameEnd

# The table columns a game change sets (the ledger's row values plus the write time).
TABLE_COLUMNS = (
    "version",
    "name",
    "host_id",
    "visibility",
    "join_policy",
    "spectating",
    "status",
    "game_state",
    "turn_seconds",
    "replacement_bot",
    "turn_deadline",
    "live_state",
    "finished_at",
    "rematch_requests",
    "next_table_id",
    "updated_at",
)
MOVE_COLUMNS = ("seq", "changes", "move", "created_at")
# The columns a game change always sets; any other it sets only if told it changed.
ALWAYS_SET = ("version", "game_state", "live_state", "updated_at")


class MoveWriter(Protocol):
    """Commits game moves in one trip."""

    async def commit(
        self,
        table_id: str,
        expected_version: int,
        values: dict[str, Any],
        moves: Sequence[dict[str, Any]],
        finish: GameEnd | None = None,
        changed: Collection[str] | None = None,
    ) -> bool:
        """Set the table row's `values` if it is still at `expected_version` and append
        the move-log rows, with `finish` (the change ends a game) its career update,
        atomically; False (nothing written) if the table moved on. `changed`, if given,
        names the columns outside `ALWAYS_SET` whose values differ from the row's at
        `expected_version`: a writer may leave the others as they are."""
        ...

    async def prefetch_ratings(self, player_ids: Sequence[str]) -> dict[str, Skill]:
        """Read these players' current ratings ahead of a rated game's end (off its
        final move's path) and keep them for it, when the end would otherwise read them
        in a trip of its own; the ratings read (none when there is nothing to gain)."""
        ...

    async def version(self, table_id: str) -> int | None:
        """The table's current version (None: no such table)."""
        ...

    async def close(self) -> None:
        """Release the writer's connections."""
        ...


def driver_error(error: BaseException, statement: str, integrity: bool) -> exc.DBAPIError:
    """A driver's error as SQLAlchemy's, which the rest of the server knows (an outage
    answers UNAVAILABLE): an IntegrityError if `integrity`, else an OperationalError."""
    kind: type[exc.DBAPIError] = exc.IntegrityError if integrity else exc.OperationalError
    return kind(statement, None, error)
