"""Quick play's tables: tickets and the matchmaking lease.

A ticket is SEARCHING until it ends MATCHED (with its table), CANCELLED or EXPIRED. A
player holds at most one SEARCHING ticket (a partial unique index), so two racing
starts make one. `announced` is False from the moment a ticket ends until the change
was published: whoever finds it so later (the matchmaker) publishes it again, so a
process that dies between the commit and the publish loses no update.

The lease names the one process whose turn it is to match: it holds it while it renews
it before `expires_at`; another process takes it over once it lapsed, with the next
`epoch`. Every match checks, in its own transaction, that its process still holds the
lease at the epoch it matched under (a fence), so a matchmaker that stalled past its
lease can commit nothing once another took over.
"""

from __future__ import annotations

from sqlalchemy import Index, text, true
from sqlmodel import Field, SQLModel

SEARCHING_ONLY = text("status = 'SEARCHING'")
UNANNOUNCED_ONLY = text("NOT announced")


class TicketRow(SQLModel, table=True):
    """A quick-play ticket."""

    __tablename__ = "quickplay_tickets"
    __table_args__ = (
        # One SEARCHING ticket per player; it also serves every look-up of the searching
        # tickets (the wave, the count) as a partial index.
        Index(
            "uq_quickplay_tickets_searching",
            "player_id",
            unique=True,
            sqlite_where=SEARCHING_ONLY,
            postgresql_where=SEARCHING_ONLY,
        ),
        Index("ix_quickplay_tickets_player", "player_id", "started_at"),
        Index(
            "ix_quickplay_tickets_unannounced",
            "ended_at",
            sqlite_where=UNANNOUNCED_ONLY,
            postgresql_where=UNANNOUNCED_ONLY,
        ),
    )

    id: str = Field(primary_key=True, max_length=32)
    player_id: str = Field(foreign_key="players.id", max_length=32)
    rated: bool
    status: str = Field(max_length=10)
    started_at: float
    ended_at: float | None = None
    table_id: str | None = Field(default=None, foreign_key="tables.id", max_length=32)
    announced: bool = Field(default=True, sa_column_kwargs={"server_default": true()})


class LeaseRow(SQLModel, table=True):
    """Who holds a lease (`matchmaker`: the matchmaking turn), under which epoch, until
    when (epoch seconds)."""

    __tablename__ = "quickplay_lease"

    name: str = Field(primary_key=True, max_length=16)
    holder: str = Field(max_length=32)
    epoch: int
    expires_at: float
