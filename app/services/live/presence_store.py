"""Where presence is counted: in memory for one process, in Redis across processes.

The count of a (table, player) is the number of server processes holding at
least one of that player's `gameUpdates` subscriptions to the table; the
player is connected while it is above zero. In Redis each process also keeps
the set of its own entries and a heartbeat key with a TTL: when a process dies,
its heartbeat lapses and the first other process to notice (a `SREM` of the
process from the set of processes, which only one can win) takes its entries
off the counts, so its players turn disconnected. Presence never touches the
database nor a game version.

The store also indexes who is disconnected since when (a sorted set in Redis), so
the reconnect window's deadline outlives the process that saw the disconnection:
every process looks up the overdue ones (`absent_before`) and settles them. In memory
the index dies with the process, so at start-up every seated human of a game in
progress counts as disconnected since the start (`restarted`).
"""

from __future__ import annotations

import logging
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

log = logging.getLogger(__name__)

PREFIX = "spades:presence:"


@dataclass(frozen=True, slots=True)
class Mark:
    """A player's presence at a table: connected or not, and since when (epoch)."""

    connected: bool
    changed_at: float


class PresenceStore(ABC):
    """The shared counts of connected players per table."""

    # Whether other processes read these counts (a player may come back on one of them).
    shared = False

    @abstractmethod
    async def connect(self, table_id: str, player_id: str) -> Mark | None:
        """This process now holds a subscription of the player: the new mark if the
        player was not connected before (a change to announce), else None."""

    @abstractmethod
    async def disconnect(self, table_id: str, player_id: str) -> Mark | None:
        """This process no longer holds one: the new mark if no process holds one any
        more (a change to announce), else None."""

    @abstractmethod
    async def marks(self, table_id: str) -> dict[str, Mark]:
        """The marks of the players of a table that were ever connected."""

    @abstractmethod
    async def absent_before(self, cutoff: float) -> list[tuple[str, str, float]]:
        """The (table, player, disconnected at) of players disconnected since before
        `cutoff` and not yet settled."""

    @abstractmethod
    async def settle(self, table_id: str, player_id: str, since: float) -> None:
        """Forget that the player is disconnected since `since` (handled); a later
        disconnection of theirs stays indexed."""

    async def restarted(self, seated: list[tuple[str, str]], at: float) -> None:  # noqa: B027
        """The process (re)started with these (table, player) seated at tables in
        progress. A shared store (Redis) outlives the process and keeps what it knew;
        one that lived in the process has to assume something (MemoryPresence)."""

    async def heartbeat(self, local: set[tuple[str, str]]) -> list[tuple[str, str, Mark]]:
        """Say this process is alive (re-registering `local` if it had been given up for
        dead) and give up dead processes: the (table, player, mark) that turned
        disconnected because of them."""
        return []

    async def start(self) -> None:  # noqa: B027 - nothing to connect in memory
        """Connect."""

    async def close(self) -> None:  # noqa: B027
        """Disconnect (a Redis store leaves its entries to expire with its heartbeat)."""


class MemoryPresence(PresenceStore):
    """Presence within one process."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], int] = {}
        self._marks: dict[str, dict[str, Mark]] = {}
        self._absent: dict[tuple[str, str], float] = {}

    async def connect(self, table_id: str, player_id: str) -> Mark | None:
        key = (table_id, player_id)
        self._counts[key] = self._counts.get(key, 0) + 1
        if self._counts[key] != 1:
            return None
        self._absent.pop(key, None)
        return self._mark(table_id, player_id, True)

    async def disconnect(self, table_id: str, player_id: str) -> Mark | None:
        key = (table_id, player_id)
        left = self._counts.get(key, 0) - 1
        if left > 0:
            self._counts[key] = left
            return None
        self._counts.pop(key, None)
        mark = self._mark(table_id, player_id, False)
        self._absent[key] = mark.changed_at
        return mark

    async def marks(self, table_id: str) -> dict[str, Mark]:
        return dict(self._marks.get(table_id, {}))

    async def restarted(self, seated: list[tuple[str, str]], at: float) -> None:
        """Who was connected died with the last process: every seated human of a game in
        progress counts as disconnected since the start, so the reconnect window runs
        from it (one who comes back in time is not replaced; one who does not is, as if
        they had dropped at the restart)."""
        for table_id, player_id in seated:
            if (table_id, player_id) in self._counts:
                continue  # already here again
            self._marks.setdefault(table_id, {})[player_id] = Mark(False, at)
            self._absent[(table_id, player_id)] = at

    async def absent_before(self, cutoff: float) -> list[tuple[str, str, float]]:
        return [(t, p, at) for (t, p), at in self._absent.items() if at < cutoff]

    async def settle(self, table_id: str, player_id: str, since: float) -> None:
        if self._absent.get((table_id, player_id)) == since:
            del self._absent[(table_id, player_id)]

    def _mark(self, table_id: str, player_id: str, connected: bool) -> Mark:
        mark = Mark(connected, time.time())
        self._marks.setdefault(table_id, {})[player_id] = mark
        return mark


# Decrement a count, dropping it at zero, and stamp the time of a change (indexing the
# disconnection, or dropping it from the index on a connection): atomic in Redis.
# KEYS: counts, stamps, the absent index; ARGV: player, now, "table|player".
_DISCONNECT = """
local left = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if left <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
  return 1
