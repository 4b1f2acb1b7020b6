"""Friends, blocks, invitations and table links, and the `Viewer` they make up.

A `Viewer` is everything about one player that decides what tables they may
see and where they may sit. It is loaded per request (a few indexed queries)
and, for live lobby streams, reloaded whenever the player's social graph
changes (a `SOCIAL_CHANGED` notice on the player's channel).
"""

from __future__ import annotations

import hmac
import logging
import secrets
import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import CompoundSelect, and_, bindparam, delete, or_, union_all
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.broker.base import Broker
from app.rules.errors import ErrorCode, RuleError
from app.services.accounts.auth import Player
from app.services.social.model import (
    _NO_IDS,
    FriendRequest,
    Invitation,
    LinkKind,
    Notice,
    NoticeKind,
    Viewer,
    hash_code,
    player_channel,
)
from app.services.tables.snapshot import TableStatus
from app.store.db import Database
from app.store.models import (
    BlockRow,
    FriendRequestRow,
    FriendshipRow,
    InvitationRow,
    LinkGrantRow,
    PlayerRow,
    TableLinkRow,
    TableRow,
)
from app.store.spectators import kept_access, remember_spectator

log = logging.getLogger(__name__)


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


class SocialService:
    """Friends, blocks, invitations, links; loads viewers."""

    def __init__(self, db: Database, broker: Broker[Any]) -> None:
        self.db = db
        self.broker = broker

    # ------------------------------------------------------------------ viewers

    async def viewer(self, player: Player) -> Viewer:
        """Load the social facts of `player`."""
        async with self.db.read() as session:
            return await load_viewer(session, player)

    # ------------------------------------------------------------------ notices

    async def notify(self, player_id: str, notice: Notice) -> None:
        """Send `notice` to one player's live streams (best effort: the change it reports
        is already committed)."""
        try:
            await self.broker.publish(player_channel(player_id), notice)
        except Exception:
            log.warning("could not notify player %s", player_id, exc_info=True)

    async def notify_social_change(self, player_ids: Iterable[str]) -> None:
        """Tell these players' live lobby streams to re-route."""
        for player_id in set(player_ids):
            await self.notify(player_id, Notice(NoticeKind.SOCIAL_CHANGED))

    # ------------------------------------------------------------------ friends

    async def friends(self, player: Player) -> list[Player]:
        """The player's friends, by username."""
        async with self.db.read() as session:
            rows = await session.exec(
                select(FriendshipRow).where(
                    or_(
                        col(FriendshipRow.player_a) == player.id,
                        col(FriendshipRow.player_b) == player.id,
                    )
                )
            )
            ids = [r.player_b if r.player_a == player.id else r.player_a for r in rows.all()]
            players = await _players(session, ids)
        return sorted(players.values(), key=lambda p: p.username.lower())

    async def friend_requests(self, player: Player) -> list[FriendRequest]:
        """Pending requests addressed to the player, oldest first."""
        async with self.db.read() as session:
            rows = list(
                (
                    await session.exec(
                        select(FriendRequestRow)
                        .where(FriendRequestRow.to_id == player.id)
                        .order_by(col(FriendRequestRow.created_at))
                    )
                ).all()
            )
            players = await _players(session, [r.from_id for r in rows])
        return [FriendRequest(r.id, players[r.from_id], player) for r in rows]

    async def send_friend_request(self, player: Player, username: str) -> FriendRequest:
        """Ask `username` to be friends; if they already asked, both become friends."""
        async with self.db.write() as session:
            other = await _by_username(session, username)
            if other is None:
                raise RuleError(ErrorCode.NOT_FOUND, "no such player")
            if other.id == player.id:
                raise RuleError(ErrorCode.BAD_USER_INPUT, "you cannot befriend yourself")
            if await _blocked_either_way(session, player.id, other.id):
                raise RuleError(ErrorCode.FORBIDDEN, "you cannot send this player a request")
            if await session.get(FriendshipRow, _pair(player.id, other.id)) is not None:
                raise RuleError(ErrorCode.BAD_USER_INPUT, "you are already friends")
            theirs = await _request_between(session, other.id, player.id)
            if theirs is not None:
                await session.delete(theirs)
                session.add(
                    FriendshipRow(
                        player_a=min(player.id, other.id), player_b=max(player.id, other.id)
                    )
                )
                accepted = FriendRequest(theirs.id, other, player)
                mutual = True
            else:
                mine = await _request_between(session, player.id, other.id)
                if mine is None:
                    mine = FriendRequestRow(id=uuid.uuid4().hex, from_id=player.id, to_id=other.id)
                    session.add(mine)
                accepted = FriendRequest(mine.id, player, other)
                mutual = False
        if mutual:
            await self.notify(
                other.id, Notice(NoticeKind.FRIEND_ACCEPTED, friend_request=accepted, other=player)
            )
            await self.notify_social_change([player.id, other.id])
        else:
            await self.notify(
                other.id, Notice(NoticeKind.FRIEND_REQUEST, friend_request=accepted, other=player)
            )
        return accepted

    async def respond_to_friend_request(
        self, player: Player, request_id: str, accept: bool
    ) -> bool:
        """Accept or decline a request addressed to the player."""
        async with self.db.write() as session:
            row = (
                await session.get(FriendRequestRow, request_id) if _plausible(request_id) else None
            )
            if row is None or row.to_id != player.id:
                raise RuleError(ErrorCode.NOT_FOUND, "no such friend request")
            sender = (await _players(session, [row.from_id]))[row.from_id]
            await session.delete(row)
            if accept:
                session.add(
                    FriendshipRow(
                        player_a=min(player.id, sender.id), player_b=max(player.id, sender.id)
                    )
                )
        request = FriendRequest(request_id, sender, player)
        kind = NoticeKind.FRIEND_ACCEPTED if accept else NoticeKind.FRIEND_DECLINED
        await self.notify(sender.id, Notice(kind, friend_request=request, other=player))
        if accept:
            await self.notify_social_change([player.id, sender.id])
        return True

    async def remove_friend(self, player: Player, friend_id: str) -> bool:
        """End a friendship."""
        async with self.db.write() as session:
            row = (
                await session.get(FriendshipRow, _pair(player.id, friend_id))
                if _plausible(friend_id)
                else None
            )
            if row is None:
                raise RuleError(ErrorCode.NOT_FOUND, "not your friend")
            await session.delete(row)
        await self.notify(friend_id, Notice(NoticeKind.FRIEND_REMOVED, other=player))
        await self.notify_social_change([player.id, friend_id])
        return True

    # ------------------------------------------------------------------ blocks

    async def block(self, player: Player, other_id: str) -> bool:
        """Block a player: ends friendship, pending requests and invitations both ways."""
        async with self.db.write() as session:
            other = (
                (await _players(session, [other_id])).get(other_id)
                if _plausible(other_id)
                else None
            )
            if other is None:
                raise RuleError(ErrorCode.NOT_FOUND, "no such player")
            if other.id == player.id:
                raise RuleError(ErrorCode.BAD_USER_INPUT, "you cannot block yourself")
            if await session.get(BlockRow, (player.id, other.id)) is None:
                session.add(BlockRow(blocker_id=player.id, blocked_id=other.id))
            friendship = await session.get(FriendshipRow, _pair(player.id, other.id))
            if friendship is not None:
                await session.delete(friendship)
            for a, b in ((player.id, other.id), (other.id, player.id)):
                await session.exec(
                    delete(FriendRequestRow).where(
                        col(FriendRequestRow.from_id) == a, col(FriendRequestRow.to_id) == b
                    )
                )
                await session.exec(
                    delete(InvitationRow).where(
                        col(InvitationRow.from_id) == a, col(InvitationRow.to_id) == b
                    )
                )
        await self.notify_social_change([player.id, other.id])
        return True

    async def blocked(self, player: Player) -> list[Player]:
        """The players the player has blocked (not those who blocked them), by username."""
        async with self.db.read() as session:
            rows = await session.exec(
                select(BlockRow.blocked_id).where(BlockRow.blocker_id == player.id)
            )
            players = await _players(session, rows.all())
        return sorted(players.values(), key=lambda p: p.username.lower())

    async def unblock(self, player: Player, other_id: str) -> bool:
        """Lift a block (friendship does not come back by itself)."""
        async with self.db.write() as session:
            row = (
                await session.get(BlockRow, (player.id, other_id)) if _plausible(other_id) else None
            )
            if row is None:
                raise RuleError(ErrorCode.NOT_FOUND, "you have not blocked this player")
            await session.delete(row)
        await self.notify_social_change([player.id, other_id])
        return True

    # ------------------------------------------------------------------ invitations

    async def invitations(self, player: Player) -> list[Invitation]:
        """Pending invitations to the player at tables still waiting for players."""
        async with self.db.read() as session:
            rows = list(
                (
                    await session.exec(
                        select(InvitationRow)
                        .join(TableRow, col(TableRow.id) == col(InvitationRow.table_id))
                        .where(
                            InvitationRow.to_id == player.id,
                            TableRow.status == TableStatus.WAITING.value,
                        )
                        .order_by(col(InvitationRow.created_at))
                    )
                ).all()
            )
            players = await _players(session, [r.from_id for r in rows])
        return [
            Invitation(r.id, r.table_id, players[r.from_id], player)
            for r in rows
            if r.from_id in players
        ]

    async def invite(
        self, host: Player, table_id: str, username: str, seated: frozenset[str]
    ) -> Invitation:
        """Invite a player to a table (the caller has been checked to be its host; `seated`
        are the ids of the players sitting there)."""
        async with self.db.write() as session:
            other = await _by_username(session, username)
            if other is None:
                raise RuleError(ErrorCode.NOT_FOUND, "no such player")
            if other.id in seated:
                raise RuleError(ErrorCode.ALREADY_SEATED, "that player already sits here")
            if other.id == host.id:
                raise RuleError(ErrorCode.BAD_USER_INPUT, "you cannot invite yourself")
            if await _blocked_either_way(session, host.id, other.id):
                raise RuleError(ErrorCode.FORBIDDEN, "you cannot invite this player")
            existing = (
                await session.exec(
                    select(InvitationRow).where(
                        InvitationRow.table_id == table_id, InvitationRow.to_id == other.id
                    )
                )
            ).first()
            if existing is None:
                existing = InvitationRow(
                    id=uuid.uuid4().hex, table_id=table_id, from_id=host.id, to_id=other.id
                )
                session.add(existing)
        invitation = Invitation(existing.id, table_id, host, other)
        await self.notify(
            other.id,
            Notice(NoticeKind.INVITATION, invitation=invitation, table_id=table_id, other=host),
        )
        await self.notify_social_change([other.id])
        return invitation

    async def decline_invitation(self, player: Player, invitation_id: str) -> bool:
        """Decline an invitation; the host is told."""
        async with self.db.write() as session:
            row = (
                await session.get(InvitationRow, invitation_id)
                if _plausible(invitation_id)
                else None
            )
            if row is None or row.to_id != player.id:
                raise RuleError(ErrorCode.NOT_FOUND, "no such invitation")
            await session.delete(row)
            host = (await _players(session, [row.from_id]))[row.from_id]
        invitation = Invitation(row.id, row.table_id, host, player)
        await self.notify(
            host.id,
            Notice(
                NoticeKind.INVITATION_DECLINED,
                invitation=invitation,
                table_id=row.table_id,
                other=player,
            ),
        )
        await self.notify_social_change([player.id])
        return True

    async def drop_invitation(self, session: AsyncSession, table_id: str, player_id: str) -> None:
        """Remove a player's invitation to a table (used when they sit or are kicked)."""
        await session.exec(
            delete(InvitationRow).where(
                col(InvitationRow.table_id) == table_id, col(InvitationRow.to_id) == player_id
            )
        )

    # ------------------------------------------------------------------ links

    async def create_link(self, table_id: str, kind: LinkKind) -> str:
        """A new code for the table's link of `kind`; the old code (and its holders) stop
        working."""
        code = secrets.token_urlsafe(24)  # 192 bits
        async with self.db.write() as session:
            row = await session.get(TableLinkRow, (table_id, kind.value))
            holders: list[str] = []
            if row is None:
                session.add(
                    TableLinkRow(table_id=table_id, kind=kind.value, code_hash=hash_code(code))
                )
            else:
                holders = list(
                    (
                        await session.exec(
                            select(LinkGrantRow.player_id).where(
                                LinkGrantRow.table_id == table_id, LinkGrantRow.kind == kind.value
                            )
                        )
                    ).all()
                )
                row.code_hash = hash_code(code)
                session.add(row)
        await self.notify_social_change(holders)
        return code

    async def redeem(self, player: Player, table_id: str, code: str | None) -> LinkKind | None:
        """If `code` is the table's current join or spectator code, remember that the player
        holds it and say which; None for no code or a wrong one."""
        if not code or not isinstance(code, str) or len(code) > 200:
            return None
        digest = hash_code(code)
        async with self.db.write() as session:
            rows = (
                await session.exec(select(TableLinkRow).where(TableLinkRow.table_id == table_id))
            ).all()
            match = next((r for r in rows if hmac.compare_digest(r.code_hash, digest)), None)
            if match is None:
                return None
            grant = await session.get(LinkGrantRow, (table_id, player.id, match.kind))
            if grant is None:
                session.add(
                    LinkGrantRow(
                        table_id=table_id, player_id=player.id, kind=match.kind, code_hash=digest
                    )
                )
            else:
                grant.code_hash = digest
                session.add(grant)
        await self.notify_social_change([player.id])
        return LinkKind(match.kind)

    async def remember_spectator(self, table_id: str, player_id: str) -> None:
        """Note that the player watches the table: if it is replaced by a rematch, they
        keep a spectator's access to the new one (docs/rules.md, Rematch)."""
        async with self.db.write() as session:
            await remember_spectator(session, table_id, player_id)


