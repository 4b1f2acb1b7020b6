"""What moderators do with chat (docs/rules.md, Moderation): hide a message from every
`chat` answer, see which messages are hidden, and read a message in its context. The
moderation context checks who may; this module only reads and writes."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from app.services.chat.model import ChatMessage
from app.services.chat.service import message_of
from app.store.db import Database
from app.store.models import ChatMessageRow, PlayerRow
from app.store.moderation import HiddenMessageRow


async def hide(db: Database, message_id: str, by_id: str | None) -> None:
    """Hide a message for good (hiding it again changes nothing, nor who hid it)."""
    try:
        async with db.write() as session:
            if await session.get(HiddenMessageRow, message_id) is None:
                session.add(HiddenMessageRow(message_id=message_id, by_id=by_id))
    except IntegrityError:
        pass  # another process hid it at the same moment


async def hidden_among(db: Database, message_ids: list[str]) -> set[str]:
    """Those of the messages that are hidden."""
    if not message_ids:
        return set()
    async with db.read() as session:
        result = await session.exec(
            select(HiddenMessageRow.message_id).where(
                col(HiddenMessageRow.message_id).in_(message_ids)
            )
        )
        return set(result.all())


async def around(db: Database, message: ChatMessage, span: int) -> list[ChatMessage]:
    """The kept messages of the message's channel just before and after it (up to `span`
    each side, hidden ones included), with the message itself in its place."""
    same_channel = (
        col(ChatMessageRow.table_id) == message.table_id,
        col(ChatMessageRow.channel) == message.channel.value,
    )
    rows = select(ChatMessageRow, PlayerRow.username).join(
        PlayerRow, col(PlayerRow.id) == col(ChatMessageRow.player_id)
    )
    async with db.read() as session:
        seq = (
            await session.exec(select(ChatMessageRow.seq).where(ChatMessageRow.id == message.id))
        ).first()
        # By the store's order while the message is kept; by time once it is not.
        key = col(ChatMessageRow.seq) if seq is not None else col(ChatMessageRow.sent_at)
        mark = seq if seq is not None else message.sent_at
        before = (
            await session.exec(
                rows.where(*same_channel, key < mark).order_by(key.desc()).limit(span)
            )
        ).all()
        after = (
            await session.exec(
                rows.where(*same_channel, key > mark, col(ChatMessageRow.id) != message.id)
                .order_by(key)
                .limit(span)
            )
        ).all()
    return [
        *(message_of(r, u) for r, u in reversed(before)),
        message,
        *(message_of(r, u) for r, u in after),
    ]
