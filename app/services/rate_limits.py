"""Rate limits: sliding logs of hits per rule and subject (player id, IP, username).

In memory for one process; in Redis when SPADES_BROKER_URL is set, so every
process shares the same counters. A limiter that cannot reach Redis lets
requests through (and logs): an outage of the limiter must not stop play.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from app.rules.errors import ErrorCode, RuleError

log = logging.getLogger(__name__)


class Rule(StrEnum):
    """What is limited."""

    AUTH_IP = "auth_ip"  # sign-in and sign-up attempts from one IP
    SIGN_IN_USER = "sign_in_user"  # sign-in attempts for one username
    CREATE_TABLE = "create_table"
    FRIEND_REQUEST = "friend_request"
    INVITATION = "invitation"
    MOVE = "move"


@dataclass(frozen=True, slots=True)
class Limit:
    """At most `count` hits per `seconds`."""

    count: int
    seconds: int


LIMITS: dict[Rule, Limit] = {
    Rule.AUTH_IP: Limit(30, 60),
    Rule.SIGN_IN_USER: Limit(10, 60),
    Rule.CREATE_TABLE: Limit(10, 60),
    Rule.FRIEND_REQUEST: Limit(20, 60),
    Rule.INVITATION: Limit(30, 60),
    Rule.MOVE: Limit(20, 1),
}

MESSAGES: dict[Rule, str] = {
    Rule.AUTH_IP: "too many sign-in attempts from your network",
    Rule.SIGN_IN_USER: "too many sign-in attempts for this account",
    Rule.CREATE_TABLE: "too many tables created",
    Rule.FRIEND_REQUEST: "too many friend requests",
    Rule.INVITATION: "too many invitations",
    Rule.MOVE: "too many moves",
}


class RateLimited(RuleError):
    """RATE_LIMITED, with the number of seconds after which to retry."""

    def __init__(self, rule: Rule, retry_after: float) -> None:
        seconds = max(1, int(retry_after + 0.999))
        super().__init__(ErrorCode.RATE_LIMITED, f"{MESSAGES[rule]}: retry in {seconds} s")
        self.retry_after = seconds


class Limiter(ABC):
    """Counts hits and refuses those over the limit.

    A sliding log, not fixed windows: fixed windows let twice the limit through
    around a window's edge (ten guesses at 0:59 and ten more at 1:00), and made
    "at most N per minute" depend on the clock. Here no span of the rule's
    length ever holds more than its count of accepted hits. A refused hit is not
    recorded, so retrying after `retryAfter` seconds succeeds.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    async def check(self, rule: Rule, subject: str) -> None:
        """Count one hit of `rule` by `subject`; raise RateLimited when over the limit."""
        if not self.enabled:
            return
        limit = LIMITS[rule]
        wait = await self._admit(f"{rule.value}:{subject}", limit)
        if wait is not None:
            raise RateLimited(rule, wait)

    @abstractmethod
    async def _admit(self, key: str, limit: Limit) -> float | None:
        """Record a hit on `key` if the last `limit.seconds` hold fewer than `limit.count`;
        else leave it unrecorded and return the seconds until the oldest hit leaves."""

    async def close(self) -> None:  # noqa: B027  (most backends hold nothing)
        """Release connections, where the backend holds any."""


class MemoryLimiter(Limiter):
    """Hit logs in this process."""

    # Logs untouched for this long are dropped (no rule spans more).
    _IDLE_SECONDS = max(limit.seconds for limit in LIMITS.values())

    def __init__(self, enabled: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(enabled)
        self._clock = clock
        self._logs: dict[str, deque[float]] = {}
        self._next_sweep = clock() + self._IDLE_SECONDS

    async def _admit(self, key: str, limit: Limit) -> float | None:
        now = self._clock()
        hits = self._logs.get(key)
        if hits is None:
            hits = self._logs[key] = deque()
        while hits and hits[0] <= now - limit.seconds:
            hits.popleft()
        if len(hits) >= limit.count:
            return hits[0] + limit.seconds - now
        hits.append(now)
        if now >= self._next_sweep:
            self._sweep(now)
        return None

    def _sweep(self, now: float) -> None:
        """Forget subjects with no hit in the longest span, so memory follows active ones."""
        horizon = now - self._IDLE_SECONDS
        self._logs = {k: v for k, v in self._logs.items() if v and v[-1] > horizon}
        self._next_sweep = now + self._IDLE_SECONDS


# A sliding window in Redis, shared by the rate limits and the chat rule: drop hits older
# than the window, then count the new one (a sorted set of members scored by Redis's own
# clock, so processes with skewed clocks share one window) or answer how long until the
# oldest leaves. KEYS[1]: the window; ARGV: seconds, count, the new member (unique).
# Returns {1, '0'} when counted, else {0, wait}.
SLIDING_WINDOW = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) + tonumber(now_parts[2]) / 1000000
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tostring(tonumber(oldest[2]) + window - now)}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(window * 1000) + 1000)
return {1, '0'}
"""


async def admit_in_redis(
    script: AsyncScript, key: str, seconds: float, count: int, member: str
) -> float | None:
    """Count `member` in the window at `key` (SLIDING_WINDOW, registered as `script`) unless
    it is full: None when counted, else the seconds to wait. Raises RedisError."""
    counted, wait = await script(keys=[key], args=[str(seconds), str(count), member])
    return None if int(counted) == 1 else float(wait)


class RedisLimiter(Limiter):
    """Hit logs shared by every process through Redis."""

    def __init__(self, url: str, enabled: bool = True) -> None:
        super().__init__(enabled)
        self._redis = Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        self._script = self._redis.register_script(SLIDING_WINDOW)
        # Members must be unique per hit: two hits in one microsecond are two hits.
        self._ids = itertools.count()
        self._prefix = secrets.token_hex(4)

    async def _admit(self, key: str, limit: Limit) -> float | None:
        member = f"{self._prefix}:{next(self._ids)}"
        try:
            return await admit_in_redis(
                self._script, "spades:rl:" + key, limit.seconds, limit.count, member
            )
        except RedisError:
            log.warning("rate limiter cannot reach Redis; letting the request through")
            return None

    async def close(self) -> None:
        """Disconnect."""
        await self._redis.aclose()