end
return 0
"""
_CONNECT = """
local now = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if now == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('ZREM', KEYS[3], ARGV[3])
  return 1
end
return 0
"""
# Drop an index entry only if it is still the disconnection that was handled.
_SETTLE = """
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if at and tonumber(at) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""
ABSENT = PREFIX + "absent"


class RedisPresence(PresenceStore):
    """Presence shared by every process through Redis."""

    shared = True

    def __init__(self, url: str, ttl_seconds: float = 15.0) -> None:
        self.url = url
        self.ttl = max(1, round(ttl_seconds))
        self.process_id = uuid.uuid4().hex
        self._redis: Redis | None = None

    @property
    def redis(self) -> Redis:
        """The connection (after `start`)."""
        assert self._redis is not None, "presence store not started"
        return self._redis

    async def start(self) -> None:
        self._redis = Redis.from_url(self.url, socket_connect_timeout=2, socket_timeout=5)
        await self._alive()

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()

    def _keys(self, table_id: str) -> tuple[str, str, str]:
        return PREFIX + "count:" + table_id, PREFIX + "at:" + table_id, ABSENT

    def _entries(self, process_id: str) -> str:
        return PREFIX + "entries:" + process_id

    async def connect(self, table_id: str, player_id: str) -> Mark | None:
        now = time.time()
        await self.redis.sadd(self._entries(self.process_id), f"{table_id}|{player_id}")
        entry = f"{table_id}|{player_id}"
        keys = self._keys(table_id)
        changed = await self.redis.eval(_CONNECT, 3, *keys, player_id, now, entry)
        return Mark(True, now) if changed else None

    async def disconnect(self, table_id: str, player_id: str) -> Mark | None:
        now = time.time()
        entry = f"{table_id}|{player_id}"
        await self.redis.srem(self._entries(self.process_id), entry)
        keys = self._keys(table_id)
        changed = await self.redis.eval(_DISCONNECT, 3, *keys, player_id, now, entry)
        return Mark(False, now) if changed else None

    async def marks(self, table_id: str) -> dict[str, Mark]:
        count_key, at_key, _ = self._keys(table_id)
        counts = await self.redis.hgetall(count_key)
        stamps = await self.redis.hgetall(at_key)
        out: dict[str, Mark] = {}
        for raw_player, raw_at in stamps.items():
            player = _text(raw_player)
            count = int(counts.get(raw_player, 0))
            out[player] = Mark(count > 0, float(raw_at))
        return out

    async def absent_before(self, cutoff: float) -> list[tuple[str, str, float]]:
        found = await self.redis.zrangebyscore(ABSENT, "-inf", f"({cutoff!r}", withscores=True)
        out = []
        for raw, at in cast(list[tuple[bytes, float]], found):
            table_id, _, player_id = _text(raw).partition("|")
            out.append((table_id, player_id, float(at)))
        return out

    async def settle(self, table_id: str, player_id: str, since: float) -> None:
        await self.redis.eval(_SETTLE, 1, ABSENT, f"{table_id}|{player_id}", repr(since))

    async def _alive(self) -> bool:
        """Refresh this process's heartbeat; True if it had been given up for dead."""
        await self.redis.set(PREFIX + "alive:" + self.process_id, b"1", ex=self.ttl)
        added = await self.redis.sadd(PREFIX + "processes", self.process_id)
        return bool(added)

    async def heartbeat(self, local: set[tuple[str, str]]) -> list[tuple[str, str, Mark]]:
        if await self._alive() and local:
            # Another process took this one for dead and gave its entries up: count again.
            log.warning("presence: this process was taken for dead; registering again")
            for table_id, player_id in local:
                await self.connect(table_id, player_id)
        changes: list[tuple[str, str, Mark]] = []
        processes = await self.redis.smembers(PREFIX + "processes")
        for raw in processes:
            process_id = _text(raw)
            if process_id == self.process_id:
                continue
            if await self.redis.exists(PREFIX + "alive:" + process_id):
                continue
            if not await self.redis.srem(PREFIX + "processes", process_id):
                continue  # another process is reaping it
            changes += await self._reap(process_id)
        return changes

    async def _reap(self, process_id: str) -> list[tuple[str, str, Mark]]:
        entries_key = self._entries(process_id)
        entries = await self.redis.smembers(entries_key)
        await self.redis.delete(entries_key)
        now = time.time()
        changes = []
        for raw in entries:
            entry = _text(raw)
            table_id, _, player_id = entry.partition("|")
            keys = self._keys(table_id)
            changed = await self.redis.eval(_DISCONNECT, 3, *keys, player_id, now, entry)
            if changed:
                changes.append((table_id, player_id, Mark(False, now)))
        return changes


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw
