"""The one path by which a table changes: load, decide, compare-and-swap, log, publish.

Every change runs in one write transaction: the table row is updated only if
its version is still the one the decision was made on, the move log gets its
rows (unique per table and sequence number), and only after the commit are
the events published. Two concurrent moves on one table can never both apply.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from app.broker.base import Broker
from app.rules.errors import ErrorCode, RuleError
from app.rules.levels import DEFAULT_BOT_LEVEL, BotLevel
from app.rules.movelog import LogEntry
from app.rules.seats import SEATS, Seat
from app.rules.serialize import game_from_json, game_to_json
from app.services.tables.change import (
    Change,
)
from app.services.tables.deadlines import stamp_clocks
from app.services.tables.events import LobbyEvent
from app.services.tables.live_state import live_from_json, live_to_json
from app.services.tables.snapshot import (
    JoinPolicy,
    LobbyMessage,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)
from app.store import career, seat_guard
from app.store import table_rows as repo
from app.store.career import GameEnd
from app.store.db import Database
from app.store.models import SeatRow, TableRow

log = logging.getLogger(__name__)

LOBBY_CHANNEL = "lobby"
MAX_ATTEMPTS = 5


def game_channel(table_id: str) -> str:
    """The broker channel of one table's game updates."""
    return f"game:{table_id}"


Decision = Callable[[TableSnapshot], Change]
# Called after every committed (and published) change with the change and the table after
# it: the one place where the server reacts to a change (wake bots, arm clocks, ...).
# Reactors run synchronously and must not block; they start tasks for any real work.
Reactor = Callable[[Change, TableSnapshot], None]


class Conflict(Exception):
    """The table moved on between the read and the compare-and-swap, or the decision was
    made on a stale cached snapshot (then it is simply made again on a fresh one)."""

    def __init__(self, stale_cache: bool = False) -> None:
        super().__init__()
        self.stale_cache = stale_cache


