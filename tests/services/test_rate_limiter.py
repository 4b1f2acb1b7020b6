"""The rate limiter's counting: no span of a rule's length ever admits more than its count,
in memory and in Redis, and a refused hit costs nothing."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.services.rate_limits import LIMITS, MemoryLimiter, RateLimited, RedisLimiter, Rule
from tests.support.services import redis_url

RULE = Rule.SIGN_IN_USER
LIMIT = LIMITS[RULE]


class FakeClock:
    """Seconds that only move when a test moves them."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


async def admitted(limiter: MemoryLimiter | RedisLimiter, subject: str) -> bool:
    """Whether one hit by `subject` is let through."""
    try:
        await limiter.check(RULE, subject)
    except RateLimited:
        return False
    return True


async def test_a_burst_across_a_minute_boundary_is_still_limited() -> None:
    # Fixed windows let 2x the count through around a window's edge; a sliding log
    # does not, whatever the wall clock reads.
    clock = FakeClock()
    clock.now = 59.5
    limiter = MemoryLimiter(clock=clock)
    for _ in range(LIMIT.count):
        assert await admitted(limiter, "victim")
    clock.now = 60.5
    assert not await admitted(limiter, "victim")


async def test_a_refused_hit_is_not_counted_and_retry_after_is_when_it_would_pass() -> None:
    clock = FakeClock()
    limiter = MemoryLimiter(clock=clock)
    for _ in range(LIMIT.count):
        assert await admitted(limiter, "victim")
        clock.now += 1
    with pytest.raises(RateLimited) as refused:
        await limiter.check(RULE, "victim")
    assert refused.value.retry_after == LIMIT.seconds - LIMIT.count
    clock.now += 5  # hammering while refused does not push the wait further out
    assert not await admitted(limiter, "victim")
    clock.now += refused.value.retry_after - 5
    assert await admitted(limiter, "victim")
    assert not await admitted(limiter, "victim")


async def test_subjects_are_counted_apart_and_idle_ones_are_forgotten() -> None:
    clock = FakeClock()
    limiter = MemoryLimiter(clock=clock)
    for _ in range(LIMIT.count):
        assert await admitted(limiter, "one")
    assert await admitted(limiter, "two")
    clock.now += 2 * max(limit.seconds for limit in LIMITS.values()) + 1
    assert await admitted(limiter, "three")
    assert set(limiter._logs) == {f"{RULE.value}:three"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=10, allow_nan=False), max_size=60))
def test_no_span_of_the_rules_length_ever_admits_more_than_its_count(gaps: list[float]) -> None:
    clock = FakeClock()
    limiter = MemoryLimiter(clock=clock)
    accepted: list[float] = []
    for gap in gaps:
        clock.now += gap
        recent = [t for t in accepted if t > clock.now - LIMIT.seconds]
        if asyncio.run(admitted(limiter, "victim")):
            accepted.append(clock.now)
            assert len(recent) < LIMIT.count
        else:  # refused only when the span is really full
            assert len(recent) == LIMIT.count


@pytest.mark.xdist_group("redis")
async def test_redis_limiter_shares_one_sliding_log_between_processes() -> None:
    url = redis_url()
    one, two = RedisLimiter(url), RedisLimiter(url)
    subject = uuid.uuid4().hex
    try:
        for index in range(LIMIT.count):
            assert await admitted(one if index % 2 else two, subject)
        with pytest.raises(RateLimited) as refused:
            await one.check(RULE, subject)
        assert 1 <= refused.value.retry_after <= LIMIT.seconds
        assert not await admitted(two, subject)
        assert await admitted(two, uuid.uuid4().hex)
    finally:
        await one.close()
        await two.close()
