"""The social facts of players: who a viewer is to others (friends, blocks, the tables
they were invited to or hold a link of), and the notices sent to one player."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from app.services.accounts.auth import Player


class NotificationEvent(StrEnum):
    """What one `Notification` reports."""

    FRIEND_REQUEST = "FRIEND_REQUEST"
    FRIEND_ACCEPTED = "FRIEND_ACCEPTED"
    FRIEND_DECLINED = "FRIEND_DECLINED"
    FRIEND_REMOVED = "FRIEND_REMOVED"
    INVITATION = "INVITATION"
    INVITATION_DECLINED = "INVITATION_DECLINED"
    KICKED = "KICKED"


class LinkKind(StrEnum):
    """A join link (see and sit) or a spectator link (see and watch)."""

    JOIN = "JOIN"
    SPECTATE = "SPECTATE"


class NoticeKind(StrEnum):
    """What a notification (or an internal notice) says: a `NotificationEvent`, or an
    internal notice that never reaches a client."""

    FRIEND_REQUEST = NotificationEvent.FRIEND_REQUEST.value
    FRIEND_ACCEPTED = NotificationEvent.FRIEND_ACCEPTED.value
    FRIEND_DECLINED = NotificationEvent.FRIEND_DECLINED.value
    FRIEND_REMOVED = NotificationEvent.FRIEND_REMOVED.value
    INVITATION = NotificationEvent.INVITATION.value
    INVITATION_DECLINED = NotificationEvent.INVITATION_DECLINED.value
    KICKED = NotificationEvent.KICKED.value
    # Internal: the player's social graph changed; live lobby streams re-route.
    SOCIAL_CHANGED = "SOCIAL_CHANGED"

    @property
    def public(self) -> NotificationEvent | None:
        """The notification event a client sees; None for an internal notice."""
        return NotificationEvent(self.value) if self is not NoticeKind.SOCIAL_CHANGED else None


@dataclass(frozen=True, slots=True)
class FriendRequest:
    """A pending friend request."""

    id: str
    sender: Player
    recipient: Player


@dataclass(frozen=True, slots=True)
class Invitation:
    """A pending invitation to sit at a table."""

    id: str
    table_id: str
    host: Player
    invitee: Player


@dataclass(frozen=True, slots=True)
class Notice:
    """A message to one player."""

    kind: NoticeKind
    friend_request: FriendRequest | None = None
    invitation: Invitation | None = None
    table_id: str | None = None
    other: Player | None = None


_NO_IDS: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Viewer:
    """A player plus the social facts that decide table access."""

    player: Player
    friends: frozenset[str] = _NO_IDS
    blocks: frozenset[str] = _NO_IDS  # blocked by or blocking
    invited: frozenset[str] = _NO_IDS  # table ids
    join_links: frozenset[str] = _NO_IDS  # table ids
    # table ids: a spectator link, or a spectator's access kept from the old table
    spectator_links: frozenset[str] = _NO_IDS

    @property
    def id(self) -> str:
        """The player's id."""
        return self.player.id


def player_channel(player_id: str) -> str:
    """The broker channel of one player's notices."""
    return f"player:{player_id}"


def hash_code(code: str) -> str:
    """Link codes are stored as SHA-256 digests."""
    return hashlib.sha256(code.encode()).hexdigest()
