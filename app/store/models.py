"""SQLModel tables: players, tokens, tables, seats and each game's move log.

Timestamps are epoch seconds (floats): the same on SQLite and PostgreSQL, and
free of naive/aware datetime pitfalls. JSON goes in Text columns for the same
portability.
"""

from __future__ import annotations

import time

from sqlalchemy import BigInteger, Column, Index, Integer, Text, UniqueConstraint, false
from sqlmodel import Field, SQLModel


def now() -> float:
    """The current time as epoch seconds."""
    return time.time()


class PlayerRow(SQLModel, table=True):
    """A signed-up player."""

    __tablename__ = "players"

    id: str = Field(primary_key=True, max_length=32)
    username: str = Field(max_length=20)
    username_key: str = Field(max_length=20, unique=True, index=True)  # lower-cased
    password_hash: str
    created_at: float = Field(default_factory=now)
    # PLAYER, MODERATOR or ADMIN (docs/rules.md, Moderation): only an operator changes it.
    role: str = Field(
        default="PLAYER", max_length=16, sa_column_kwargs={"server_default": "PLAYER"}
    )


class TokenRow(SQLModel, table=True):
    """A bearer token, stored as its SHA-256 so a leaked database holds no usable token."""

    __tablename__ = "tokens"

    token_hash: str = Field(primary_key=True, max_length=64)
    player_id: str = Field(index=True, foreign_key="players.id", max_length=32)
    created_at: float = Field(default_factory=now)
    expires_at: float
    revoked: bool = False


class TableRow(SQLModel, table=True):
    """A table and, once it started, the snapshot of its game.

    `version` counts every change of the table's game (seats included) and is
    the compare-and-swap guard of every write.
    """

    __tablename__ = "tables"

    id: str = Field(primary_key=True, max_length=32)
    name: str | None = Field(default=None, max_length=50)
    host_id: str = Field(foreign_key="players.id", max_length=32)
    visibility: str = Field(max_length=16)
    join_policy: str = Field(max_length=16)
    spectating: bool = True
    status: str = Field(default="WAITING", max_length=16, index=True)
    version: int = 0
    seed: str | None = Field(default=None, max_length=100)  # explicit deal seed, if any
    rated: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    game_state: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # Live tables: the turn clock (0: untimed), the level of a replacing bot, the instant
    # the seat on turn is played for (indexed: each process asks for the due ones), and
    # the away players / consecutive timeouts as JSON.
    turn_seconds: int = 30
    replacement_bot: str = Field(default="BASIC", max_length=16)
    turn_deadline: float | None = Field(default=None, index=True)
    live_state: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: float = Field(default_factory=now)
    updated_at: float = Field(default_factory=now)
    # Rematch: when the game ended, the seats that asked (comma-separated names), the
    # table this one is the rematch of, and the table the rematch opened.
    finished_at: float | None = None
    rematch_requests: str | None = Field(default=None, max_length=40)
    rematch_of: str | None = Field(default=None, max_length=32)
    next_table_id: str | None = Field(default=None, max_length=32)


class SeatRow(SQLModel, table=True):
    """Who sits where. Bots carry `bot:<seat>` ids."""

    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("table_id", "player_id", name="uq_seat_player"),)

    table_id: str = Field(primary_key=True, foreign_key="tables.id", max_length=32)
    seat: str = Field(primary_key=True, max_length=8)
    player_id: str = Field(max_length=32, index=True)
    bot_level: str | None = Field(default=None, max_length=8)  # a bot's BotLevel; else null


class MoveRow(SQLModel, table=True):
    """The append-only move log: one row per accepted move (or seat change).

    `seq` is the table version of the first change the move caused; a move
    that caused several changes (a fourth card) spans `changes` versions.
    """

    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("table_id", "seq", name="uq_move_seq"),)

    id: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    # No index of its own: the unique (table_id, seq) index serves every read by table.
    table_id: str = Field(foreign_key="tables.id", max_length=32)
    seq: int
    changes: int
    move: str = Field(sa_column=Column(Text, nullable=False))
    created_at: float = Field(default_factory=now)


