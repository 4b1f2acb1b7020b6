"""Rate limits: fixed-window counters per rule and subject (player id, IP, username).

In memory for one process; in Redis when SPADES_BROKER_URL is set, so every
process shares the same counters. A limiter that cannot reach Redis lets
requests through (and logs): an outage of the limiter must not stop play.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import StrEnum

from redis.asyncio import Redis
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
    """Counts hits and refuses those over the limit."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    async def check(self, rule: Rule, subject: str) -> None:
        """Count one hit of `rule` by `subject`; raise RateLimited when over the limit."""
        if not self.enabled:
            return
        limit = LIMITS[rule]
        now = time.time()
        window = int(now // limit.seconds)
        count = await self._hit(f"{rule.value}:{subject}:{window}", limit.seconds)
        if count > limit.count:
            raise RateLimited(rule, (window + 1) * limit.seconds - now)

    @abstractmethod
    async def _hit(self, key: str, seconds: int) -> int:
        """Increment the counter `key` (expiring after `seconds`) and return it."""

    async def close(self) -> None:  # noqa: B027  (most backends hold nothing)
        """Release connections, where the backend holds any."""


class MemoryLimiter(Limiter):
    """Counters in this process."""

    def __init__(self, enabled: bool = True) -> None:
        super().__init__(enabled)
        self._counts: dict[str, tuple[float, int]] = {}

    async def _hit(self, key: str, seconds: int) -> int:
        now = time.time()
        expires, count = self._counts.get(key, (now + seconds, 0))
        count += 1
        self._counts[key] = (expires, count)
        if len(self._counts) > 50_000:
            self._counts = {k: v for k, v in self._counts.items() if v[0] > now}
        return count


class RedisLimiter(Limiter):
    """Counters shared by every process through Redis."""

    def __init__(self, url: str, enabled: bool = True) -> None:
        super().__init__(enabled)
        self._redis = Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)

    async def _hit(self, key: str, seconds: int) -> int:
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.incr("spades:rl:" + key)
                pipe.expire("spades:rl:" + key, seconds + 1)
                count, _ = await pipe.execute()
            return int(count)
        except RedisError:
            log.warning("rate limiter cannot reach Redis; letting the request through")
            return 0

    async def close(self) -> None:
        """Disconnect."""
        await self._redis.aclose()
