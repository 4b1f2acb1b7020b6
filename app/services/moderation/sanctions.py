"""Mutes and bans: given, lifted and listed (docs/rules.md, Moderation). The caller is
an `Actor` already authorized (a moderator, or the operator at the command line); the
rules of whom it may sanction are checked here (`check_may_sanction`)."""

from __future__ import annotations

import uuid

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.errors import ErrorCode, RuleError
from app.rules.moderation import (
    SanctionKind,
    check_may_sanction,
    check_mute_minutes,
    clean_reason,
)
from app.services.accounts.auth import Player, revoke_all
from app.services.moderation.authority import Authority
from app.services.moderation.enforcement import BanEnforcement
from app.services.moderation.model import Actor, Mute, Sanction
from app.store import moderation as store
from app.store.db import Database
from app.store.models import now
from app.store.table_rows import usernames


class SanctionService:
    """Gives, lifts and lists sanctions."""

    def __init__(self, db: Database, authority: Authority, enforcement: BanEnforcement) -> None:
        self.db = db
        self.authority = authority
        self.enforcement = enforcement

    async def mute(self, actor: Actor, player_id: str, minutes: int, reason: str) -> Sanction:
        """Mute a player for 1..10,080 minutes: their `sendChat` answers FORBIDDEN."""
        target, role = await self.authority.target(player_id)
        check_may_sanction(actor.id, target.id, role)
        length = check_mute_minutes(minutes)
        text = clean_reason(reason)
        created = now()
        row = store.SanctionRow(
            id=uuid.uuid4().hex,
            player_id=target.id,
            kind=SanctionKind.MUTE.value,
            reason=text,
            by_id=actor.id,
            created_at=created,
            ends_at=created + length * 60,
        )
        async with self.db.write() as session:
            session.add(row)
        return await self._view(row)

    async def ban(
        self, actor: Actor, player_id: str, reason: str, carry_out: bool = True
    ) -> Sanction:
        """Ban a player until lifted, and carry the ban out everywhere before answering
        (without `carry_out`, only store it with their tokens revoked: each server
        process's watch carries it out). A player already banned keeps their ban (it is
        answered again, and carried out again: whatever an interrupted first one left
        undone is done now)."""
        target, role = await self.authority.target(player_id)
        check_may_sanction(actor.id, target.id, role)
        text = clean_reason(reason)
        async with self.db.write() as session:
            # The player's row orders this ban with their sign-ins (auth._issue_token).
            await store.lock_player(session, target.id)
            row = await store.active_ban(session, target.id)
            if row is None:
                row = store.SanctionRow(
                    id=uuid.uuid4().hex,
                    player_id=target.id,
                    kind=SanctionKind.BAN.value,
                    reason=text,
                    by_id=actor.id,
                )
                session.add(row)
            await revoke_all(session, target.id)
        if carry_out:
            await self.enforcement.enforce(target.id)
        return await self._view(row)

    async def lift(self, actor: Actor, sanction_id: str) -> Sanction:
        """End a sanction now. Lifting one already lifted or over changes nothing; nobody
        lifts their own. A lifted ban lets the player sign in again, and returns no seat."""
        async with self.db.write() as session:
            row = await _find(session, sanction_id)
            if actor.id is not None and row.player_id == actor.id:
                raise RuleError(ErrorCode.FORBIDDEN, "nobody may lift their own sanction")
            over = row.ends_at is not None and row.ends_at <= now()
            if row.lifted_at is None and not over:
                row.lifted_at = now()
                row.lifted_by = actor.id
                session.add(row)
        return await self._view(row)

    async def lift_bans(self, actor: Actor, player_id: str) -> list[Sanction]:
        """Lift every ban in force on a player (the operator's `unban`)."""
        async with self.db.write() as session:
            rows = list(
                (
                    await session.exec(
                        select(store.SanctionRow).where(
                            store.SanctionRow.player_id == player_id,
                            col(store.SanctionRow.kind) == SanctionKind.BAN.value,
                            col(store.SanctionRow.lifted_at).is_(None),
                        )
                    )
                ).all()
            )
            for row in rows:
                row.lifted_at = now()
                row.lifted_by = actor.id
                session.add(row)
        return [await self._view(row) for row in rows]

    async def of_player(self, player_id: str) -> list[Sanction]:
        """A player's sanctions, newest first, lifted and ended ones included."""
        target, _ = await self.authority.target(player_id)
        async with self.db.read() as session:
            rows = (
                await session.exec(
                    select(store.SanctionRow)
                    .where(store.SanctionRow.player_id == target.id)
                    .order_by(col(store.SanctionRow.seq).desc())
                )
            ).all()
        return await self._views(list(rows))

    async def mute_of(self, player_id: str) -> Mute | None:
        """The mute holding the player now (the one ending last), if any."""
        async with self.db.read() as session:
            row = await store.active_mute(session, player_id, now())
        if row is None or row.ends_at is None:
            return None
        return Mute(row.reason, row.ends_at)

    async def _view(self, row: store.SanctionRow) -> Sanction:
        return (await self._views([row]))[0]

    async def _views(self, rows: list[store.SanctionRow]) -> list[Sanction]:
        ids = [i for r in rows for i in (r.player_id, r.by_id, r.lifted_by) if i is not None]
        async with self.db.read() as session:
            names = await usernames(session, ids)

        def player(player_id: str | None) -> Player | None:
            return Player(player_id, names.get(player_id, "?")) if player_id else None

        return [
            Sanction(
                id=r.id,
                player=Player(r.player_id, names.get(r.player_id, "?")),
                kind=SanctionKind(r.kind),
                reason=r.reason,
                by=player(r.by_id),
                created_at=r.created_at,
                ends_at=r.ends_at,
                lifted_at=r.lifted_at,
                lifted_by=player(r.lifted_by),
            )
            for r in rows
        ]


async def _find(session: AsyncSession, sanction_id: object) -> store.SanctionRow:
    """A sanction by id; NOT_FOUND when unknown."""
    missing = RuleError(ErrorCode.NOT_FOUND, "no such sanction")
    if not isinstance(sanction_id, str) or not 0 < len(sanction_id) <= 32:
        raise missing
    row = (
        await session.exec(select(store.SanctionRow).where(store.SanctionRow.id == sanction_id))
    ).first()
    if row is None:
        raise missing
    return row
