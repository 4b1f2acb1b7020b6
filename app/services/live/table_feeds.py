"""The live phase of game subscriptions: one feed per table and process.

A `gameUpdates` subscription starts as any GraphQL stream (its SNAPSHOT or its missed
updates are executed for it alone). From then on, where the transport can write for it
(a `Sink`, app/api/fastpath/live.py), its stream *follows* the table's feed instead of reading a
broker queue of its own: the feed receives each change once (one broker subscription per
table, not per socket) and, in one synchronous pass, offers it to every follower, whose
sink writes the frame shared by all who see the same view. No per-subscriber task wakes,
no per-result generator, executor or extension runs.

A follower gets a change in the live phase only when nothing else is owed first:

- its versions stay gap-free and in order: a change that is not exactly `last + 1` (a
  gap, a RESYNC) hands the follower back to its stream, which catches up from the move
  log through the normal path and follows again;
- the access rules are checked for it whenever the table's access-relevant state
  differs from what it was last checked against (`access_key`); a change it may not
  receive is handed back, and the stream's own check ends it with FORBIDDEN;
- a change of its player's social graph (block, unfriend, revoked link) hands it back:
  the stream reloads the viewer and checks again (`PlayerWatch`);
- changes that change seats or end the table (presence bookkeeping, TABLE_CLOSED), and
  any the sink cannot write (an error to mask, an asynchronous field), are handed back
  and go through the normal path.

A follower that was not following when changes arrived (it was yielding through the
normal path) catches up from the feed's few most recent changes when it follows again,
or, past them, from the move log. A RESYNC leaves no change to catch up from, so the feed
counts them (`resyncs`): a follower that was away when one came is handed it back as soon
as it follows again, whatever else was owed first (after a Redis reconnect, the table
channel's RESYNC and the player channel's come together, and the latter may take the
follower away before the former is fanned out).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from app.broker.base import RESYNC, Broker, Subscription
from app.rules.errors import RuleError
from app.services.social.model import Notice, NoticeKind, Viewer, player_channel
from app.services.tables.events import GameEvent
from app.services.tables.snapshot import GameMessage, TableSnapshot

log = logging.getLogger(__name__)

# Changes a follower always receives through its stream's normal path: seating changes
# (the stream counts the subscriber's presence) and the table's end.
HANDED_BACK = frozenset(
    {
        GameEvent.SEAT_TAKEN,
        GameEvent.SEAT_LEFT,
        GameEvent.PLAYER_KICKED,
        GameEvent.PLAYER_REPLACED,
        GameEvent.SEAT_RECLAIMED,
        GameEvent.TABLE_CLOSED,
    }
)
RECENT = 8  # changes a feed keeps for followers that come back to it

Check = Callable[[Viewer, TableSnapshot], None]  # raises RuleError if not allowed


class Sink(Protocol):
    """Writes one live change for one subscriber; False: it cannot, hand it back."""

    def __call__(self, message: GameMessage) -> bool: ...

    def park(self, stream: Any) -> bool:
        """Hold `stream` (a followed subscription with nothing to do until a change is
        handed back) with no task waiting for it; False: the transport cannot, so the
        stream waits in its task."""
        ...

    def wake(self) -> None:
        """A change was handed back to the parked stream: run it again."""
        ...


def access_key(table: TableSnapshot) -> tuple[Any, ...]:
    """What the access rules read of a table (app/services/tables/access.py, `relation`): while
    it is unchanged, a viewer allowed before is allowed still."""
    return (
        table.host_id,
        table.visibility,
        table.spectating,
        table.status,
        table.occupants,
        table.away,
    )


class Follower:
    """One subscription in its live phase."""

    __slots__ = (
        "checked",
        "closed",
        "handback",
        "last",
        "resyncs",
        "sink",
        "social_changed",
        "viewer",
    )

    def __init__(self, viewer: Viewer, sink: Sink, last: int, resyncs: int = 0) -> None:
        self.viewer = viewer
        self.sink = sink
        self.last = last
        self.closed = False  # its stream sent TABLE_CLOSED: nothing more comes
        # The feed's RESYNC count this follower is caught up with (`TableFeed.resyncs`
        # when the state it started from was read, or when it was last handed a RESYNC).
        self.resyncs = resyncs
        self.checked: tuple[Any, ...] | None = None  # the access key last checked against
        self.social_changed = False
        self.handback: asyncio.Future[Any] | None = None


class TableFeed:
    """The changes of one table, fanned out to its followers in this process."""

    def __init__(self, table_id: str, check: Check, observe: Callable[[TableSnapshot], None]):
        self.table_id = table_id
        self.followers: dict[Follower, None] = {}
        self.recent: deque[GameMessage] = deque(maxlen=RECENT)
        self.holders = 0
        self.resyncs = 0  # RESYNCs received: what a follower away at the time still owes
        self.subscription: Subscription[Any] | None = None
        self.on_fanout: Callable[[float], None] | None = None
        self._check = check
        self._observe = observe
        self._inbox: list[Any] = []  # a list: an empty deque is ~0.6 KiB per table
        self._scheduled = False
        self._key: tuple[Any, ...] | None = None

    def receive(self, message: Any) -> None:
        """The broker's listener: queue, and fan out soon (never inside the publisher)."""
        self._inbox.append(message)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._pump)

    def _pump(self) -> None:
        self._scheduled = False
        while self._inbox:
            inbox, self._inbox = self._inbox, []
            for index, message in enumerate(inbox):
                try:
                    self._take(message)
                except BaseException:
                    self._inbox[:0] = inbox[index + 1 :]  # kept for the next pass
                    raise

    def _take(self, message: Any) -> None:
        if message is RESYNC:
            self.recent.clear()
            self.resyncs += 1
            for follower in list(self.followers):
                self._hand_back(follower, RESYNC)
        elif isinstance(message, GameMessage):
            self._fan_out(message)

    def _fan_out(self, message: GameMessage) -> None:
        self._observe(message.table)
        key = access_key(message.table)
        if key == self._key:
            key = self._key  # the same object: followers checked against it compare by identity
        self._key = key
        recent = self.recent
        if recent:
            # The previous change's projections, results and frames served its pass and
            # any stragglers; kept among the recent changes they would outlive young
            # collections by the thousand (a follower that catches up from it projects
            # again).
            recent[-1].views.clear()
        recent.append(message)
        written = False
        version = message.table.version  # `message.version`, read once for the pass
        for follower in list(self.followers):
            if follower.last < version and self._offer(follower, message, key, version):
                written = True
        # Once per pass, at its end (the latency of its last write), not per follower:
        # the followers handed back are observed on their GraphQL path instead.
        if written and self.on_fanout is not None and message.committed_at:
            self.on_fanout(max(0.0, time.time() - message.committed_at))

    def _offer(
        self, follower: Follower, message: GameMessage, key: tuple[Any, ...], version: int
    ) -> bool:
        """Write `message` (at `version`) for `follower`, or hand it back; False once
        handed back."""
        if version <= follower.last:
            return True
        try:
            written = (
                version == follower.last + 1
                and message.event not in HANDED_BACK
                and (follower.checked is key or self._allowed(follower, message.table, key))
                and follower.sink(message)
            )
        except Exception:  # a bug in a sink must not stop the table's other followers
            log.exception("live update for one follower failed; handed back")
            written = False
        if not written:
            self._hand_back(follower, message)
            return False
        follower.last = version
        return True

    def _allowed(self, follower: Follower, table: TableSnapshot, key: tuple[Any, ...]) -> bool:
        try:
            self._check(follower.viewer, table)
        except RuleError:
            return False
        follower.checked = key
        return True

    def _hand_back(self, follower: Follower, message: Any) -> None:
        self.followers.pop(follower, None)
        if message is RESYNC:
            follower.resyncs = self.resyncs
        handback = follower.handback
        if handback is not None and not handback.done():
            handback.set_result(message)

    def attach(self, follower: Follower) -> asyncio.Future[Any]:
        """Follow the table from now on: the future is done when a change is handed back
        (that change, RESYNC, or None when the follower's social graph changed), maybe
        at once (what came while the follower was away)."""
        handback = follower.handback = asyncio.get_running_loop().create_future()
        if follower.resyncs != self.resyncs:  # one came while it was away: catch up first
            self._hand_back(follower, RESYNC)
        elif follower.social_changed:
            handback.set_result(None)
        else:
            self.followers[follower] = None
            for message in list(self.recent):  # what came while it was not following
                if message.version <= follower.last:
                    continue
                latest = message is self.recent[-1] and self._key is not None
                key = self._key if latest else access_key(message.table)
                if not self._offer(follower, message, key, message.version):  # type: ignore[arg-type]
                    break
        return handback

    def detach(self, follower: Follower) -> None:
        """Stop following (what `attach` started), whatever is pending."""
        self.followers.pop(follower, None)
        handback, follower.handback = follower.handback, None
        if handback is not None and not handback.done():
            handback.cancel()

    async def follow(self, follower: Follower) -> Any:
        """Follow the table until a change is handed back: that change, RESYNC, or None
        when the follower's social graph changed."""
        try:
            return await self.attach(follower)
        finally:
            self.detach(follower)

    def social_changed(self, follower: Follower) -> None:
        """The follower's player's social graph changed: recheck through the stream."""
        follower.social_changed = True
        if follower in self.followers:
            self._hand_back(follower, None)


