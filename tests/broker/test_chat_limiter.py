"""The chat rule of 5 accepted messages per 10 s per player, in Redis and in memory: a
full window refuses (with the wait), a released message frees its place, and an
unreachable Redis still leaves the rule in force."""

from __future__ import annotations

import uuid

import pytest

from app.services.chat.rate_limit import ChatLimiter, ChatRateLimited
from tests.support.server import free_port
from tests.support.services import redis_url


async def fill_and_overflow(limiter: ChatLimiter) -> None:
    player = uuid.uuid4().hex
    tickets = [await limiter.reserve(player) for _ in range(5)]
    with pytest.raises(ChatRateLimited) as refused:
        await limiter.reserve(player)
    assert 1 <= refused.value.retry_after <= 10
    # A refused attempt did not count, and a released message gives its place back.
    await limiter.release(player, tickets[-1])
    await limiter.reserve(player)
    with pytest.raises(ChatRateLimited):
        await limiter.reserve(player)
    # Another player has a window of their own.
    await limiter.reserve(uuid.uuid4().hex)


@pytest.mark.xdist_group("redis")
async def test_the_window_lives_in_redis_and_is_shared_by_limiters() -> None:
    url = redis_url()
    first, second = ChatLimiter(url), ChatLimiter(url)
    try:
        await fill_and_overflow(first)
        player = uuid.uuid4().hex
        for limiter in (first, second, first, second, first):
            await limiter.reserve(player)
        with pytest.raises(ChatRateLimited):
            await second.reserve(player)
    finally:
        await first.close()
        await second.close()


async def test_in_memory_and_with_redis_unreachable_the_rule_still_holds() -> None:
    for limiter in (ChatLimiter(), ChatLimiter(f"redis://127.0.0.1:{free_port()}/0")):
        try:
            await fill_and_overflow(limiter)
        finally:
            await limiter.close()