class Ledger:
    """Reads table snapshots and applies changes to them."""

    def __init__(self, db: Database, broker: Broker[Any]) -> None:
        self.db = db
        self.broker = broker
        self._cache: dict[str, TableSnapshot] = {}
        self.reactors: list[Reactor] = []
        self.clock_scale = 1.0  # a turn lasts turn_seconds x this (tests shorten it)
        # Describes the careers update to write with the change that finishes a game.
        self.on_finish: Callable[[TableSnapshot, Change], Awaitable[GameEnd | None]] | None = None
        # Prepares a rated game's end ahead of its final move (reads its players'
        # ratings): run in the background when a rated table's game is loaded or changed
        # here with a human not seen at it before (`_prepare`).
        self.prepare_finish: Callable[[TableSnapshot], Awaitable[None]] | None = None
        self._prepared: dict[str, frozenset[str]] = {}  # table id: the humans prepared for
        self._preparing: set[asyncio.Task[None]] = set()

    def react(self, reactor: Reactor) -> None:
        """Call `reactor` after every change this process commits."""
        self.reactors.append(reactor)

    async def get(self, table_id: str) -> TableSnapshot | None:
        """The table as it stands now (from the cache when it is current)."""
        async with self.db.read() as session:
            version = await repo.table_version(session, table_id)
            if version is None:
                return None
            cached = self.cached(table_id, version)
            if cached is not None:
                return cached
            loaded = await repo.load_table(session, table_id)
        if loaded is None:
            return None
        snapshot = snapshot_from_rows(*loaded)
        self._remember(snapshot)
        self._prepare(snapshot)
        return snapshot

    async def open_tables(self) -> list[TableSnapshot]:
        """Every table that is waiting or playing."""
        async with self.db.read() as session:
            rows = await repo.load_tables(
                session, [TableStatus.WAITING.value, TableStatus.PLAYING.value]
            )
        snapshots = []
        for table, seats, names in rows:
            cached = self.cached(table.id, table.version)
            if cached is not None:
                snapshots.append(cached)
            else:
                snapshot = snapshot_from_rows(table, seats, names)
                self._remember(snapshot)
                snapshots.append(snapshot)
        return snapshots

    async def moves(self, table_id: str) -> list[tuple[int, int, LogEntry]]:
        """The move log of a table: (seq, changes, entry) rows in order."""
        async with self.db.read() as session:
            rows = await repo.moves_of(session, table_id)
        return [(r.seq, r.changes, json.loads(r.move)) for r in rows]

    async def create(self, snapshot: TableSnapshot) -> None:
        """Store a new table (with its host seated) and announce it in the lobby."""
        async with self.db.write() as session:
            await insert_table(session, snapshot)
        await self.announce(snapshot)

    async def announce(self, snapshot: TableSnapshot) -> None:
        """Remember a table just stored and tell the lobby about it (best effort)."""
        self._remember(snapshot)
        try:
            await self.broker.publish(
                LOBBY_CHANNEL, LobbyMessage(LobbyEvent.TABLE_CREATED, snapshot)
            )
        except Exception:
            log.warning("could not announce table %s", snapshot.id, exc_info=True)

    async def change(
        self, table_id: str, decide: Decision, expected_version: int | None = None
    ) -> tuple[Change, TableSnapshot]:
        """Apply `decide` to the current table atomically; returns the change and the table
        after it. A RuleError from `decide` changes nothing. With `expected_version`, a table
        that moved on answers CONFLICT; without, a lost race is retried."""
        for _attempt in range(MAX_ATTEMPTS):
            try:
                change, after = await self._attempt(table_id, decide, expected_version)
            except Conflict as conflict:
                if expected_version is not None and not conflict.stale_cache:
                    raise _conflict() from None
                continue
            if change.steps:
                await self._publish(change, after)
                self._react(change, after)
            return change, after
        raise _conflict()

    def opened(self, table: TableSnapshot) -> None:
        """React to a table stored outside `change` (a rematch table, its game started)."""
        self._react(Change(), table)

    def _react(self, change: Change, after: TableSnapshot) -> None:
        for reactor in self.reactors:
            try:
                reactor(change, after)
            except Exception:  # one failing reaction must not fail the committed change
                log.exception("a reaction to a change of table %s failed", after.id)

    async def _attempt(
        self, table_id: str, decide: Decision, expected_version: int | None
    ) -> tuple[Change, TableSnapshot]:
        async with self.db.writing():
            before, verified = await self._load_for_write(table_id)
            try:
                if expected_version is not None and before.version != expected_version:
                    raise _conflict()
                change = decide(before)
            except RuleError:
                await self._verify(before, verified)
                raise
            if not change.steps:
                await self._verify(before, verified)
                return change, before
            stamp_clocks(before, change, time.time(), self.clock_scale)
            after = change.steps[-1].table
            finish = None
            if self.on_finish is not None and _finishes(before, after):
                finish = await self.on_finish(after, change)
            if not await self._store(before, after, change, finish):
                self.forget(table_id)
                raise Conflict(stale_cache=not verified)
        self._remember(after)
        self._prepare(after)
        return change, after

    async def _store(
        self,
        before: TableSnapshot,
        after: TableSnapshot,
        change: Change,
        finish: GameEnd | None,
    ) -> bool:
        """Write `change` if the table is still at `before`'s version (False if not):
        the table row, its seats, the move log, the careers of a game it finishes and
        any further effects, atomically (a game move in one trip of the move writer)."""
        values = _row_values(after)
        seat_changes = {
            s.name: (o.player_id if o is not None else None)
            for s, o in zip(SEATS, after.occupants, strict=True)
            if o != before.occupants[s]
        }
        writer = self.db.move_writer
        if writer is not None and not seat_changes and not change.effects:
            rows = repo.move_rows(after.id, change.log)
            changed = _changed_columns(before, values)
            return await writer.commit(after.id, before.version, values, rows, finish, changed)
        async with self.db.transaction() as session:
            # The ratings a game end changes are locked before its table row (the order
            # of every game end's locks, see `career.lock_skills`).
            skills = await career.lock_skills(session, finish.rated_players) if finish else {}
            # A human taking a seat is ordered with quick play's matches (seat_guard).
            await seat_guard.hold_for_seating(
                session, [p for p in seat_changes.values() if p is not None]
            )
            if not await repo.compare_and_set(session, after.id, before.version, values):
                return False
            if seat_changes:
                levels = {
                    s.name: _level_value(after.occupants[s])
                    for s in SEATS
                    if s.name in seat_changes
                }
                await repo.replace_seats(session, after.id, seat_changes, levels)
            await repo.append_moves(session, after.id, change.log)
            if finish is not None:
                await career.record_game(session, finish, skills)
            for effect in change.effects:
                await effect(session)
        return True

    def _prepare(self, table: TableSnapshot) -> None:
        """Start preparing the end of a rated table's game if it has a human playing it
        whom no preparation here covers yet (its start, a human taking a seat, the table
        loaded in this process)."""
        if self.prepare_finish is None or not table.rated:
            return
        if table.status is not TableStatus.PLAYING:
            self._prepared.pop(table.id, None)
            return
        humans = frozenset(o.player_id for o in table.occupants if o is not None and not o.is_bot)
        done = self._prepared.get(table.id, frozenset())
        if humans <= done:
            return
        self._prepared[table.id] = done | humans
        task = asyncio.create_task(self._run_preparation(self.prepare_finish, table))
        self._preparing.add(task)
        task.add_done_callback(self._preparing.discard)

    async def _run_preparation(
        self, prepare: Callable[[TableSnapshot], Awaitable[None]], table: TableSnapshot
    ) -> None:
        try:
            await prepare(table)
        except Exception:  # only a speed-up: the game's end reads what it needs itself
            log.warning("could not prepare the end of table %s", table.id, exc_info=True)
            self._prepared.pop(table.id, None)  # the next change here tries again

    async def settle(self) -> None:
        """Wait for the preparations under way (tests and benchmarks measure after)."""
        while self._preparing:
            await asyncio.gather(*self._preparing, return_exceptions=True)

    async def close(self) -> None:
        """Stop the preparations under way (before the database is closed)."""
        for task in self._preparing:
            task.cancel()
        await self.settle()

    async def _load_for_write(self, table_id: str) -> tuple[TableSnapshot, bool]:
        """The table to decide on, and whether it was read from the database just now.

        A cached snapshot is used without re-reading its version: an accepted change is
        checked by the compare-and-swap anyway, and a refusal or no-op decided on it is
        verified afterwards (`_verify`). One process alone never finds it stale."""
        cached = self._cache.get(table_id)
        if cached is not None:
            return cached, False
        async with self.db.read() as session:
            loaded = await repo.load_table(session, table_id)
        if loaded is None:
            raise RuleError(ErrorCode.NOT_FOUND, "no such table")
        return snapshot_from_rows(*loaded), True

    async def _verify(self, table: TableSnapshot, verified: bool) -> None:
        """Make sure a decision that wrote nothing was made on the current table."""
        if verified or await self._current_version(table.id) == table.version:
            return
        self.forget(table.id)
        raise Conflict(stale_cache=True)

    async def _current_version(self, table_id: str) -> int | None:
        if self.db.move_writer is not None:
            return await self.db.move_writer.version(table_id)
        async with self.db.read() as session:
            return await repo.table_version(session, table_id)

    async def _publish(self, change: Change, after: TableSnapshot) -> None:
        # The change is committed: a broker failure must not fail the request. Subscribers
        # catch up from the database when the broker is back (they get RESYNC).
        channel = game_channel(after.id)
        committed_at = time.time()
        try:
            for message in change.steps:
                message.committed_at = committed_at
            # All the steps of a change together (a card, the trick, the hand...), posted:
            # the answer to the move does not wait for them to be out.
            await self.broker.post(channel, change.steps)
            if change.lobby_event is not None:
                await self.broker.post(LOBBY_CHANNEL, [LobbyMessage(change.lobby_event, after)])
        except Exception:
            log.warning("could not publish the changes of table %s", after.id, exc_info=True)

    def _remember(self, snapshot: TableSnapshot) -> None:
        if snapshot.status.open:
            self._cache[snapshot.id] = snapshot
        else:
            self._cache.pop(snapshot.id, None)
            self._prepared.pop(snapshot.id, None)

    def observe(self, table: TableSnapshot) -> None:
        """Learn a newer state of a table from a broker message (another process changed
        it), so the next decision here starts from it instead of a stale cache."""
        cached = self._cache.get(table.id)
        if cached is None or table.version > cached.version:
            self._remember(table)

    def cached(self, table_id: str, version: int) -> TableSnapshot | None:
        """The cached table, if it is at `version`."""
        snapshot = self._cache.get(table_id)
        return snapshot if snapshot is not None and snapshot.version == version else None

    def cached_versions(self) -> dict[str, int]:
        """The version of every table in the cache (the open tables this process holds)."""
        return {table_id: table.version for table_id, table in self._cache.items()}

    def cached_any(self, table_id: str) -> TableSnapshot | None:
        """The cached table at whatever version (a hint; decisions re-check)."""
        return self._cache.get(table_id)

    def forget(self, table_id: str) -> None:
        """Drop a cached table (tests use it to force a reload from the database)."""
        self._cache.pop(table_id, None)