class FriendshipRow(SQLModel, table=True):
    """A friendship, stored once per pair with `player_a < player_b`."""

    __tablename__ = "friendships"

    player_a: str = Field(primary_key=True, foreign_key="players.id", max_length=32)
    player_b: str = Field(primary_key=True, foreign_key="players.id", max_length=32, index=True)
    created_at: float = Field(default_factory=now)


class FriendRequestRow(SQLModel, table=True):
    """A pending friend request (deleted once answered)."""

    __tablename__ = "friend_requests"
    __table_args__ = (UniqueConstraint("from_id", "to_id", name="uq_friend_request_pair"),)

    id: str = Field(primary_key=True, max_length=32)
    from_id: str = Field(foreign_key="players.id", max_length=32, index=True)
    to_id: str = Field(foreign_key="players.id", max_length=32, index=True)
    created_at: float = Field(default_factory=now)


class BlockRow(SQLModel, table=True):
    """`blocker_id` blocked `blocked_id`."""

    __tablename__ = "blocks"

    blocker_id: str = Field(primary_key=True, foreign_key="players.id", max_length=32)
    blocked_id: str = Field(primary_key=True, foreign_key="players.id", max_length=32, index=True)
    created_at: float = Field(default_factory=now)


class InvitationRow(SQLModel, table=True):
    """A pending invitation to sit at a table (deleted once declined, used or void)."""

    __tablename__ = "invitations"
    __table_args__ = (UniqueConstraint("table_id", "to_id", name="uq_invitation_table_player"),)

    id: str = Field(primary_key=True, max_length=32)
    table_id: str = Field(foreign_key="tables.id", max_length=32, index=True)
    from_id: str = Field(foreign_key="players.id", max_length=32)
    to_id: str = Field(foreign_key="players.id", max_length=32, index=True)
    created_at: float = Field(default_factory=now)


class TableLinkRow(SQLModel, table=True):
    """The current join or spectator link code of a table, stored as its SHA-256."""

    __tablename__ = "table_links"

    table_id: str = Field(primary_key=True, foreign_key="tables.id", max_length=32)
    kind: str = Field(primary_key=True, max_length=10)  # JOIN or SPECTATE
    code_hash: str = Field(max_length=64, index=True)
    created_at: float = Field(default_factory=now)


class LinkGrantRow(SQLModel, table=True):
    """A player who presented a link's code; valid while the link still has that code."""

    __tablename__ = "link_grants"

    table_id: str = Field(primary_key=True, foreign_key="tables.id", max_length=32)
    player_id: str = Field(primary_key=True, foreign_key="players.id", max_length=32, index=True)
    kind: str = Field(primary_key=True, max_length=10)
    code_hash: str = Field(max_length=64)
    created_at: float = Field(default_factory=now)


class SpectatorRow(SQLModel, table=True):
    """A spectator of a table: a player who watched it (`watchTable`), or, when `kept`,
    one who watched the table it is the rematch of (or kept that access there) and so
    keeps a spectator's access to this one: they see and watch it as a spectator link's
    holder does (docs/rules.md, Rematch), whatever its visibility and host."""

    __tablename__ = "spectators"

    table_id: str = Field(primary_key=True, foreign_key="tables.id", max_length=32)
    player_id: str = Field(primary_key=True, foreign_key="players.id", max_length=32, index=True)
    kept: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    created_at: float = Field(default_factory=now)


class ChatMessageRow(SQLModel, table=True):
    """A table chat message; only the last 100 of each table's channel are kept."""

    __tablename__ = "chat_messages"
    __table_args__ = (Index("ix_chat_messages_channel", "table_id", "channel", "seq"),)

    seq: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    id: str = Field(max_length=32, unique=True)
    table_id: str = Field(foreign_key="tables.id", max_length=32)
    channel: str = Field(max_length=16)
    player_id: str = Field(foreign_key="players.id", max_length=32)
    text: str = Field(sa_column=Column(Text, nullable=False))
    sent_at: float = Field(default_factory=now)
