"""Table chat: sending, history and the live stream, each filtered for its reader.

Who reads and writes which channel (docs/rules.md, Table chat): PLAYERS is written by seated
players and read by seated players and spectators; SPECTATORS is written and read by
spectators, and read by seated players only once the game is over (before that they get
an empty history and no live messages, so nobody can tell a player about cards). Anyone
else gets NOT_FOUND or FORBIDDEN, as for the game. A reader never receives a message
from a player they blocked or who blocked them, in history or live. Text is kept and
served as written (trimmed): clients escape it; the server never interprets it.
"""

from __future__ import annotations

import logging
import unicodedata
import uuid
from collections import deque
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.broker.base import RESYNC, Broker
from app.rules.errors import ErrorCode, RuleError
from app.services.accounts.auth import Player
from app.services.chat.model import ChatChannel, ChatMessage, chat_channel
from app.services.chat.rate_limit import ChatLimiter
from app.services.lobby.service import TableService, relation
from app.services.social.model import Notice, NoticeKind, Viewer, player_channel
from app.services.social.service import SocialService
from app.services.tables.access import can_watch
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import TableSnapshot, now_ts
from app.store import table_rows as repo
from app.store.db import Database
from app.store.models import ChatMessageRow, PlayerRow
from app.store.moderation import HiddenMessageRow, active_mute

log = logging.getLogger(__name__)

MAX_TEXT = 300
KEPT_PER_CHANNEL = 100
MAX_LAST = 100
# A text longer than this is refused before it is even looked at character by character.
_MAX_RAW = 4 * MAX_TEXT


def clean_text(text: object) -> str:
    """The text of a message, trimmed: 1..300 characters, no control characters (newline
    and tab included); BAD_USER_INPUT otherwise."""
    if not isinstance(text, str) or len(text) > _MAX_RAW:
        raise RuleError(ErrorCode.BAD_USER_INPUT, f"a message is at most {MAX_TEXT} characters")
    if any(unicodedata.category(c) == "Cc" for c in text):
        raise RuleError(
            ErrorCode.BAD_USER_INPUT, "a message may not hold control characters (newline, tab)"
        )
    trimmed = text.strip()
    if not trimmed:
        raise RuleError(ErrorCode.BAD_USER_INPUT, "a message needs some text")
    if len(trimmed) > MAX_TEXT:
        raise RuleError(ErrorCode.BAD_USER_INPUT, f"a message is at most {MAX_TEXT} characters")
    return trimmed


def game_over(table: TableSnapshot) -> bool:
    """Whether the table's game is over (finished, or closed unfinished): no card left to
    tell anyone about."""
    return not table.status.open


def may_read(table: TableSnapshot, seated: bool, channel: ChatChannel) -> bool:
    """Whether a reader (seated or a spectator) reads `channel` at `table` now."""
    return channel is ChatChannel.PLAYERS or not seated or game_over(table)


def plays_at(table: TableSnapshot, player_id: str) -> bool:
    """Whether the player counts as seated for chat: in a seat, or away from one that a bot
    holds for them (they may reclaim it, so spectators' talk must not reach them either)."""
    return table.seat_of(player_id) is not None or table.away_seat(player_id) is not None


def may_write(seated: bool, channel: ChatChannel) -> bool:
    """Seated players write PLAYERS, spectators write SPECTATORS."""
    return seated is (channel is ChatChannel.PLAYERS)


