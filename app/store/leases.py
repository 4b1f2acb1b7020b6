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


async def claim(
    session: AsyncSession, name: str, holder: str, now: float, ttl: float
) -> int | None:
    """Renew the lease if `holder` holds it, else take it if it is free or has lapsed:
    the epoch it is held under, or None if another holds it."""
    connection = await session.connection()
    until = now + ttl
    renewed = await connection.execute(
        update(_LEASES)
        .where(_LEASES.c.name == name, _LEASES.c.holder == holder)
        .values(expires_at=until)
    )
    if not renewed.rowcount:
        taken = await connection.execute(
            update(_LEASES)
            .where(_LEASES.c.name == name, _LEASES.c.expires_at < now)
            .values(holder=holder, epoch=_LEASES.c.epoch + 1, expires_at=until)
        )
        if not taken.rowcount:
            insert = (postgresql if connection.dialect.name == "postgresql" else sqlite).insert
            await connection.execute(
                insert(_LEASES)
                .values(name=name, holder=holder, epoch=1, expires_at=until)
                .on_conflict_do_nothing(index_elements=["name"])
            )
    row = (await session.exec(select(LeaseRow).where(LeaseRow.name == name))).first()
    return row.epoch if row is not None and row.holder == holder else None


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
    under it. The row stays locked (shared) to the end of the transaction, so a takeover
    waits for that write to commit, and a write after a takeover sees it."""
    row = (
        await session.exec(select(LeaseRow).where(LeaseRow.name == name).with_for_update(read=True))
    ).first()
    return row is not None and row.holder == holder and row.epoch == epoch
