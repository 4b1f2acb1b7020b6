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
it has nothing left to do. What the subscriber receives is the same, in the same order,
as from a subscription that reads its own queue (app/services/live/game_updates.py):
both open, check and catch up through `GameUpdates`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from app.broker.base import RESYNC
from app.services.live.game_updates import GameUpdates, PresenceCount
from app.services.live.table_feeds import Feeds, Follower, Sink, TableFeed
from app.services.social.model import Viewer
from app.services.tables.ledger import game_channel
from app.services.tables.snapshot import GameMessage


class FollowedStream:
    """One followed `gameUpdates` subscription: its start (`start`), its live phase
    (`live`, which may park), and what it holds until `close`."""

    __slots__ = ("closed", "count", "feed", "feeds", "follower", "parked", "table_id", "updates")

    def __init__(
        self,
        updates: GameUpdates,
        feeds: Feeds,
        viewer: Viewer,
        table_id: str,
        sink: Sink,
        count: PresenceCount,
    ) -> None:
        self.updates = updates
        self.feeds = feeds
        self.table_id = table_id
        self.count = count
        # The follower is the subscription's position: the feed advances its `last` for
        # every change it writes.
        self.follower = Follower(viewer, sink, -1)
        self.feed: TableFeed | None = None
        self.parked = False  # its generator returned: it waits with no task
        self.closed = False

    @property
    def viewer(self) -> Viewer:
        """The subscriber, as last loaded."""
        return self.follower.viewer

    async def follow(self, since: int | None) -> AsyncIterator[GameMessage]:
        """The subscription's stream: its start, then its live phase, placing the
        subscriber (presence) as it goes; it returns early when it parks, and `resume`
        takes it on."""
        async for message in self._placed(self.start(since)):
            yield message

    async def resume(self) -> AsyncIterator[GameMessage]:
        """The live phase of a parked stream, woken by its sink."""
        self.parked = False
        async for message in self._placed(self.live()):
            yield message

    async def _placed(
        self, updates: AsyncGenerator[GameMessage, None]
    ) -> AsyncIterator[GameMessage]:
        try:
            async for message in self.count.placed(updates):
                yield message
        finally:
            if not self.parked:
                self.close()

    async def start(self, since: int | None) -> AsyncGenerator[GameMessage, None]:
        """A SNAPSHOT or the updates after `since`, then the live phase."""
        follower = self.follower
        follower.viewer = await self.updates.admit(follower.viewer, self.table_id)
        # Held before reading the current state: nothing published after it is lost.
        feed = self.feed = await self.feeds.hold_table(self.table_id, game_channel(self.table_id))
        await self.feeds.watch_player(follower, feed)
        # The state read below covers every RESYNC the feed has had so far.
        follower.resyncs = feed.resyncs
        async for message in self.updates.opening(follower, self.table_id, since, self.count.place):
            yield message
        if follower.closed:
            return
        async for message in self.live():
            yield message

    async def live(self) -> AsyncGenerator[GameMessage, None]:
        """What the feed hands back (gaps, social changes, seating changes, the table's
        end, access lost), through `GameUpdates` as for an unfollowed stream; returns
        with `parked` set once there is nothing to do and the sink holds it."""
        follower, feed = self.follower, self.feed
        assert feed is not None
        while not follower.closed:
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
                follower.checked = None
                await self.updates.recheck(follower, self.table_id)
                continue
            if message is RESYNC or message.version > follower.last + 1:
                follower.checked = None  # the viewer is reloaded for the catch-up
            async for update in self.updates.take(follower, self.table_id, message):
                yield update

    def _wake(self, _handback: asyncio.Future[Any]) -> None:
        if self.parked and not self.closed:
            self.follower.sink.wake()

    def close(self) -> None:
        """The subscription ended: let go of the feed, the player watch and presence."""
        if self.closed:
            return
        self.closed = True
        self.parked = False
        feed = self.feed
        if feed is not None:
            feed.detach(self.follower)
            self.feeds.unwatch_player(self.follower, self.follower.viewer.id)
            self.feeds.release_table(feed)
        self.count.leave()
