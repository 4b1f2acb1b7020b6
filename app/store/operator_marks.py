"""A counter of the changes operator commands made, bumped in the transaction of each.

A server process alone with its database (no broker) hears nothing of a change another
program made; reading this one row a second tells it when to look for one
(app/services/live/outside_changes.py).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel.ext.asyncio.session import AsyncSession

from app.store.career import COUNTERS

OPERATOR_COUNTER = "operator"


async def mark_operator_change(session: AsyncSession) -> None:
    """Count one more operator change (inside the transaction that makes it)."""
    connection = await session.connection()
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    bump = (
        dialect.insert(COUNTERS)
        .values(name=OPERATOR_COUNTER, value=1)
        .on_conflict_do_update(index_elements=["name"], set_={"value": COUNTERS.c.value + 1})
    )
    await connection.execute(bump)


async def operator_changes(session: AsyncSession) -> int:
    """How many operator changes were ever made (0 before the first)."""
    connection = await session.connection()
    result = await connection.execute(
        select(COUNTERS.c.value).where(COUNTERS.c.name == OPERATOR_COUNTER)
    )
    value = result.scalar_one_or_none()
    return int(value) if value is not None else 0
