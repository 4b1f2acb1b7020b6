"""Table access rules: who sees a table, who may sit, who may watch (docs/rules.md,
Table access)."""

from __future__ import annotations

from dataclasses import dataclass

from app.rules.errors import ErrorCode, RuleError
from app.services.tables.snapshot import JoinPolicy, TableSnapshot, Visibility

# The join policies each visibility allows, most open first.
ALLOWED_POLICIES: dict[Visibility, tuple[JoinPolicy, ...]] = {
    Visibility.PUBLIC: (JoinPolicy.OPEN, JoinPolicy.FRIENDS_ONLY, JoinPolicy.INVITE_ONLY),
    Visibility.FRIENDS_ONLY: (JoinPolicy.FRIENDS_ONLY, JoinPolicy.INVITE_ONLY),
    Visibility.PRIVATE: (JoinPolicy.INVITE_ONLY,),
}

MAX_NAME_LENGTH = 50


@dataclass(frozen=True, slots=True)
class Relation:
    """How one player stands to one table."""

    is_host: bool = False
    seated: bool = False
    friend_of_host: bool = False
    invited: bool = False
    join_link: bool = False
    spectator_link: bool = False
    blocked: bool = False  # the host and this player block one another


def resolve_join_policy(visibility: Visibility, policy: JoinPolicy | None) -> JoinPolicy:
    """The policy to use: the given one if the visibility allows it, else refuse;
    without one, the most open the visibility allows."""
    allowed = ALLOWED_POLICIES[visibility]
    if policy is None:
        return allowed[0]
    if policy not in allowed:
        raise RuleError(
            ErrorCode.BAD_USER_INPUT,
            f"join policy {policy.value} is more open than visibility {visibility.value} allows",
        )
    return policy


def policy_after_visibility_change(visibility: Visibility, current: JoinPolicy) -> JoinPolicy:
    """The host changed only the visibility: keep the policy if allowed, else the most open
    allowed one."""
    allowed = ALLOWED_POLICIES[visibility]
    return current if current in allowed else allowed[0]


def clean_name(name: str | None) -> str | None:
    """A table name trimmed, at most 50 characters; blank means no name."""
    if name is None:
        return None
    trimmed = name.strip()
    if len(trimmed) > MAX_NAME_LENGTH:
        raise RuleError(
            ErrorCode.BAD_USER_INPUT, f"a table name is at most {MAX_NAME_LENGTH} characters"
        )
    return trimmed or None


def can_see(table: TableSnapshot, rel: Relation) -> bool:
    """Whether the table shows up for this player (lobby, lookups, lobby updates)."""
    if rel.seated or rel.is_host or rel.invited or rel.join_link or rel.spectator_link:
        return True
    if table.visibility is Visibility.PUBLIC:
        return True
    if table.visibility is Visibility.FRIENDS_ONLY:
        return rel.friend_of_host
    return False


def can_sit(table: TableSnapshot, rel: Relation) -> bool:
    """Whether this player may take a seat (given that it can see the table)."""
    if rel.blocked:
        return False
    if rel.invited or rel.join_link or rel.is_host:
        return True
    if table.join_policy is JoinPolicy.OPEN:
        return True
    if table.join_policy is JoinPolicy.FRIENDS_ONLY:
        return rel.friend_of_host
    return False


def can_watch(table: TableSnapshot, rel: Relation) -> bool:
    """Whether this player may watch as a spectator."""
    return table.spectating and can_see(table, rel)