class PlayerWatch:
    """One broker subscription per player channel in this process, for the followers of
    that player: a social change (or a missed message) hands them back to recheck."""

    def __init__(self) -> None:
        self.followers: dict[Follower, TableFeed] = {}
        self.subscription: Subscription[Any] | None = None

    def receive(self, message: Any) -> None:
        """The broker's listener."""
        if message is RESYNC or (
            isinstance(message, Notice) and message.kind is NoticeKind.SOCIAL_CHANGED
        ):
            for follower, feed in list(self.followers.items()):
                feed.social_changed(follower)


class Feeds:
    """The table feeds and player watches of this process, each alive while held."""

    def __init__(self, broker: Broker[Any], check: Check, observe: Callable[[Any], None]):
        self.broker = broker
        self.check = check
        self.observe = observe
        self.tables: dict[str, TableFeed] = {}
        self.players: dict[str, PlayerWatch] = {}
        # Called with the seconds from a change's commit to the end of a feed's pass that
        # wrote it to some follower (the fan-out latency metric); set before feeds exist.
        self.on_fanout: Callable[[float], None] | None = None

    async def hold_table(self, table_id: str, channel: str) -> TableFeed:
        """The table's feed, subscribed to `channel` before this returns (nothing
        published after it is lost), until `release_table`."""
        feed = self.tables.get(table_id)
        if feed is None:
            feed = self.tables[table_id] = TableFeed(table_id, self.check, self.observe)
            feed.on_fanout = self.on_fanout
        feed.holders += 1
        try:
            if feed.subscription is None:
                subscription = await self.broker.subscribe(channel)
                if feed.subscription is None:
                    feed.subscription = subscription
                    subscription.listen(feed.receive)
                else:  # another holder subscribed meanwhile
                    subscription.close()
        except BaseException:
            self.release_table(feed)
            raise
        return feed

    def release_table(self, feed: TableFeed) -> None:
        """One holder less; the last one closes the feed's subscription."""
        feed.holders -= 1
        if feed.holders == 0:
            if self.tables.get(feed.table_id) is feed:
                del self.tables[feed.table_id]
            if feed.subscription is not None:
                feed.subscription.close()

    @contextlib.asynccontextmanager
    async def table(self, table_id: str, channel: str) -> AsyncIterator[TableFeed]:
        """The table's feed (`hold_table`) for as long as the caller holds it."""
        feed = await self.hold_table(table_id, channel)
        try:
            yield feed
        finally:
            self.release_table(feed)

    async def watch_player(self, follower: Follower, feed: TableFeed) -> None:
        """Watch the follower's player's channel (its social changes) until
        `unwatch_player`."""
        player_id = follower.viewer.id
        watch = self.players.get(player_id)
        if watch is None:
            watch = self.players[player_id] = PlayerWatch()
        watch.followers[follower] = feed
        try:
            if watch.subscription is None:
                subscription = await self.broker.subscribe(player_channel(player_id))
                if watch.subscription is None:
                    watch.subscription = subscription
                    subscription.listen(watch.receive)
                else:
                    subscription.close()
        except BaseException:
            self.unwatch_player(follower, player_id)
            raise

    def unwatch_player(self, follower: Follower, player_id: str) -> None:
        """The follower no longer watches its player's channel (`watch_player`)."""
        watch = self.players.get(player_id)
        if watch is None:
            return
        watch.followers.pop(follower, None)
        if not watch.followers:
            del self.players[player_id]
            if watch.subscription is not None:
                watch.subscription.close()

    @contextlib.asynccontextmanager
    async def player(self, follower: Follower, feed: TableFeed) -> AsyncIterator[None]:
        """Watch the follower's player's channel (`watch_player`) while held."""
        player_id = follower.viewer.id
        await self.watch_player(follower, feed)
        try:
            yield
        finally:
            self.unwatch_player(follower, player_id)
