"""The publish/subscribe interface the services use to fan events out.

A subscription registers its queue when it is created, before anyone
iterates it, so nothing published after `subscribe()` returns is lost.
Queues are bounded: a subscriber that falls too far behind is marked
`lagged` and should resynchronise (the game stream then sends a SNAPSHOT).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

QUEUE_SIZE = 1024


class Subscription(Generic[T]):
    """One subscriber's bounded queue on one or more channels."""

    def __init__(
        self, channels: tuple[str, ...], on_close: Callable[[Subscription[T]], None]
    ) -> None:
        self.channels = channels
        self.lagged = False
        self._queue: asyncio.Queue[T] = asyncio.Queue(QUEUE_SIZE)
        self._on_close = on_close
        self._closed = False

    def deliver(self, message: T) -> None:
        """Queue a message without waiting; on overflow mark the subscriber lagged."""
        if self.lagged:
            return
        try:
            self._queue.put_nowait(message)
        except asyncio.QueueFull:
            self.lagged = True

    async def get(self) -> T:
        """The next message, waiting for one."""
        return await self._queue.get()

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

    @abstractmethod
    def subscribe(self, *channels: str) -> Subscription[T]:
        """A new subscription to one or more channels; it receives everything published on
        them from now on, in publication order."""

    async def start(self) -> None:
        """Connect, where the backend needs it."""

    async def close(self) -> None:
        """Disconnect and drop all subscriptions."""

    @property
    def healthy(self) -> bool:
        """Whether the broker can deliver right now."""
        return True