class ChatService:
    """Stores, serves and streams table chat."""

    def __init__(
        self,
        db: Database,
        broker: Broker[Any],
        ledger: Ledger,
        tables: TableService,
        social: SocialService,
        limiter: ChatLimiter,
    ) -> None:
        self.db = db
        self.broker = broker
        self.ledger = ledger
        self.tables = tables
        self.social = social
        self.limiter = limiter

    def _require_reader(self, viewer: Viewer, table: TableSnapshot | None) -> TableSnapshot:
        """The table, if the viewer may see its game: a seated player or an allowed
        spectator (NOT_FOUND when the table is not visible, else FORBIDDEN)."""
        table = self.tables.visible(viewer, table)
        rel = relation(viewer, table)
        if not rel.seated and not can_watch(table, rel):
            raise RuleError(ErrorCode.FORBIDDEN, "spectating is off at this table")
        return table

    async def send(
        self, viewer: Viewer, table_id: str, channel: ChatChannel, text: str
    ) -> ChatMessage:
        """Post a message; it counts against the sender's limit only once accepted."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        table = self._require_reader(viewer, table)
        seated = plays_at(table, viewer.id)
        if not may_write(seated, channel):
            who = "seated players" if channel is ChatChannel.PLAYERS else "spectators"
            raise RuleError(ErrorCode.FORBIDDEN, f"only {who} write to the {channel} channel")
        await self._require_unmuted(viewer.id)
        cleaned = clean_text(text)
        ticket = await self.limiter.reserve(viewer.id)
        message = ChatMessage(
            id=uuid.uuid4().hex,
            table_id=table.id,
            channel=channel,
            sender=viewer.player,
            text=cleaned,
            sent_at=now_ts(),
        )
        try:
            async with self.db.write() as session:
                await _store(session, message)
        except BaseException:
            await self.limiter.release(viewer.id, ticket)
            raise
        try:
            await self.broker.publish(chat_channel(table.id), message)
        except Exception:  # stored: readers see it in the history
            log.warning("could not publish a chat message of table %s", table.id, exc_info=True)
        return message

    async def _require_unmuted(self, player_id: str) -> None:
        """FORBIDDEN while a mute holds the player (docs/rules.md, Moderation)."""
        async with self.db.read() as session:
            mute = await active_mute(session, player_id, now_ts())
        if mute is not None and mute.ends_at is not None:
            moment = datetime.fromtimestamp(mute.ends_at, UTC).isoformat(timespec="seconds")
            until = moment.replace("+00:00", "Z")
            raise RuleError(ErrorCode.FORBIDDEN, f"you are muted until {until} ({mute.reason})")

    async def readable(self, viewer: Viewer, message_id: str) -> ChatMessage:
        """A stored message the viewer may read at its table now (blocks aside: one who
        blocked its sender had read it); NOT_FOUND otherwise, as for an unknown one."""
        missing = RuleError(ErrorCode.NOT_FOUND, "no such message")
        message = await stored_message(self.db, message_id)
        if message is None:
            raise missing
        try:
            table, viewer = await self.tables.get_visible(viewer, message.table_id)
            table = self._require_reader(viewer, table)
        except RuleError:
            raise missing from None
        if not may_read(table, plays_at(table, viewer.id), message.channel):
            raise missing
        return message

    async def history(
        self, viewer: Viewer, table_id: str, channel: ChatChannel, last: int
    ) -> list[ChatMessage]:
        """The last `last` (1..100) messages of `channel` the viewer may read, oldest first."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        table = self._require_reader(viewer, table)
        if not isinstance(last, int) or not 1 <= last <= MAX_LAST:
            raise RuleError(ErrorCode.BAD_USER_INPUT, f"last is 1..{MAX_LAST}")
        if not may_read(table, plays_at(table, viewer.id), channel):
            return []
        stored = await self._stored(table.id, (channel,))
        readable = [m for m in stored if m.sender.id not in viewer.blocks]
        return readable[-last:]

    async def messages(self, viewer: Viewer, table_id: str) -> AsyncIterator[ChatMessage]:
        """New messages of both channels that the subscriber may read, as they are sent.

        The stream ends (FORBIDDEN or NOT_FOUND) if the subscriber loses sight of the game;
        blocks and seating are re-read when they change."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        self._require_reader(viewer, table)
        channels = (chat_channel(table_id), player_channel(viewer.id))
        with await self.broker.subscribe(*channels) as subscription:
            # Read once subscribed: a message stored by now was either published before
            # the stream could hear it (not new to it) or is heard live. A catch-up after
            # a RESYNC looks only past this mark, by the store's order, not by the clock:
            # what was sent before the stream began never reaches it that way, late and
            # after newer messages, and the senders' clocks need not agree.
            floor = await self._last_seq(table_id)
            table = self._require_reader(viewer, await self.ledger.get(table_id))
            # What the stream has passed on (or skipped), per channel: as many as the
            # store keeps of each, so a catch-up never hands a message out twice.
            seen = {c: deque[str](maxlen=KEPT_PER_CHANNEL) for c in ChatChannel}
            while True:
                item = await subscription.get()
                if isinstance(item, Notice):
                    if item.kind is NoticeKind.SOCIAL_CHANGED:
                        viewer = await self.social.viewer(viewer.player)
                        table = self._require_reader(viewer, await self.ledger.get(table_id))
                    continue
                if item is RESYNC:
                    # Messages may have been lost (broker reconnect, overflow): the stored
                    # ones since the stream began that it has not passed on are sent now,
                    # in the order they were stored.
                    subscription.drain()
                    pending = [
                        m
                        for m in await self._stored(table_id, tuple(ChatChannel), after=floor)
                        if m.id not in seen[m.channel]
                    ]
                elif isinstance(item, ChatMessage) and item.id not in seen[item.channel]:
                    pending = [item]
                else:
                    continue
                table = self._require_reader(viewer, await self._current(table))
                seated = plays_at(table, viewer.id)
                for message in pending:
                    seen[message.channel].append(message.id)
                    if message.sender.id in viewer.blocks:
                        continue
                    if may_read(table, seated, message.channel):
                        yield message

    async def _last_seq(self, table_id: str) -> int:
        """The store's position of the table's latest message (0: none yet)."""
        async with self.db.read() as session:
            latest = (
                await session.exec(
                    select(func.max(ChatMessageRow.seq)).where(ChatMessageRow.table_id == table_id)
                )
            ).one()
        return int(latest or 0)

    async def _current(self, table: TableSnapshot) -> TableSnapshot | None:
        """The table now: `table` itself while its version has not moved (one small read)."""
        async with self.db.read() as session:
            version = await repo.table_version(session, table.id)
        if version == table.version:
            return table
        return await self.ledger.get(table.id)

    async def _stored(
        self, table_id: str, channels: tuple[ChatChannel, ...], after: int = 0
    ) -> list[ChatMessage]:
        """The kept messages of a table's channels (stored past `after`), oldest first,
        but those a moderator hid."""
        async with self.db.read() as session:
            rows = (
                await session.exec(
                    select(ChatMessageRow, PlayerRow.username)
                    .join(PlayerRow, col(PlayerRow.id) == col(ChatMessageRow.player_id))
                    .where(
                        ChatMessageRow.table_id == table_id,
                        col(ChatMessageRow.channel).in_([c.value for c in channels]),
                        col(ChatMessageRow.seq) > after,
                        col(ChatMessageRow.id).not_in(select(HiddenMessageRow.message_id)),
                    )
                    .order_by(col(ChatMessageRow.seq))
                )
            ).all()
        return [message_of(row, username) for row, username in rows]


def message_of(row: ChatMessageRow, username: str) -> ChatMessage:
    """The message a stored row holds."""
    return ChatMessage(
        id=row.id,
        table_id=row.table_id,
        channel=ChatChannel(row.channel),
        sender=Player(row.player_id, username),
        text=row.text,
        sent_at=row.sent_at,
    )


async def stored_message(db: Database, message_id: str) -> ChatMessage | None:
    """A kept message (hidden or not), by id."""
    if not isinstance(message_id, str) or not 0 < len(message_id) <= 32:
        return None
    async with db.read() as session:
        found = (
            await session.exec(
                select(ChatMessageRow, PlayerRow.username)
                .join(PlayerRow, col(PlayerRow.id) == col(ChatMessageRow.player_id))
                .where(ChatMessageRow.id == message_id)
            )
        ).first()
    return message_of(*found) if found is not None else None


async def _store(session: AsyncSession, message: ChatMessage) -> None:
    """Insert a message and drop what falls beyond the last 100 of its channel."""
    session.add(
        ChatMessageRow(
            id=message.id,
            table_id=message.table_id,
            channel=message.channel.value,
            player_id=message.sender.id,
            text=message.text,
            sent_at=message.sent_at,
        )
    )
    await session.flush()
    same_channel = (
        col(ChatMessageRow.table_id) == message.table_id,
        col(ChatMessageRow.channel) == message.channel.value,
    )
    cutoff = (
        select(ChatMessageRow.seq)
        .where(*same_channel)
        .order_by(col(ChatMessageRow.seq).desc())
        .offset(KEPT_PER_CHANNEL)
        .limit(1)
        .scalar_subquery()
    )
    dropped = delete(ChatMessageRow).where(*same_channel, col(ChatMessageRow.seq) <= cutoff)
    await session.exec(dropped)
