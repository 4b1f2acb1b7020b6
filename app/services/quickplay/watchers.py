"""Who watches their tickets: the `quickPlayUpdates` subscriptions of each player, counted
across processes (in memory for one process, in Redis for several).

A SEARCHING ticket is kept while its owner watches it (docs/rules.md, Quick play): the
matchmaker asks `unwatched_since` for the players it serves and expires the tickets of
those unwatched for 10 s. The counts work as presence's do (app/services/live/
presence_store.py): per player, the number of processes holding at least one of their
subscriptions, plus each process's own entries and a heartbeat key; when a process
dies its heartbeat lapses and the first other process to notice takes its entries off
the counts, as ended at its last heartbeat.

A store in memory dies with its process: after a restart every player counts as
unwatched since the start, so a ticket that survived the restart gets 10 s for its
owner to come back.
"""

from __future__ import annotations

import logging
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Collection

from redis.asyncio import Redis

log = logging.getLogger(__name__)

PREFIX = "spades:quickplay:watch:"
# How long the end of a watch is remembered in Redis: far longer than the 10 s that
# matter (a ticket whose owner's end is forgotten counts from its start: long past).
ENDED_TTL_SECONDS = 3600


class WatchStore(ABC):
    """The shared counts of watching processes per player."""

    @abstractmethod
    async def watch(self, player_id: str) -> None:
        """This process now holds a subscription of the player (it held none)."""

    @abstractmethod
    async def unwatch(self, player_id: str) -> None:
        """This process no longer holds one (it held one)."""

    @abstractmethod
    async def unwatched_since(self, player_ids: Collection[str]) -> dict[str, float | None]:
        """For each player, None while one of their subscriptions is open on some
        process, else when their last one ended (0.0: never, or too long ago)."""

    async def heartbeat(self, local: Collection[str]) -> None:  # noqa: B027
        """Say this process is alive (counting `local` again if it was given up for
        dead) and give up dead processes."""

    async def start(self) -> None:  # noqa: B027 - nothing to connect in memory
        """Connect."""

    async def close(self) -> None:  # noqa: B027
        """Disconnect."""


class MemoryWatchers(WatchStore):
    """The watchers of one process."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._ended: dict[str, float] = {}
        self._started = time.time()

    async def watch(self, player_id: str) -> None:
        self._counts[player_id] = self._counts.get(player_id, 0) + 1

    async def unwatch(self, player_id: str) -> None:
        left = self._counts.get(player_id, 0) - 1
        if left > 0:
            self._counts[player_id] = left
            return
        self._counts.pop(player_id, None)
        self._ended[player_id] = time.time()

    async def unwatched_since(self, player_ids: Collection[str]) -> dict[str, float | None]:
        return {
            p: None if self._counts.get(p) else max(self._ended.get(p, 0.0), self._started)
            for p in player_ids
        }


# Count one more watching process; the end of an earlier watch no longer matters.
# KEYS: counts, ended key of the player; ARGV: player.
_WATCH = """
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('DEL', KEYS[2])
return 0
"""
# Count one fewer; at zero, remember when the player's last watch ended.
# KEYS: counts, ended key of the player; ARGV: player, when, ttl.
_UNWATCH = """
local left = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if left <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
end
return 0
"""


class RedisWatchers(WatchStore):
    """Watchers shared by every process through Redis."""

    def __init__(self, url: str, ttl_seconds: float = 15.0) -> None:
        self.url = url
        self.ttl = max(1, round(ttl_seconds))
        self.process_id = uuid.uuid4().hex
        self._redis: Redis | None = None

    @property
    def redis(self) -> Redis:
        """The connection (after `start`)."""
        assert self._redis is not None, "watch store not started"
        return self._redis

    async def start(self) -> None:
        self._redis = Redis.from_url(self.url, socket_connect_timeout=2, socket_timeout=5)
        await self._alive()

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()

    async def watch(self, player_id: str) -> None:
        await self.redis.sadd(PREFIX + "entries:" + self.process_id, player_id)
        await self.redis.eval(_WATCH, 2, PREFIX + "count", _ended(player_id), player_id)

    async def unwatch(self, player_id: str) -> None:
        await self.redis.srem(PREFIX + "entries:" + self.process_id, player_id)
        await self._uncount(player_id, time.time())

    async def _uncount(self, player_id: str, at: float) -> None:
        keys = (PREFIX + "count", _ended(player_id))
        await self.redis.eval(_UNWATCH, 2, *keys, player_id, repr(at), ENDED_TTL_SECONDS)

    async def unwatched_since(self, player_ids: Collection[str]) -> dict[str, float | None]:
        players = list(player_ids)
        if not players:
            return {}
        counts = await self.redis.hmget(PREFIX + "count", players)
        ended = await self.redis.mget([_ended(p) for p in players])
        out: dict[str, float | None] = {}
        for player, count, at in zip(players, counts, ended, strict=True):
            watched = count is not None and int(count) > 0
            out[player] = None if watched else float(at) if at is not None else 0.0
        return out

    async def _alive(self) -> bool:
        """Refresh this process's heartbeat; True if it had been given up for dead."""
        now = time.time()
        await self.redis.set(PREFIX + "alive:" + self.process_id, repr(now), ex=self.ttl)
        await self.redis.hset(PREFIX + "beats", self.process_id, repr(now))
        return bool(await self.redis.sadd(PREFIX + "processes", self.process_id))

    async def heartbeat(self, local: Collection[str]) -> None:
        if await self._alive() and local:
            log.warning("quick play: this process was taken for dead; counting its watchers")
            for player_id in local:
                await self.watch(player_id)
        for raw in await self.redis.smembers(PREFIX + "processes"):
            process_id = raw.decode() if isinstance(raw, bytes) else str(raw)
            if process_id == self.process_id:
                continue
            if await self.redis.exists(PREFIX + "alive:" + process_id):
                continue
            if not await self.redis.srem(PREFIX + "processes", process_id):
                continue  # another process is reaping it
            await self._reap(process_id)

    async def _reap(self, process_id: str) -> None:
        """Take a dead process's watchers off the counts, as ended at its last beat."""
        beat = await self.redis.hget(PREFIX + "beats", process_id)
        at = float(beat) if beat is not None else time.time()
        entries_key = PREFIX + "entries:" + process_id
        players = await self.redis.smembers(entries_key)
        await self.redis.delete(entries_key)
        await self.redis.hdel(PREFIX + "beats", process_id)
        for raw in players:
            await self._uncount(raw.decode() if isinstance(raw, bytes) else str(raw), at)


def _ended(player_id: str) -> str:
    return PREFIX + "ended:" + player_id