# ---------------------------------------------------------------------------- queries


# A grant counts while its link still has the code it was redeemed with. Built once:
# combining comparisons with `&` memoizes a comparator that refers back to its expression,
# a reference cycle each viewer load would leave to the cycle collector.
_GRANT_STILL_VALID = and_(
    col(TableLinkRow.table_id) == col(LinkGrantRow.table_id),
    col(TableLinkRow.kind) == col(LinkGrantRow.kind),
    col(TableLinkRow.code_hash) == col(LinkGrantRow.code_hash),
)

# A player's access by link, and the spectator's access kept from the table a rematch
# table replaced (it counts as a spectator link's), in one query built once.
_GRANTS: CompoundSelect[str, str] = union_all(
    select(LinkGrantRow.table_id, LinkGrantRow.kind)
    .join(TableLinkRow, _GRANT_STILL_VALID)
    .where(col(LinkGrantRow.player_id) == bindparam("player_id")),
    kept_access(LinkKind.SPECTATE.value),
)


async def load_viewer(session: AsyncSession, player: Player) -> Viewer:
    """The social facts of `player` (friends, blocks, invitations, valid link grants)."""
    pid = player.id
    friendships = (
        await session.exec(
            select(FriendshipRow).where(
                or_(col(FriendshipRow.player_a) == pid, col(FriendshipRow.player_b) == pid)
            )
        )
    ).all()
    friends = _ids(r.player_b if r.player_a == pid else r.player_a for r in friendships)
    blocks = (
        await session.exec(
            select(BlockRow).where(
                or_(col(BlockRow.blocker_id) == pid, col(BlockRow.blocked_id) == pid)
            )
        )
    ).all()
    blocked = _ids(r.blocked_id if r.blocker_id == pid else r.blocker_id for r in blocks)
    # Invitations expire when the game starts or the table closes.
    invited = _ids(
        (
            await session.exec(
                select(InvitationRow.table_id)
                .join(TableRow, col(TableRow.id) == col(InvitationRow.table_id))
                .where(InvitationRow.to_id == pid, TableRow.status == TableStatus.WAITING.value)
            )
        ).all()
    )
    connection = await session.connection()
    grants = (await connection.execute(_GRANTS, {"player_id": pid})).all()
    return Viewer(
        player=player,
        friends=friends,
        blocks=blocked,
        invited=invited,
        join_links=_ids(t for t, k in grants if k == LinkKind.JOIN.value),
        spectator_links=_ids(t for t, k in grants if k == LinkKind.SPECTATE.value),
    )


