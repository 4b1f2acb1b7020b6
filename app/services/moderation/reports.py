"""Reports (docs/rules.md, Moderation): any signed-in player reports another, optionally
naming a chat message of theirs that the reporter could read; moderators page through
the queue, oldest first, and resolve each report once."""

from __future__ import annotations

import uuid

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.errors import ErrorCode, RuleError
from app.rules.moderation import (
    REPORT_WINDOW_SECONDS,
    REPORTS_PER_WINDOW,
    ReportReason,
    ReportStatus,
    clean_note,
    report_wait,
)
from app.services.accounts.auth import Player
from app.services.accounts.cursors import (
    ReportsCursor,
    decode_reports,
    encode_reports,
    page_size,
)
from app.services.accounts.profiles import Page
from app.services.chat.model import ChatChannel, ChatMessage
from app.services.chat.service import ChatService
from app.services.moderation.authority import Authority
from app.services.moderation.model import Actor, Report
from app.services.social.model import Viewer
from app.store import moderation as store
from app.store.db import Database
from app.store.models import now
from app.store.table_rows import usernames


class ReportLimited(RuleError):
    """RATE_LIMITED, with the seconds after which one more report would be stored."""

    def __init__(self, retry_after: float) -> None:
        seconds = max(1, int(retry_after + 0.999))
        super().__init__(
            ErrorCode.RATE_LIMITED,
            f"at most {REPORTS_PER_WINDOW} reports per {REPORT_WINDOW_SECONDS / 60:g} "
            f"minutes: retry in {seconds} s",
        )
        self.retry_after = seconds


