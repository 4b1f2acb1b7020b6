"""Leases in the database (app/store/quickplay.py): one process at a time holds a named
turn, renews it before it lapses, and another takes it over, with the next epoch, once it
has lapsed. Times are epoch seconds of the processes' clocks (one machine's, or
synchronised ones)."""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.store.quickplay import LeaseRow

_LEASES = LeaseRow.__table__  # type: ignore[attr-defined]


async def holder_of(session: AsyncSession, name: str) -> tuple[str, float] | None:
    """Who holds the lease and until when (None: nobody ever took it)."""
    row = (
        await session.exec(
            select(LeaseRow.holder, LeaseRow.expires_at).where(LeaseRow.name == name)
        )
    ).first()
    return (row[0], row[1]) if row is not None else None


async def claim(
    session: AsyncSession, name: str, holder: str, now: float, ttl: float
) -> int | None:
    """Renew the lease if `holder` holds it, else take it if it is free or has lapsed:
    the epoch it is held under, or None if another holds it.

    A renewal is a plain UPDATE (PostgreSQL's FOR NO KEY UPDATE), which does not wait for
    the writes fenced under the lease (FOR KEY SHARE, `still_held`); a takeover locks the
    row FOR UPDATE first, so it waits for the old holder's fenced writes to commit, and
    those that come later find the new holder."""
    connection = await session.connection()
    until = now + ttl
    renewed = await connection.execute(
        update(_LEASES)
        .where(_LEASES.c.name == name, _LEASES.c.holder == holder)
        .values(expires_at=until)
    )
    if renewed.rowcount:
        return await _epoch(session, name, holder)
    seen = (await session.exec(select(LeaseRow).where(LeaseRow.name == name))).first()
    if seen is None:
        insert = (postgresql if connection.dialect.name == "postgresql" else sqlite).insert
        await connection.execute(
            insert(_LEASES)
            .values(name=name, holder=holder, epoch=1, expires_at=until)
            .on_conflict_do_nothing(index_elements=["name"])
        )
        return await _epoch(session, name, holder)
    if seen.expires_at >= now:
        return None  # held (the common case for the other processes: one plain read)
    locked = (
        await session.exec(
            select(LeaseRow)
            .where(LeaseRow.name == name)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    ).one()
    if locked.expires_at >= now and locked.holder != holder:
        return None  # renewed or taken meanwhile
    await connection.execute(
        update(_LEASES)
        .where(_LEASES.c.name == name)
        .values(holder=holder, epoch=_LEASES.c.epoch + 1, expires_at=until)
    )
    return await _epoch(session, name, holder)


async def _epoch(session: AsyncSession, name: str, holder: str) -> int | None:
    row = (
        await session.exec(select(LeaseRow.holder, LeaseRow.epoch).where(LeaseRow.name == name))
    ).first()
    return row[1] if row is not None and row[0] == holder else None


async def release(session: AsyncSession, name: str, holder: str) -> None:
    """Give the lease up at once (a process stopping), if `holder` holds it."""
    connection = await session.connection()
    await connection.execute(
        update(_LEASES)
        .where(_LEASES.c.name == name, _LEASES.c.holder == holder)
        .values(expires_at=0.0)
    )


async def still_held(session: AsyncSession, name: str, holder: str, epoch: int) -> bool:
    """Whether `holder` still holds the lease under `epoch`: the fence of every write made
    under it. The row stays locked (FOR KEY SHARE) to the end of the transaction: a
    takeover waits for that write to commit, and a write after a takeover sees it;
    renewals do not wait."""
    row = (
        await session.exec(
            select(LeaseRow.holder, LeaseRow.epoch)
            .where(LeaseRow.name == name)
            .with_for_update(read=True, key_share=True)
        )
    ).first()
    return row is not None and row[0] == holder and row[1] == epoch
