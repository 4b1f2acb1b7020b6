"""Quick play's storage on SQLite and PostgreSQL: one SEARCHING ticket per player, a
ticket ended once, the matchmaking lease (renewed, taken over once lapsed, a fence for
the writes under it) and the seat guard that orders seatings with matches."""

from __future__ import annotations

import asyncio
import time

import pytest
from sqlalchemy.exc import IntegrityError

from app.rules.matchmaking import TicketStatus
from app.store import leases, seat_guard, tickets
from app.store.db import Database

from .databases import migrated_with_players

PLAYERS = ["ann", "bob"]


@pytest.fixture
async def db(empty_url: str) -> Database:
    database = Database(await migrated_with_players(empty_url, PLAYERS))
    yield database  # type: ignore[misc]
    await database.dispose()


async def claim(db: Database, holder: str, now: float, ttl: float = 3.0) -> int | None:
    async with db.write() as session:
        return await leases.claim(session, "matchmaker", holder, now, ttl)


async def test_a_player_holds_one_searching_ticket_and_a_ticket_ends_once(db: Database) -> None:
    async with db.write() as session:
        await tickets.insert_searching(session, "t1", "ann", False, 1.0)
    with pytest.raises(IntegrityError):
        async with db.write() as session:
            await tickets.insert_searching(session, "t2", "ann", True, 2.0)
    async with db.write() as session:
        ended = await tickets.end_searching(session, TicketStatus.CANCELLED, 3.0, player_id="ann")
        again = await tickets.end_searching(session, TicketStatus.EXPIRED, 4.0, ticket_ids=["t1"])
    assert (ended, again) == (1, 0)
    async with db.write() as session:  # ended: a new search may start
        await tickets.insert_searching(session, "t3", "ann", False, 5.0)
        latest = await tickets.latest_of(session, "ann")
    assert latest is not None and latest.id == "t3"


async def test_the_lease_is_renewed_by_its_holder_and_taken_over_once_lapsed(
    db: Database,
) -> None:
    assert await claim(db, "a", 100.0) == 1
    assert await claim(db, "b", 101.0) is None
    assert await claim(db, "a", 102.0) == 1  # renewed until 105
    assert await claim(db, "b", 104.0) is None
    assert await claim(db, "b", 105.5) == 2  # lapsed: the next epoch
    assert await claim(db, "a", 106.0) is None
    async with db.write() as session:
        assert await leases.still_held(session, "matchmaker", "b", 2)
        assert not await leases.still_held(session, "matchmaker", "a", 1)
    async with db.write() as session:
        await leases.release(session, "matchmaker", "b")
    assert await claim(db, "a", 106.5) == 3  # released: free at once


# PostgreSQL only: SQLite has one writer, so every write transaction is ordered anyway.
@pytest.mark.parametrize("empty_url", ["postgres"], indirect=True)
async def test_a_takeover_waits_for_the_fenced_write_in_progress_but_a_renewal_does_not(
    db: Database,
) -> None:
    now = time.time()
    assert await claim(db, "a", now, ttl=1.0) == 1
    inside = asyncio.Event()
    release = asyncio.Event()

    async def fenced_write() -> None:
        async with db.write() as session:
            assert await leases.still_held(session, "matchmaker", "a", 1)
            inside.set()
            await release.wait()

    writer = asyncio.create_task(fenced_write())
    await inside.wait()
    # The holder renews while its write is open: no wait.
    assert await asyncio.wait_for(claim(db, "a", now + 0.5, ttl=1.0), 5) == 1
    # Another process, once the lease lapsed, must wait for that write to commit.
    takeover = asyncio.create_task(claim(db, "b", now + 2.0))
    await asyncio.sleep(0.5)
    assert not takeover.done()
    release.set()
    await writer
    assert await asyncio.wait_for(takeover, 5) == 2


async def test_claiming_players_sees_their_seats_and_holds_off_seating_them(
    db: Database,
) -> None:
    async with db.write() as session:
        assert await seat_guard.claim_players(session, PLAYERS) == set()
    if db.is_sqlite:
        return  # one writer: a seating cannot interleave with a claim at all
    inside = asyncio.Event()
    release = asyncio.Event()

    async def match() -> None:
        async with db.write() as session:
            await seat_guard.claim_players(session, ["ann"])
            inside.set()
            await release.wait()

    async def seating() -> None:
        async with db.write() as session:
            await seat_guard.hold_for_seating(session, ["ann", "bot:east"])

    claimed = asyncio.create_task(match())
    await inside.wait()
    seat = asyncio.create_task(seating())
    await asyncio.sleep(0.5)
    assert not seat.done()  # a seating of ann waits for the match to commit
    async with db.write() as session:  # bob is not claimed: seated at once
        await asyncio.wait_for(seat_guard.hold_for_seating(session, ["bob"]), 5)
    release.set()
    await claimed
    await asyncio.wait_for(seat, 5)