def _level_value(occupant: Occupant | None) -> str | None:
    """The stored level of a seat: a bot's level, None for a human or an empty seat."""
    if occupant is None or occupant.bot_level is None:
        return None
    return occupant.bot_level.value


def _finishes(before: TableSnapshot, after: TableSnapshot) -> bool:
    return after.status is TableStatus.FINISHED and before.status is not TableStatus.FINISHED


async def insert_table(session: AsyncSession, snapshot: TableSnapshot) -> None:
    """Insert a new table's row and its occupied seats (inside the caller's transaction)."""
    await seat_guard.hold_for_seating(
        session, [o.player_id for o in snapshot.occupants if o is not None]
    )
    session.add(
        TableRow(
            id=snapshot.id,
            created_at=snapshot.created_at,
            seed=str(snapshot.deal_seed) if snapshot.deal_seed is not None else None,
            rematch_of=snapshot.rematch_of,
            rated=snapshot.rated,
            **_row_values(snapshot),
        )
    )
    await session.flush()
    for seat in SEATS:
        occupant = snapshot.occupants[seat]
        if occupant is not None:
            session.add(
                SeatRow(
                    table_id=snapshot.id,
                    seat=seat.name,
                    player_id=occupant.player_id,
                    bot_level=_level_value(occupant),
                )
            )
    await session.flush()


