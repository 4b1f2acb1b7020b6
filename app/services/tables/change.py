"""What a decision on a table did: the new versions, their log rows, a lobby event."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.movelog import LogEntry
from app.services.tables.events import GameEvent, LobbyEvent
from app.services.tables.snapshot import GameMessage, TableSnapshot

# A further write made in the transaction of a change.
Effect = Callable[[AsyncSession], Awaitable[None]]


@dataclass
class Change:
    """What a decision did: one message per new version, log entries, a lobby event."""

    steps: list[GameMessage] = field(default_factory=list)
    log: list[tuple[int, int, LogEntry]] = field(default_factory=list)
    lobby_event: LobbyEvent | None = None
    # Further writes to make in the same transaction (e.g. dropping an invitation).
    effects: list[Effect] = field(default_factory=list)

    def add(self, event: GameEvent, table: TableSnapshot, seat: Any = None) -> None:
        """Record one change; `table` must already carry the next version."""
        self.steps.append(GameMessage(event, seat, table))

    def log_entry(self, seq: int, changes: int, entry: LogEntry) -> None:
        """Record one move-log row."""
        self.log.append((seq, changes, entry))
