"""The chat rule "at most 5 accepted messages per 10 s per player" (docs/rules.md, Table chat).

This is a rule of chat, not an abuse limit: it holds with SPADES_RATE_LIMITS=off. It is a
sliding window over the messages actually accepted: a message is counted only once it
is stored (`reserve` counts it, `release` takes it back if storing failed), and a
refused message never counts. With SPADES_BROKER_URL set the window lives in Redis, so a
player's messages count on every process; while Redis cannot be reached, each process
keeps counting on its own rather than letting messages through unlimited.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.rules.errors import ErrorCode, RuleError
from app.services.rate_limits import SLIDING_WINDOW, admit_in_redis

log = logging.getLogger(__name__)

CHAT_MESSAGES = 5
CHAT_WINDOW_SECONDS = 10.0


class ChatRateLimited(RuleError):
    """RATE_LIMITED, with the number of seconds after which a message would be accepted."""

    def __init__(self, retry_after: float) -> None:
        seconds = max(1, int(retry_after + 0.999))
        super().__init__(
            ErrorCode.RATE_LIMITED,
            f"at most {CHAT_MESSAGES} chat messages per {CHAT_WINDOW_SECONDS:g} s: "
            f"retry in {seconds} s",
        )
        self.retry_after = seconds


class ChatLimiter:
    """Counts accepted chat messages per player in a sliding window."""

    def __init__(
        self,
        broker_url: str | None = None,
        limit: int = CHAT_MESSAGES,
        window: float = CHAT_WINDOW_SECONDS,
    ) -> None:
        self.limit = limit
        self.window = window
        self._local: dict[str, deque[tuple[float, str]]] = {}
        self._redis = (
            Redis.from_url(broker_url, socket_connect_timeout=1, socket_timeout=1)
            if broker_url
            else None
        )
        # Sent by its digest (EVALSHA), and loaded again if Redis forgot it.
        self._script = self._redis.register_script(SLIDING_WINDOW) if self._redis else None

    async def reserve(self, player_id: str) -> str:
        """Count one message of `player_id` and return its ticket (for `release`); raise
        ChatRateLimited, counting nothing, when the window is full."""
        ticket = uuid.uuid4().hex
        if self._script is not None:
            try:
                wait = await admit_in_redis(
                    self._script, _key(player_id), self.window, self.limit, ticket
                )
            except RedisError:
                log.warning("chat limiter cannot reach Redis; counting in this process")
            else:
                if wait is not None:
                    raise ChatRateLimited(wait)
                return ticket
        self._reserve_locally(player_id, ticket)
        return ticket

    async def release(self, player_id: str, ticket: str) -> None:
        """Uncount a reserved message that was not accepted after all."""
        window = self._local.get(player_id)
        if window is not None:
            self._local[player_id] = deque(e for e in window if e[1] != ticket)
        if self._redis is not None:
            try:
                await self._redis.zrem(_key(player_id), ticket)
            except RedisError:
                log.warning("chat limiter cannot reach Redis to release a message")

    def _reserve_locally(self, player_id: str, ticket: str) -> None:
        now = time.monotonic()
        window = self._local.setdefault(player_id, deque())
        while window and window[0][0] <= now - self.window:
            window.popleft()
        if len(window) >= self.limit:
            raise ChatRateLimited(window[0][0] + self.window - now)
        window.append((now, ticket))
        if len(self._local) > 50_000:
            fresh = now - self.window
            self._local = {p: w for p, w in self._local.items() if w and w[-1][0] > fresh}

    async def close(self) -> None:
        """Disconnect from Redis."""
        if self._redis is not None:
            await self._redis.aclose()


def _key(player_id: str) -> str:
    return f"spades:chat:{player_id}"