class ReportService:
    """Takes reports and serves the moderators' queue."""

    def __init__(
        self, db: Database, authority: Authority, chat: ChatService, cursor_key: bytes
    ) -> None:
        self.db = db
        self.authority = authority
        self.chat = chat
        self.cursor_key = cursor_key

    async def report(
        self,
        reporter: Viewer,
        player_id: str,
        reason: ReportReason,
        message_id: str | None,
        note: str | None,
    ) -> Report:
        """Store a report (or answer the reporter's earlier report of the same message).
        At most 10 stored per reporter per hour, whatever SPADES_RATE_LIMITS says."""
        target, _ = await self.authority.target(player_id)
        if target.id == reporter.id:
            raise RuleError(ErrorCode.BAD_USER_INPUT, "you cannot report yourself")
        text = clean_note(note)
        message = None
        if message_id is not None:
            message = await self.chat.readable(reporter, message_id)
            if message.sender.id != target.id:
                raise RuleError(ErrorCode.NOT_FOUND, "no such message of that player")
        at = now()
        async with self.db.write() as session:
            # The reporter's row orders their reports: the limit and the one report per
            # message hold across processes.
            await store.lock_player(session, reporter.id)
            if message is not None:
                earlier = (
                    await session.exec(
                        select(store.ReportRow).where(
                            store.ReportRow.reporter_id == reporter.id,
                            store.ReportRow.message_id == message.id,
                        )
                    )
                ).first()
                if earlier is not None:
                    return (await self._views([earlier]))[0]
            recent = (
                await session.exec(
                    select(store.ReportRow.created_at).where(
                        store.ReportRow.reporter_id == reporter.id,
                        col(store.ReportRow.created_at) > at - REPORT_WINDOW_SECONDS,
                    )
                )
            ).all()
            wait = report_wait(list(recent), at)
            if wait is not None:
                raise ReportLimited(wait)
            row = store.ReportRow(
                id=uuid.uuid4().hex,
                reporter_id=reporter.id,
                reported_id=target.id,
                reason=reason.value,
                note=text,
                created_at=at,
            )
            _copy_message(row, message)
            session.add(row)
        return (await self._views([row]))[0]

    async def resolve(self, actor: Actor, report_id: str, status: ReportStatus) -> Report:
        """Resolve an open report ACTIONED or DISMISSED, recording who and when. A report
        is resolved once: resolving it again the same way answers it unchanged."""
        if status is ReportStatus.OPEN:
            raise RuleError(ErrorCode.BAD_USER_INPUT, "a report is resolved ACTIONED or DISMISSED")
        async with self.db.write() as session:
            row = await _find(session, report_id)
            if row.status == ReportStatus.OPEN.value:
                row.status = status.value
                row.resolved_by = actor.id
                row.resolved_at = now()
                session.add(row)
            elif row.status != status.value:
                raise RuleError(ErrorCode.BAD_USER_INPUT, f"the report is already {row.status}")
        return (await self._views([row]))[0]

    async def queue(self, status: ReportStatus, first: int, after: str | None) -> Page[Report]:
        """A page of the reports of `status`, oldest first."""
        limit = page_size(first)
        position = (
            decode_reports(self.cursor_key, after, status.value) if after is not None else None
        )
        async with self.db.read() as session:
            rows = list(
                (
                    await session.exec(
                        select(store.ReportRow)
                        .where(
                            store.ReportRow.status == status.value,
                            col(store.ReportRow.seq) > (position.seq if position else 0),
                        )
                        .order_by(col(store.ReportRow.seq))
                        .limit(limit + 1)
                    )
                ).all()
            )
        views = await self._views(rows[:limit])
        edges = [
            (encode_reports(self.cursor_key, ReportsCursor(status.value, row.seq or 0)), view)
            for row, view in zip(rows, views, strict=False)
        ]
        return Page(edges, len(rows) > limit)

    async def knows_message(self, message_id: str) -> bool:
        """Whether some report holds a copy of the message."""
        async with self.db.read() as session:
            found = (
                await session.exec(
                    select(store.ReportRow.seq).where(store.ReportRow.message_id == message_id)
                )
            ).first()
        return found is not None

    async def _views(self, rows: list[store.ReportRow]) -> list[Report]:
        ids = [i for r in rows for i in (r.reporter_id, r.reported_id, r.resolved_by) if i]
        async with self.db.read() as session:
            names = await usernames(session, ids)

        def player(player_id: str) -> Player:
            return Player(player_id, names.get(player_id, "?"))

        return [
            Report(
                id=r.id,
                reporter=player(r.reporter_id),
                reported=player(r.reported_id),
                reason=ReportReason(r.reason),
                note=r.note,
                message=_message_of(r, player(r.reported_id)),
                table_id=r.table_id,
                created_at=r.created_at,
                status=ReportStatus(r.status),
                resolved_by=player(r.resolved_by) if r.resolved_by else None,
                resolved_at=r.resolved_at,
            )
            for r in rows
        ]


def _copy_message(row: store.ReportRow, message: ChatMessage | None) -> None:
    """Keep the reported message in the report: the chat drops its old messages."""
    if message is not None:
        row.message_id = message.id
        row.table_id = message.table_id
        row.message_channel = message.channel.value
        row.message_text = message.text
        row.message_sent_at = message.sent_at


def _message_of(row: store.ReportRow, sender: Player) -> ChatMessage | None:
    """The reported message as the report copied it."""
    if row.message_id is None or row.table_id is None:
        return None
    return ChatMessage(
        id=row.message_id,
        table_id=row.table_id,
        channel=ChatChannel(row.message_channel or ChatChannel.PLAYERS.value),
        sender=sender,
        text=row.message_text or "",
        sent_at=row.message_sent_at or row.created_at,
    )


async def _find(session: AsyncSession, report_id: object) -> store.ReportRow:
    """A report by id; NOT_FOUND when unknown."""
    missing = RuleError(ErrorCode.NOT_FOUND, "no such report")
    if not isinstance(report_id, str) or not 0 < len(report_id) <= 32:
        raise missing
    row = (
        await session.exec(select(store.ReportRow).where(store.ReportRow.id == report_id))
    ).first()
    if row is None:
        raise missing
    return row
