"""Moderation tables (reports, sanctions, role changes, hidden chat messages) and the
reads every process needs from them: whether a player is banned or muted now, and the
seats banned players still hold.

Nothing here is ever deleted: a resolved report, a lifted or ended sanction and a past
role stay, with who did it and when (`by` null: the operator at the command line)."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Index,
    Integer,
    Text,
    UniqueConstraint,
    func,
    or_,
)
from sqlmodel import Field, SQLModel, col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.store.models import PlayerRow, SeatRow, TableRow, now

BAN = "BAN"
MUTE = "MUTE"
OPEN_TABLES = ("WAITING", "PLAYING")


def _seq_column() -> Column[int]:
    return Column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )


class RoleChangeRow(SQLModel, table=True):
    """A role given to a player (the player's current role is `players.role`)."""

    __tablename__ = "role_changes"

    seq: int | None = Field(default=None, sa_column=_seq_column())
    player_id: str = Field(foreign_key="players.id", max_length=32, index=True)
    role: str = Field(max_length=16)
    previous: str = Field(max_length=16)
    by_id: str | None = Field(default=None, foreign_key="players.id", max_length=32)
    created_at: float = Field(default_factory=now)


class ReportRow(SQLModel, table=True):
    """A report of a player, with a copy of the reported chat message (if any): the chat
    keeps only its last messages, a report keeps what it is about."""

    __tablename__ = "reports"
    __table_args__ = (
        # One report per reporter and message (NULLs differ: reports without a message).
        UniqueConstraint("reporter_id", "message_id", name="uq_report_message"),
        Index("ix_reports_status", "status", "seq"),
        Index("ix_reports_reporter", "reporter_id", "created_at"),
    )

    seq: int | None = Field(default=None, sa_column=_seq_column())
    id: str = Field(max_length=32, unique=True)
    reporter_id: str = Field(foreign_key="players.id", max_length=32)
    reported_id: str = Field(foreign_key="players.id", max_length=32, index=True)
    reason: str = Field(max_length=16)
    note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    message_id: str | None = Field(default=None, max_length=32)
    table_id: str | None = Field(default=None, max_length=32)
    message_channel: str | None = Field(default=None, max_length=16)
    message_text: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    message_sent_at: float | None = None
    created_at: float = Field(default_factory=now)
    status: str = Field(default="OPEN", max_length=16)
    resolved_by: str | None = Field(default=None, foreign_key="players.id", max_length=32)
    resolved_at: float | None = None


class SanctionRow(SQLModel, table=True):
    """A mute (with its end) or a ban (until lifted)."""

    __tablename__ = "sanctions"

    seq: int | None = Field(default=None, sa_column=_seq_column())
    id: str = Field(max_length=32, unique=True)
    player_id: str = Field(foreign_key="players.id", max_length=32, index=True)
    kind: str = Field(max_length=8)
    reason: str = Field(sa_column=Column(Text, nullable=False))
    by_id: str | None = Field(default=None, foreign_key="players.id", max_length=32)
    created_at: float = Field(default_factory=now)
    ends_at: float | None = None
    lifted_at: float | None = None
    lifted_by: str | None = Field(default=None, foreign_key="players.id", max_length=32)


class HiddenMessageRow(SQLModel, table=True):
    """A chat message a moderator hid: it leaves every `chat` answer."""

    __tablename__ = "hidden_chat_messages"

    message_id: str = Field(primary_key=True, max_length=32)
    by_id: str | None = Field(default=None, foreign_key="players.id", max_length=32)
    hidden_at: float = Field(default_factory=now)


async def lock_player(session: AsyncSession, player_id: str) -> PlayerRow | None:
    """The player's row, locked until the transaction ends (PostgreSQL; SQLite's write
    transactions are serial anyway): a ban, a sign-in and a report of one player are
    decided one after the other."""
    result = await session.exec(
        select(PlayerRow).where(PlayerRow.id == player_id).with_for_update()
    )
    return result.first()


def _active_ban() -> tuple[ColumnElement[bool], ...]:
    return (col(SanctionRow.kind) == BAN, col(SanctionRow.lifted_at).is_(None))


async def banned_among(session: AsyncSession, player_ids: Collection[str]) -> set[str]:
    """The players among `player_ids` under a ban in force."""
    if not player_ids:
        return set()
    rows = await session.exec(
        select(SanctionRow.player_id).where(
            col(SanctionRow.player_id).in_(list(player_ids)), *_active_ban()
        )
    )
    return set(rows.all())


async def active_ban(session: AsyncSession, player_id: str) -> SanctionRow | None:
    """The player's ban in force, if any."""
    result = await session.exec(
        select(SanctionRow)
        .where(SanctionRow.player_id == player_id, *_active_ban())
        .order_by(col(SanctionRow.seq))
    )
    return result.first()


async def active_mute(session: AsyncSession, player_id: str, at: float) -> SanctionRow | None:
    """The player's mute in force at `at` that ends last, if any."""
    result = await session.exec(
        select(SanctionRow)
        .where(
            SanctionRow.player_id == player_id,
            col(SanctionRow.kind) == MUTE,
            col(SanctionRow.lifted_at).is_(None),
            col(SanctionRow.ends_at) > at,
        )
        .order_by(col(SanctionRow.ends_at).desc())
    )
    return result.first()


async def bans_after(session: AsyncSession, seq: int) -> list[SanctionRow]:
    """Bans stored after position `seq`, in order."""
    result = await session.exec(
        select(SanctionRow)
        .where(col(SanctionRow.seq) > seq, col(SanctionRow.kind) == BAN)
        .order_by(col(SanctionRow.seq))
    )
    return list(result.all())


async def last_sanction_seq(session: AsyncSession) -> int:
    """The position of the latest sanction (0: none yet)."""
    latest = (await session.exec(select(func.max(SanctionRow.seq)))).one()
    return int(latest or 0)


async def open_tables_of(session: AsyncSession, player_id: str) -> list[str]:
    """The unfinished tables where the player sits, or is away from a seat a bot holds
    for them (their id is in the table's live state)."""
    seated = select(SeatRow.table_id).where(SeatRow.player_id == player_id)
    result = await session.exec(
        select(TableRow.id)
        .where(
            col(TableRow.status).in_(OPEN_TABLES),
            or_(
                col(TableRow.id).in_(seated),
                col(TableRow.live_state).contains(f'"{player_id}"'),
            ),
        )
        .order_by(col(TableRow.created_at))
    )
    return list(result.all())


async def seats_of_banned(session: AsyncSession) -> list[tuple[str, str]]:
    """(table id, player id) of every seat a banned player holds at an unfinished table."""
    result = await session.exec(
        select(SeatRow.table_id, SeatRow.player_id)
        .join(SanctionRow, col(SanctionRow.player_id) == col(SeatRow.player_id))
        .join(TableRow, col(TableRow.id) == col(SeatRow.table_id))
        .where(*_active_ban(), col(TableRow.status).in_(OPEN_TABLES))
        .distinct()
    )
    return [(table_id, player_id) for table_id, player_id in result.all()]
