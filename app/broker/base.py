"""The publish/subscribe interface the services use to fan events out.

A subscription registers its queue when it is created, before anyone
iterates it, so nothing published after `subscribe()` returns is lost.
Queues are bounded: a subscriber that falls too far behind is marked
`lagged`, and its next `get()` answers RESYNC: it should resynchronise (the game
stream catches up from the move log or sends a SNAPSHOT).
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

QUEUE_SIZE = 1024


class _Resync:
    """Queued to wake a subscriber that must resynchronise (overflow, reconnect)."""

    def __repr__(self) -> str:
        return "RESYNC"


RESYNC: Any = _Resync()


class Subscription(Generic[T]):
    """One subscriber's bounded queue on one or more channels."""

    def __init__(
        self, channels: tuple[str, ...], on_close: Callable[[Subscription[T]], None]
    ) -> None:
        self.channels = channels
        self.lagged = False
        self._on_close = on_close
        self._closed = False
        self._listener: Callable[[T], None] | None = None

    @property
    def _queue(self) -> asyncio.Queue[T]:
        # Made on first use: a listening subscription (one per table or player, fanning
        # out synchronously) never needs one.
        queue = self.__dict__.get("queue")
        if queue is None:
            queue = self.__dict__["queue"] = asyncio.Queue(QUEUE_SIZE)
        return queue

    def listen(self, listener: Callable[[T], None]) -> None:
        """Hand every message (and RESYNC) to `listener` as it arrives instead of queueing
        it: for a subscriber that fans out synchronously (app/services/live/table_feeds.py), one per
        channel rather than one queue per socket. `listener` must not block or raise."""
        self._listener = listener
        queue = self.__dict__.get("queue")
        while queue is not None and not queue.empty():  # published before listening
            listener(queue.get_nowait())

    def deliver(self, message: T) -> None:
        """Queue a message without waiting; on overflow mark the subscriber lagged."""
        if self._listener is not None:
            self._listener(message)
            return
        if self.lagged:
            return
        try:
            self._queue.put_nowait(message)
        except asyncio.QueueFull:
            self.lagged = True

    def resync(self) -> None:
        """Tell the subscriber it may have missed messages (e.g. the broker reconnected)."""
        if self._listener is not None:
            self._listener(RESYNC)
            return
        self.lagged = True
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(RESYNC)

    async def get(self) -> T:
        """The next message, waiting for one. Once the subscription has lagged (overflow,
        broker reconnect) it answers RESYNC with the queue emptied, and delivers again:
        every caller resynchronises, and none stays deaf by forgetting to drain."""
        if not self.lagged:
            message = await self._queue.get()
            if message is not RESYNC:
                return message
        self.drain()
        return RESYNC  # type: ignore[no-any-return]

    def drain(self) -> list[T]:
        """Everything queued now, and reset the lagged mark (the caller resynchronises)."""
        items = []
        while not self._queue.empty():
            items.append(self._queue.get_nowait())
        self.lagged = False
        return items

    def close(self) -> None:
        """Stop receiving. Idempotent."""
        if not self._closed:
            self._closed = True
            self._on_close(self)

    def __enter__(self) -> Subscription[T]:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class Broker(ABC, Generic[T]):
    """Channels of messages, fanned out to every current subscriber of a channel."""

    @abstractmethod
    async def publish(self, channel: str, message: T) -> None:
        """Send `message` to every subscriber of `channel`."""

    async def post(self, channel: str, messages: list[T]) -> None:
        """Send `messages` in order to every subscriber of `channel`, without waiting for
        them to be out where the backend sends them later (Redis: in one pipelined trip
        with whatever else is waiting). A failure is logged, not raised: subscribers catch
        up as after any message they missed (the next version shows them the gap)."""
        for message in messages:
            await self.publish(channel, message)

    @abstractmethod
    async def publish_counted(self, channel: str, message: T) -> int:
        """Publish like `publish`, and return how many subscribers received the message:
        one per process subscribed to `channel` (for a sender that waits for each to
        answer)."""

    @abstractmethod
    async def subscribe(self, *channels: str) -> Subscription[T]:
        """A new subscription to one or more channels; once this returns it receives
        everything published on them, in publication order."""

    async def start(self) -> None:
        """Connect, where the backend needs it."""

    async def close(self) -> None:
        """Disconnect and drop all subscriptions."""

    @property
    def healthy(self) -> bool:
        """Whether the broker can deliver right now."""
        return True
