"""One `gameUpdates` subscription: what it has been sent and what it may see.

Every subscription opens the same way (access checked, then a SNAPSHOT or the updates
missed since `since`) and treats each change the same way (a gap or a RESYNC catches up
from the move log, an old version is skipped, access is checked again, TABLE_CLOSED
ends it). Only where its live changes come from differs: a broker queue of its own
(`plain_updates`), or its table's feed, which writes most of them for it
(app/services/live/followed.py). Both use `GameUpdates` for everything else.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from app.broker.base import RESYNC, Broker
from app.rules.errors import ErrorCode, RuleError
from app.services.live.presence import PresenceService
from app.services.live.replay import MoveLogReplay
from app.services.lobby.service import TableService, relation
from app.services.social.model import Notice, NoticeKind, Viewer, player_channel
from app.services.social.service import SocialService
from app.services.tables.access import can_watch
from app.services.tables.events import GameEvent
from app.services.tables.ledger import Ledger, game_channel
from app.services.tables.snapshot import GameMessage, TableSnapshot, TableStatus

SNAPSHOT = GameEvent.SNAPSHOT

# The changes after which a subscriber may have become, or stopped being, one of the
# table's players (so presence counts them, or no longer does).
SEATING_EVENTS = frozenset(
    {
        SNAPSHOT,
        GameEvent.SEAT_TAKEN,
        GameEvent.SEAT_LEFT,
        GameEvent.PLAYER_KICKED,
        GameEvent.PLAYER_REPLACED,
        GameEvent.SEAT_RECLAIMED,
        GameEvent.TABLE_CLOSED,
    }
)


def check_watcher(viewer: Viewer, table: TableSnapshot) -> None:
    """A seated player, or a spectator where spectating is on; else FORBIDDEN."""
    rel = relation(viewer, table)
    if not rel.seated and not can_watch(table, rel):
        raise RuleError(ErrorCode.FORBIDDEN, "spectating is off at this table")


class Position(Protocol):
    """Where one subscription stands: its viewer (reloaded when their social graph
    changes), the last version it was sent, and whether the table closed."""

    viewer: Viewer
    last: int
    closed: bool


class Seen:
    """A `Position` of a subscription that reads its own broker queue."""

    __slots__ = ("closed", "last", "viewer")

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.last = -1
        self.closed = False


class PresenceCount:
    """Counts a subscriber as connected to the table (presence) while they are one of
    its players (seated, or its away player): a spectator's watching is no seat's
    connection, and one who sits down while watching is connected from then on."""

    __slots__ = ("counted", "player_id", "presence", "table_id")

    def __init__(self, presence: PresenceService | None, table_id: str, player_id: str):
        self.presence = presence
        self.table_id = table_id
        self.player_id = player_id
        self.counted = False

    async def place(self, table: TableSnapshot) -> None:
        """Count or stop counting the subscriber, as the table now seats them. One who
        no longer plays there (they left, or the table closed) stops counting with no
        reconnect window: nobody will take their seat."""
        if self.presence is None:
            return
        player_id = self.player_id
        player = table.status is not TableStatus.CLOSED and (
            table.seat_of(player_id) is not None or table.away_seat(player_id) is not None
        )
        if player and not self.counted:
            self.counted = True
            await self.presence.enter(self.table_id, player_id)
        elif self.counted and not player:
            self.counted = False
            self.presence.leave(self.table_id, player_id, absent=False)

    async def placed(
        self, updates: AsyncGenerator[GameMessage, None]
    ) -> AsyncIterator[GameMessage]:
        """`updates`, placing the subscriber after each change that may seat or unseat
        them."""
        async with contextlib.aclosing(updates) as stream:
            async for message in stream:
                if message.event in SEATING_EVENTS:
                    await self.place(message.table)
                yield message

    def leave(self) -> None:
        """The subscription ended: no longer counted."""
        if self.counted and self.presence is not None:
            self.counted = False
            self.presence.leave(self.table_id, self.player_id)


class GameUpdates:
    """What every `gameUpdates` subscription does besides waiting for changes."""

    def __init__(
        self, ledger: Ledger, tables: TableService, social: SocialService, replay: MoveLogReplay
    ) -> None:
        self.ledger = ledger
        self.tables = tables
        self.social = social
        self.replay = replay

    async def admit(self, viewer: Viewer, table_id: str) -> Viewer:
        """The viewer, if they may follow the table's game (NOT_FOUND, FORBIDDEN)."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        check_watcher(viewer, table)
        return viewer

    async def opening(
        self,
        position: Position,
        table_id: str,
        since: int | None,
        ready: Callable[[TableSnapshot], Awaitable[None]],
    ) -> AsyncIterator[GameMessage]:
        """A SNAPSHOT, or the updates after `since`, of the table as it stands now: read
        only once the caller listens for changes, so nothing published after it is lost
        (`ready` is told the table first)."""
        table = self.tables.visible(position.viewer, await self.ledger.get(table_id))
        await ready(table)
        missed = await self.replay.missed(table, since) if since is not None else None
        if missed is None:
            yield GameMessage(SNAPSHOT, None, table)
            position.last = table.version
        else:
            position.last = since if since is not None else table.version
            for message in missed:
                yield message
                position.last = message.version
        position.closed = table.status is TableStatus.CLOSED

    async def recheck(self, position: Position, table_id: str) -> None:
        """The viewer's social graph changed: reload them, and end the stream with
        FORBIDDEN if they may no longer follow the table."""
        position.viewer = await self.social.viewer(position.viewer.player)
        current = await self.ledger.get(table_id)
        check_watcher(position.viewer, self.tables.visible(position.viewer, current))

    async def take(
        self, position: Position, table_id: str, message: Any
    ) -> AsyncIterator[GameMessage]:
        """What one change (or RESYNC) gives the subscriber, in order: the updates it
        missed after a gap, nothing for a version it has, else the change itself (ending
        with FORBIDDEN if access went away; TABLE_CLOSED is seen by everyone)."""
        if message is RESYNC or message.version > position.last + 1:
            # Missed something (overflow, broker reconnect, out-of-order delivery between
            # processes): catch up from the database.
            position.viewer = await self.social.viewer(position.viewer.player)
            async for caught_up in self.catch_up(position.viewer, table_id, position.last):
                yield caught_up
                position.last = caught_up.version
                if caught_up.event is GameEvent.TABLE_CLOSED:
                    position.closed = True
                    return
            return
        if message.version <= position.last:
            return
        if message.event is GameEvent.TABLE_CLOSED:
            position.closed = True
            yield message  # seen by every subscriber, whatever its access now
            return
        check_watcher(position.viewer, self.tables.visible(position.viewer, message.table))
        yield message
        position.last = message.version

    async def catch_up(
        self, viewer: Viewer, table_id: str, last: int
    ) -> AsyncIterator[GameMessage]:
        """The updates after `last`, replayed from the move log, or else a SNAPSHOT."""
        current = await self.ledger.get(table_id)
        if current is None or current.version <= last:
            return
        check_watcher(viewer, self.tables.visible(viewer, current))
        missed = await self.replay.missed(current, last)
        if missed is None:
            yield GameMessage(SNAPSHOT, None, current)
            return
        for message in missed:
            yield message


