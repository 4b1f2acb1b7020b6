"""The in-process broker: the embedded default for a single server process."""

from __future__ import annotations

from typing import TypeVar

from app.broker.base import Broker, Subscription

T = TypeVar("T")


class MemoryBroker(Broker[T]):
    """Fans messages out to asyncio queues in this process."""

    def __init__(self) -> None:
        self._channels: dict[str, set[Subscription[T]]] = {}

    async def publish(self, channel: str, message: T) -> None:
        """Deliver to every subscriber of `channel` now (never blocks on a slow one)."""
        for subscription in tuple(self._channels.get(channel, ())):
            subscription.deliver(message)

    async def post(self, channel: str, messages: list[T]) -> None:
        """Deliver each of `messages`, in order, to every subscriber of `channel` now."""
        channels = self._channels
        for message in messages:
            for subscription in tuple(channels.get(channel, ())):
                subscription.deliver(message)

    async def publish_counted(self, channel: str, message: T) -> int:
        """Deliver now; the number of subscriptions that received it."""
        subscribers = tuple(self._channels.get(channel, ()))
        for subscription in subscribers:
            subscription.deliver(message)
        return len(subscribers)

    async def subscribe(self, *channels: str) -> Subscription[T]:
        """Register a queue on `channels` at once."""
        subscription: Subscription[T] = Subscription(channels, self._remove)
        for channel in channels:
            self._channels.setdefault(channel, set()).add(subscription)
        return subscription

    def _remove(self, subscription: Subscription[T]) -> None:
        for channel in subscription.channels:
            subscribers = self._channels.get(channel)
            if subscribers is not None:
                subscribers.discard(subscription)
                if not subscribers:
                    del self._channels[channel]

    def subscriber_count(self, channel: str) -> int:
        """How many subscriptions `channel` has (for tests and metrics)."""
        return len(self._channels.get(channel, ()))
