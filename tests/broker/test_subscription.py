"""Subscriptions: bounded queues that, once behind, say RESYNC and then deliver again."""

from __future__ import annotations

import asyncio

from app.broker import base
from app.broker.base import RESYNC
from app.broker.memory import MemoryBroker


async def test_messages_arrive_in_publication_order() -> None:
    broker: MemoryBroker = MemoryBroker()
    with await broker.subscribe("c") as subscription:
        for n in range(3):
            await broker.publish("c", n)
        assert [await subscription.get() for _ in range(3)] == [0, 1, 2]


async def test_a_reconnect_says_resync_once_then_delivers_again() -> None:
    broker: MemoryBroker = MemoryBroker()
    with await broker.subscribe("c") as subscription:
        await broker.publish("c", "before")
        subscription.resync()  # what a broker does when its connection came back
        await broker.publish("c", "dropped while lagged")
        assert await subscription.get() is RESYNC
        # A subscriber that only skips RESYNC (never drains) still hears what follows.
        await broker.publish("c", "after")
        assert await asyncio.wait_for(subscription.get(), 1) == "after"


async def test_an_overflowing_queue_says_resync_then_delivers_again() -> None:
    broker: MemoryBroker = MemoryBroker()
    with await broker.subscribe("c") as subscription:
        for n in range(base.QUEUE_SIZE + 5):
            await broker.publish("c", n)
        assert subscription.lagged
        assert await subscription.get() is RESYNC
        assert not subscription.lagged
        await broker.publish("c", "fresh")
        assert await asyncio.wait_for(subscription.get(), 1) == "fresh"
