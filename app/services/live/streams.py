"""Live streams: a table's game updates (with catch-up by `since`), its presence, the
lobby, notices."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from app.broker.base import RESYNC, Broker
from app.services.live.followed import FollowedStream
from app.services.live.game_updates import GameUpdates, PresenceCount, check_watcher, plain_updates
from app.services.live.presence import (
    PresenceMessage,
    PresenceService,
    SeatPresence,
    presence_channel,
)
from app.services.live.replay import MoveLogReplay
from app.services.live.table_feeds import Feeds, Sink
from app.services.lobby.service import TableService, relation
from app.services.social.model import Notice, NoticeKind, Viewer, player_channel
from app.services.social.service import SocialService
from app.services.tables.access import can_see
from app.services.tables.events import LobbyEvent
from app.services.tables.ledger import LOBBY_CHANNEL, Ledger, game_channel
from app.services.tables.snapshot import GameMessage, LobbyMessage, TableSnapshot, TableStatus

LobbyChange = tuple[LobbyEvent, str, TableSnapshot | None]


class Streams:
    """Subscriptions, each projected later for its own subscriber by the API layer."""

    def __init__(
        self,
        ledger: Ledger,
        broker: Broker[Any],
        tables: TableService,
        social: SocialService,
        presence: PresenceService | None = None,
    ) -> None:
        self.ledger = ledger
        self.broker = broker
        self.tables = tables
        self.social = social
        self.presence = presence
        self.updates = GameUpdates(ledger, tables, social, MoveLogReplay(ledger))
        self.feeds = Feeds(broker, self._check_visible, ledger.observe)

    def _check_visible(self, viewer: Viewer, table: TableSnapshot) -> None:
        check_watcher(viewer, self.tables.visible(viewer, table))

    def check_viewer(self, viewer: Viewer, table: TableSnapshot) -> None:
        """A seated player, or a spectator where spectating is on; else FORBIDDEN."""
        check_watcher(viewer, table)

    async def game_updates(
        self, viewer: Viewer, table_id: str, since: int | None, sink: Sink | None = None
    ) -> AsyncIterator[GameMessage]:
        """Every change of the table's game in order, after a SNAPSHOT or the updates
        missed since `since` (app/services/live/game_updates.py), counting the subscriber
        as connected to the table (presence) while they are one of its players. With a
        `sink`, its live phase follows the table's feed (the updates the sink writes are
        not yielded: app/services/live/table_feeds.py) and may park
        (app/services/live/followed.py): the stream then returns early, and its `resume`
        takes it on when the sink is woken."""
        count = PresenceCount(self.presence, table_id, viewer.id)
        if sink is not None:
            stream = FollowedStream(self.updates, self.feeds, viewer, table_id, sink, count)
            async for message in stream.follow(since):
                yield message
            return
        try:
            updates = plain_updates(self.updates, self.broker, viewer, table_id, since, count)
            async for message in count.placed(updates):
                yield message
        finally:
            count.leave()

    async def seat_presence(self, viewer: Viewer, table_id: str) -> list[SeatPresence]:
        """The four seats' presence, for whoever may see the table's game."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        self.check_viewer(viewer, table)
        assert self.presence is not None
        return await self.presence.seats(table)

    async def presence_updates(self, viewer: Viewer, table_id: str) -> AsyncIterator[SeatPresence]:
        """First the four seats' presence, then each change: a player connecting or
        disconnecting, or a seat changing hands. Ends when the table closes."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        self.check_viewer(viewer, table)
        assert self.presence is not None
        channels = (presence_channel(table_id), game_channel(table_id))
        with await self.broker.subscribe(*channels) as subscription:
            table = self.tables.visible(viewer, await self.ledger.get(table_id))
            shown = await self.presence.seats(table)
            for entry in shown:
                yield entry
            while True:
                message = await subscription.get()
                if isinstance(message, PresenceMessage):
                    seat = table.seat_of(message.player_id)
                    if seat is None or shown[seat].connected is message.connected:
                        continue
                    entry = SeatPresence(
                        seat, message.player_id, message.connected, message.changed_at
                    )
                elif message is RESYNC or isinstance(message, GameMessage):
                    if (
                        isinstance(message, GameMessage)
                        and message.table.occupants == table.occupants
                        and message.table.status is not TableStatus.CLOSED
                    ):
                        continue  # a move: nobody came or went
                    current = await self.ledger.get(table_id)
                    if current is None:
                        return
                    table = current
                    fresh = await self.presence.seats(table)
                    changed = [e for e, old in zip(fresh, shown, strict=True) if e != old]
                    for entry in changed:
                        if (entry.player_id, entry.connected) != (
                            shown[entry.seat].player_id,
                            shown[entry.seat].connected,
                        ):
                            yield entry
                        shown[entry.seat] = entry
                    if table.status is TableStatus.CLOSED:
                        return
                    continue
                else:
                    continue
                shown[entry.seat] = entry
                yield entry

    async def lobby_updates(self, viewer: Viewer) -> AsyncIterator[LobbyChange]:
        """Lobby changes of tables the subscriber may see: a table appears (TABLE_CREATED)
        when it is created or comes into sight, changes (TABLE_UPDATED), or disappears
        (TABLE_REMOVED) when it finishes, closes or goes out of sight — including when the
        subscriber's friendships, blocks, invitations or links change."""
        channels = (LOBBY_CHANNEL, player_channel(viewer.id))
        with await self.broker.subscribe(*channels) as subscription:
            visible = {t.id: t.version for t in await self.tables.lobby(viewer)}
            while True:
                message = await subscription.get()
                if message is RESYNC or isinstance(message, Notice):
                    # The social graph changed, or messages may have been missed: re-route
                    # every table from the database.
                    subscription.drain()
                    viewer = await self.social.viewer(viewer.player)
                    now = {t.id: t for t in await self.tables.lobby(viewer)}
                    for table_id in sorted(now.keys() - visible.keys()):
                        yield (LobbyEvent.TABLE_CREATED, table_id, now[table_id])
                    for table_id in sorted(visible.keys() - now.keys()):
                        yield (LobbyEvent.TABLE_REMOVED, table_id, None)
                    for table_id in sorted(now.keys() & visible.keys()):
                        if now[table_id].version != visible[table_id]:
                            yield (LobbyEvent.TABLE_UPDATED, table_id, now[table_id])
                    visible = {t.id: t.version for t in now.values()}
                    continue
                routed = _route(viewer, message, visible)
                if routed is not None:
                    yield routed

    async def notifications(self, viewer: Viewer) -> AsyncIterator[Notice]:
        """The subscriber's own notifications (internal notices left out)."""
        with await self.broker.subscribe(player_channel(viewer.id)) as subscription:
            while True:
                notice = await subscription.get()
                if isinstance(notice, Notice) and notice.kind is not NoticeKind.SOCIAL_CHANGED:
                    yield notice


def _route(viewer: Viewer, message: LobbyMessage, visible: dict[str, int]) -> LobbyChange | None:
    table = message.table
    now = table.status.open and can_see(table, relation(viewer, table))
    before = visible.get(table.id)
    if now:
        if before is not None and before >= table.version:
            return None  # already seen (a catch-up got there first)
        visible[table.id] = table.version
        event = LobbyEvent.TABLE_UPDATED if before is not None else LobbyEvent.TABLE_CREATED
        return (event, table.id, table)
    if before is not None:
        del visible[table.id]
        return (LobbyEvent.TABLE_REMOVED, table.id, None)
    return None
