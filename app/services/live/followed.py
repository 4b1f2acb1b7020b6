"""A `gameUpdates` subscription whose live phase follows its table's feed
(app/services/live/table_feeds.py), and that can wait for it with no task of its own.

While a followed subscription has nothing to do, the feed writes its live changes
through its sink; all its stream does is wait for a change handed back (a gap, a
social change, a seating change, the table's end). Waiting in a task would keep, for
every idle socket, the whole chain of coroutines and async generators from the
transport's operation task down to this stream, with the GraphQL execution context
they hold: most of an idle subscribed socket's memory. So where the sink's transport
can (`Sink.park`), the stream *parks* instead: its generator returns without ending
the subscription, this object keeps what it holds (the feed, the player watch, its
presence), and the first change handed back wakes the transport (`Sink.wake`), which
runs the operation again; that run resumes here (`Streams.resume`) and parks again once
it has nothing left to do. What the subscriber receives is the same, in the same order.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from app.broker.base import RESYNC
from app.services.live.presence import PresenceService
from app.services.live.table_feeds import Follower, Sink, TableFeed
from app.services.social.model import Viewer
from app.services.tables.events import GameEvent
from app.services.tables.ledger import game_channel
from app.services.tables.snapshot import GameMessage, TableSnapshot, TableStatus

if TYPE_CHECKING:
    from app.services.live.streams import Streams

SNAPSHOT = GameEvent.SNAPSHOT


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
        """Count or stop counting the subscriber, as the table now seats them."""
        if self.presence is None:
            return
        player_id = self.player_id
        player = table.seat_of(player_id) is not None or table.away_seat(player_id) is not None
        if player and not self.counted:
            self.counted = True
            await self.presence.enter(self.table_id, player_id)
        elif self.counted and not player:
            self.counted = False
            self.presence.leave(self.table_id, player_id)

    def leave(self) -> None:
        """The subscription ended: no longer counted."""
        if self.counted and self.presence is not None:
            self.counted = False
            self.presence.leave(self.table_id, self.player_id)


class FollowedStream:
    """One followed `gameUpdates` subscription: its start (`start`), its live phase
    (`live`, which may park), and what it holds until `close`."""

    __slots__ = ("closed", "count", "feed", "follower", "parked", "streams", "table_id", "viewer")

    def __init__(
        self, streams: Streams, viewer: Viewer, table_id: str, sink: Sink, count: PresenceCount
    ) -> None:
        self.streams = streams
        self.viewer = viewer
        self.table_id = table_id
        self.count = count
        self.follower = Follower(viewer, sink, -1)
        self.feed: TableFeed | None = None
        self.parked = False  # its generator returned: it waits with no task
        self.closed = False

    async def start(self, since: int | None) -> AsyncGenerator[GameMessage, None]:
        """A SNAPSHOT or the updates after `since`, then the live phase."""
        streams = self.streams
        table, viewer = await streams.tables.get_visible(self.viewer, self.table_id)
        streams.check_viewer(viewer, table)
        follower = self.follower
        self.viewer = follower.viewer = viewer
        # Held before reading the current state: nothing published after it is lost.
        feed = self.feed = await streams.feeds.hold_table(
            self.table_id, game_channel(self.table_id)
        )
        await streams.feeds.watch_player(follower, feed)
        # The state read below covers every RESYNC the feed has had so far.
        follower.resyncs = feed.resyncs
        table = streams.tables.visible(viewer, await streams.ledger.get(self.table_id))
        await self.count.place(table)
        missed = await streams.missed(table, since) if since is not None else None
        if missed is None:
            yield GameMessage(SNAPSHOT, None, table)
            follower.last = table.version
        else:
            follower.last = since if since is not None else table.version
            for message in missed:
                yield message
                follower.last = message.version
        if table.status is TableStatus.CLOSED:
            return
        async for message in self.live():
            yield message

    async def live(self) -> AsyncGenerator[GameMessage, None]:
        """What the feed hands back (gaps, social changes, seating changes, the table's
        end, access lost), with the same checks and catch-ups as an unfollowed stream;
        returns with `parked` set once there is nothing to do and the sink holds it."""
        streams, follower = self.streams, self.follower
        feed = self.feed
        assert feed is not None
        while True:
            handback = follower.handback  # done if handed back while parked
            if handback is None or not handback.done():
                handback = feed.attach(follower)
                if not handback.done() and follower.sink.park(self):
                    self.parked = True
                    handback.add_done_callback(self._wake)
                    return
            try:
                message = await handback
            finally:
                feed.detach(follower)
            if message is None:  # the player's social graph changed: check again
                follower.social_changed = False
                self.viewer = follower.viewer = await streams.social.viewer(self.viewer.player)
                follower.checked = None
                current = await streams.ledger.get(self.table_id)
                streams.check_viewer(self.viewer, streams.tables.visible(self.viewer, current))
                continue
            if message is RESYNC or message.version > follower.last + 1:
                self.viewer = follower.viewer = await streams.social.viewer(self.viewer.player)
                follower.checked = None
                async for caught_up in streams.catch_up(self.viewer, self.table_id, follower.last):
                    yield caught_up
                    follower.last = caught_up.version
                    if caught_up.event is GameEvent.TABLE_CLOSED:
                        return
                continue
            if message.version <= follower.last:
                continue
            if message.event is GameEvent.TABLE_CLOSED:
                yield message  # seen by every subscriber, whatever its access now
                return
            streams.check_viewer(self.viewer, streams.tables.visible(self.viewer, message.table))
            yield message
            follower.last = message.version

    def _wake(self, _handback: asyncio.Future[Any]) -> None:
        if self.parked and not self.closed:
            self.follower.sink.wake()

    def close(self) -> None:
        """The subscription ended: let go of the feed, the player watch and presence."""
        if self.closed:
            return
        self.closed = True
        self.parked = False
        feed, feeds = self.feed, self.streams.feeds
        if feed is not None:
            feed.detach(self.follower)
            feeds.unwatch_player(self.follower, self.viewer.id)
            feeds.release_table(feed)
        self.count.leave()
