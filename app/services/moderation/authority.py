"""Who may moderate, checked in this one place before every moderator operation, and the
players moderation acts on. Roles are read from the database on every check, so a role
given or taken by the operator holds at once on every process."""

from __future__ import annotations

from typing import Any

from sqlmodel import select

from app.rules.errors import ErrorCode, RuleError
from app.rules.moderation import Role
from app.services.accounts.auth import Player
from app.services.moderation.model import Actor
from app.store.db import Database
from app.store.models import PlayerRow
from app.store.moderation import RoleChangeRow, lock_player


class Authority:
    """Roles: read them, require one that moderates, and (the operator) change them."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def role_of(self, player_id: str) -> Role:
        """A player's role (PLAYER for an unknown id: it moderates nothing)."""
        async with self.db.read() as session:
            role = (
                await session.exec(select(PlayerRow.role).where(PlayerRow.id == player_id))
            ).first()
        return Role(role) if role is not None else Role.PLAYER

    async def require_moderator(self, player: Player) -> Actor:
        """The caller as the actor of a moderator operation: FORBIDDEN unless a
        moderator or an admin (before any other check of the operation)."""
        role = await self.role_of(player.id)
        if not role.moderates:
            raise RuleError(ErrorCode.FORBIDDEN, "only moderators may do that")
        return Actor(player, role)

    async def target(self, player_id: object) -> tuple[Player, Role]:
        """A player moderation acts on, with their role; NOT_FOUND when unknown."""
        row = await self._row(PlayerRow.id, player_id)
        return Player(row.id, row.username), Role(row.role)

    async def by_username(self, username: str) -> tuple[Player, Role]:
        """A player by username (any case); NOT_FOUND when unknown."""
        row = await self._row(PlayerRow.username_key, username.lower())
        return Player(row.id, row.username), Role(row.role)

    async def _row(self, column: Any, value: object) -> PlayerRow:
        if not isinstance(value, str) or not 0 < len(value) <= 64:
            raise RuleError(ErrorCode.NOT_FOUND, "no such player")
        async with self.db.read() as session:
            row = (await session.exec(select(PlayerRow).where(column == value))).first()
        if row is None:
            raise RuleError(ErrorCode.NOT_FOUND, "no such player")
        return row

    async def set_role(self, actor: Actor, player_id: str, role: Role) -> Role:
        """Give a player a role (the operator only: no GraphQL operation calls this);
        returns the role they had. The change is recorded, even when it changes nothing."""
        async with self.db.write() as session:
            row = await lock_player(session, player_id)
            if row is None:
                raise RuleError(ErrorCode.NOT_FOUND, "no such player")
            previous = Role(row.role)
            row.role = role.value
            session.add(row)
            session.add(
                RoleChangeRow(
                    player_id=player_id, role=role.value, previous=previous.value, by_id=actor.id
                )
            )
        return previous