def _ids(ids: Iterable[str]) -> frozenset[str]:
    """`ids` as a frozenset, the one shared empty set when there are none: every live
    subscription keeps its viewer, and most of a viewer's sets are empty (an empty
    frozenset is ~0.2 KiB, and CPython no longer shares it)."""
    found = frozenset(ids)
    return found if found else _NO_IDS


def _plausible(identifier: object) -> bool:
    return isinstance(identifier, str) and 0 < len(identifier) <= 64


async def _players(session: AsyncSession, ids: Iterable[str]) -> dict[str, Player]:
    wanted = sorted({i for i in ids if _plausible(i) and not i.startswith("bot:")})
    if not wanted:
        return {}
    rows = (await session.exec(select(PlayerRow).where(col(PlayerRow.id).in_(wanted)))).all()
    return {r.id: Player(r.id, r.username) for r in rows}


async def _by_username(session: AsyncSession, username: str) -> Player | None:
    if not isinstance(username, str) or not 0 < len(username) <= 20:
        return None
    row = (
        await session.exec(select(PlayerRow).where(PlayerRow.username_key == username.lower()))
    ).first()
    return Player(row.id, row.username) if row is not None else None


async def _blocked_either_way(session: AsyncSession, a: str, b: str) -> bool:
    return (await session.get(BlockRow, (a, b))) is not None or (
        await session.get(BlockRow, (b, a))
    ) is not None


async def _request_between(
    session: AsyncSession, sender: str, recipient: str
) -> FriendRequestRow | None:
    return (
        await session.exec(
            select(FriendRequestRow).where(
                FriendRequestRow.from_id == sender, FriendRequestRow.to_id == recipient
            )
        )
    ).first()