async def plain_updates(
    updates: GameUpdates,
    broker: Broker[Any],
    viewer: Viewer,
    table_id: str,
    since: int | None,
    count: PresenceCount,
) -> AsyncGenerator[GameMessage, None]:
    """Every change of the table's game in order, after a SNAPSHOT or the missed updates,
    read from a broker queue of the subscription's own.

    The stream ends with FORBIDDEN if the subscriber loses the right to watch: the host
    turned spectating off or hid the table, or the subscriber's own access went away
    (a revoked link, an ended friendship, a block)."""
    position = Seen(await updates.admit(viewer, table_id))
    # Subscribe before reading the current state: nothing published after it is lost.
    # The player's own channel says when their social graph (and so access) changes.
    channels = (game_channel(table_id), player_channel(position.viewer.id))
    with await broker.subscribe(*channels) as subscription:
        async for message in updates.opening(position, table_id, since, count.place):
            yield message
        while not position.closed:
            message = await subscription.get()
            if isinstance(message, Notice):
                if message.kind is NoticeKind.SOCIAL_CHANGED:
                    await updates.recheck(position, table_id)
                continue
            if message is RESYNC or message.version > position.last + 1:
                subscription.drain()  # the catch-up reads everything from the database
            elif message.version > position.last:
                updates.ledger.observe(message.table)
            async for update in updates.take(position, table_id, message):
                yield update