def _conflict() -> RuleError:
    return RuleError(ErrorCode.CONFLICT, "the game moved on: reload and try again")


def _row_values(table: TableSnapshot) -> dict[str, Any]:
    return {
        "version": table.version,
        "game_state": (game_to_json(table.game) if table.game is not None else None),
        "live_state": live_to_json(table),
        **_plain_values(table),
    }


def _plain_values(table: TableSnapshot) -> dict[str, Any]:
    """The row values a game change seldom changes, cheap to compare."""
    return {
        "name": table.name,
        "host_id": table.host_id,
        # `_value_`, not `.value` (a property: two Python calls each, on every move).
        "visibility": table.visibility._value_,
        "join_policy": table.join_policy._value_,
        "spectating": table.spectating,
        "status": table.status._value_,
        "turn_seconds": table.turn_seconds,
        "replacement_bot": table.replacement_bot._value_,
        "turn_deadline": table.turn_deadline,
        "finished_at": table.finished_at,
        "rematch_requests": ",".join(s.name for s in table.rematch_requests) or None,
        "next_table_id": table.next_table_id,
    }


def _changed_columns(before: TableSnapshot, values: dict[str, Any]) -> frozenset[str]:
    """The plain columns whose row `values` (a change's, after it) differ from `before`'s.
    The row at `before`'s version holds `before`'s values (each write sets at least every
    column that changed, and the values read back equal), so the move writer may leave
    the others: in SQLite an unchanged column in the SET list still costs its index
    update or foreign-key lookup."""
    was = _plain_values(before)
    return frozenset(name for name, value in was.items() if values[name] != value)


def snapshot_from_rows(
    table: TableRow, seats: list[SeatRow], names: dict[str, str]
) -> TableSnapshot:
    """A snapshot from stored rows."""
    occupants: list[Occupant | None] = [None] * 4
    for row in seats:
        seat = next(s for s in SEATS if s.name == row.seat)
        if row.player_id.startswith("bot:"):
            level = BotLevel(row.bot_level) if row.bot_level else DEFAULT_BOT_LEVEL
            occupants[seat] = Occupant.bot(seat, level)
        else:
            occupants[seat] = Occupant(row.player_id, names.get(row.player_id))
    game = game_from_json(table.game_state) if table.game_state else None
    live = live_from_json(table.live_state)
    return TableSnapshot(
        id=table.id,
        name=table.name,
        host_id=table.host_id,
        host_name=names.get(table.host_id, "?"),
        visibility=Visibility(table.visibility),
        join_policy=JoinPolicy(table.join_policy),
        spectating=table.spectating,
        status=TableStatus(table.status),
        version=table.version,
        occupants=tuple(occupants),
        game=game,
        created_at=table.created_at,
        deal_seed=int(table.seed) if table.seed is not None else None,
        turn_seconds=table.turn_seconds,
        replacement_bot=BotLevel(table.replacement_bot),
        turn_deadline=table.turn_deadline,
        away=live.away,
        timeouts=live.timeouts,
        timed_out=live.timed_out,
        rated=table.rated,
        finished_at=table.finished_at,
        rematch_requests=tuple(Seat[s] for s in (table.rematch_requests or "").split(",") if s),
        rematch_of=table.rematch_of,
        next_table_id=table.next_table_id,
    )
