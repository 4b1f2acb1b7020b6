"""Social operations: friends, blocks, invitations, links, spectating, host powers."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

import strawberry
from strawberry.types import Info

from app.api.graphql.context import Context, require_viewer, services_of, subscription_slot
from app.api.graphql.enums import NotificationEvent
from app.api.graphql.errors import translate_errors
from app.api.graphql.game_view import player_type
from app.api.graphql.table_types import Table
from app.api.graphql.types import BotLevel, JoinPolicy, Player, Visibility
from app.api.metrics import SUBSCRIPTIONS
from app.rules.errors import ErrorCode, RuleError
from app.services.lobby.service import TableOptions
from app.services.rate_limits import Rule
from app.services.social.model import FriendRequest as SocialFriendRequest
from app.services.social.model import Invitation as SocialInvitation
from app.services.social.model import LinkKind, Notice, Viewer
from app.services.tables import snapshot as model

InfoT = Info[Context, None]


@strawberry.type
class FriendRequest:
    id: strawberry.ID
    from_: Player = strawberry.field(name="from")
    to: Player

    @classmethod
    def of(cls, request: SocialFriendRequest) -> FriendRequest:
        """The GraphQL friend request."""
        return cls(
            id=strawberry.ID(request.id),
            from_=player_type(request.sender),
            to=player_type(request.recipient),
        )


@strawberry.type
class Invitation:
    id: strawberry.ID
    table: Table
    from_: Player = strawberry.field(name="from")


async def _invitation(info: InfoT, invitation: SocialInvitation, viewer: Viewer) -> Invitation:
    table = await services_of(info).ledger.get(invitation.table_id)
    if table is None:
        raise RuleError(ErrorCode.NOT_FOUND, "no such table")
    return Invitation(
        id=strawberry.ID(invitation.id),
        table=Table.of(table, viewer),
        from_=player_type(invitation.host),
    )


@strawberry.input
class UpdateTableInput:
    name: str | None = strawberry.UNSET
    visibility: Visibility | None = strawberry.UNSET
    join_policy: JoinPolicy | None = strawberry.UNSET
    spectating: bool | None = strawberry.UNSET
    turn_seconds: int | None = strawberry.field(
        default=strawberry.UNSET, description="5..300, or 0 (untimed) unless PUBLIC"
    )
    replacement_bot: BotLevel | None = strawberry.UNSET

    def to_options(self) -> TableOptions:
        """The service-layer options (unset fields stay as they are; a null name clears it)."""
        name = self.name if isinstance(self.name, str) else None
        return TableOptions(
            name=name,
            clear_name=self.name is None or (name is not None and not name.strip()),
            visibility=model.Visibility(self.visibility.value) if self.visibility else None,
            join_policy=model.JoinPolicy(self.join_policy.value) if self.join_policy else None,
            spectating=self.spectating if isinstance(self.spectating, bool) else None,
            turn_seconds=self.turn_seconds if isinstance(self.turn_seconds, int) else None,
            replacement_bot=(
                self.replacement_bot.to_rules()
                if isinstance(self.replacement_bot, BotLevel)
                else None
            ),
        )


@strawberry.type
class Notification:
    event: NotificationEvent = strawberry.field(
        description="FRIEND_REQUEST, FRIEND_ACCEPTED, FRIEND_DECLINED, FRIEND_REMOVED, "
        "INVITATION, INVITATION_DECLINED or KICKED"
    )
    friend_request: FriendRequest | None
    invitation: Invitation | None
    table_id: strawberry.ID | None = strawberry.field(description="the table it concerns, if any")
    player: Player | None = strawberry.field(description="the other player it concerns, if any")


@strawberry.type
class SocialQuery:
    @strawberry.field
    @translate_errors
    async def friends(self, info: InfoT) -> list[Player]:
        viewer = await require_viewer(info)
        return [player_type(p) for p in await services_of(info).social.friends(viewer.player)]

    @strawberry.field(description="the players the caller has blocked, by username")
    @translate_errors
    async def blocked_players(self, info: InfoT) -> list[Player]:
        viewer = await require_viewer(info)
        blocked = await services_of(info).social.blocked(viewer.player)
        return [player_type(p) for p in blocked]

    @strawberry.field(description="incoming and pending")
    @translate_errors
    async def friend_requests(self, info: InfoT) -> list[FriendRequest]:
        viewer = await require_viewer(info)
        requests = await services_of(info).social.friend_requests(viewer.player)
        return [FriendRequest.of(r) for r in requests]

    @strawberry.field(description="pending invitations to the caller")
    @translate_errors
    async def invitations(self, info: InfoT) -> list[Invitation]:
        viewer = await require_viewer(info)
        pending = await services_of(info).social.invitations(viewer.player)
        return [await _invitation(info, i, viewer) for i in pending]


@strawberry.type
class SocialMutation:
    @strawberry.mutation
    @translate_errors
    async def send_friend_request(self, info: InfoT, username: str) -> FriendRequest:
        viewer = await require_viewer(info)
        await services_of(info).limits.check(Rule.FRIEND_REQUEST, viewer.id)
        request = await services_of(info).social.send_friend_request(viewer.player, username)
        return FriendRequest.of(request)

    @strawberry.mutation
    @translate_errors
    async def respond_to_friend_request(
        self, info: InfoT, request_id: strawberry.ID, accept: bool
    ) -> bool:
        viewer = await require_viewer(info)
        social = services_of(info).social
        return await social.respond_to_friend_request(viewer.player, str(request_id), accept)

    @strawberry.mutation
    @translate_errors
    async def remove_friend(self, info: InfoT, player_id: strawberry.ID) -> bool:
        viewer = await require_viewer(info)
        return await services_of(info).social.remove_friend(viewer.player, str(player_id))

    @strawberry.mutation
    @translate_errors
    async def block_player(self, info: InfoT, player_id: strawberry.ID) -> bool:
        viewer = await require_viewer(info)
        return await services_of(info).social.block(viewer.player, str(player_id))

    @strawberry.mutation
    @translate_errors
    async def unblock_player(self, info: InfoT, player_id: strawberry.ID) -> bool:
        viewer = await require_viewer(info)
        return await services_of(info).social.unblock(viewer.player, str(player_id))

    @strawberry.mutation(description="host only")
    @translate_errors
    async def invite_player(
        self, info: InfoT, table_id: strawberry.ID, username: str
    ) -> Invitation:
        viewer = await require_viewer(info)
        services = services_of(info)
        table = await services.tables.host_table(viewer, str(table_id), "invite players")
        await services.limits.check(Rule.INVITATION, viewer.id)
        if table.status is not model.TableStatus.WAITING:
            raise RuleError(ErrorCode.WRONG_PHASE, "invitations are for tables still waiting")
        seated = frozenset(o.player_id for o in table.occupants if o is not None)
        invitation = await services.social.invite(viewer.player, table.id, username, seated)
        return await _invitation(info, invitation, viewer)

    @strawberry.mutation
    @translate_errors
    async def decline_invitation(self, info: InfoT, invitation_id: strawberry.ID) -> bool:
        viewer = await require_viewer(info)
        return await services_of(info).social.decline_invitation(viewer.player, str(invitation_id))

    @strawberry.mutation(description="host only: a code that lets its holder see the table and sit")
    @translate_errors
    async def create_join_link(self, info: InfoT, table_id: strawberry.ID) -> str:
        viewer = await require_viewer(info)
        tables = services_of(info).tables
        return await tables.create_link(viewer, str(table_id), LinkKind.JOIN)

    @strawberry.mutation(description="host only: a code that lets its holder see and watch only")
    @translate_errors
    async def create_spectator_link(self, info: InfoT, table_id: strawberry.ID) -> str:
        viewer = await require_viewer(info)
        tables = services_of(info).tables
        return await tables.create_link(viewer, str(table_id), LinkKind.SPECTATE)

    @strawberry.mutation(description="become a spectator (code: a spectator or join link)")
    @translate_errors
    async def watch_table(
        self, info: InfoT, table_id: strawberry.ID, code: str | None = strawberry.UNSET
    ) -> Table:
        viewer = await require_viewer(info)
        link = code if isinstance(code, str) else None
        table = await services_of(info).tables.watch(viewer, str(table_id), link)
        return Table.of(table, await require_viewer(info))

    @strawberry.mutation(description="host only, before the game starts")
    @translate_errors
    async def update_table(
        self, info: InfoT, table_id: strawberry.ID, input: UpdateTableInput
    ) -> Table:
        viewer = await require_viewer(info)
        table = await services_of(info).tables.update(viewer, str(table_id), input.to_options())
        return Table.of(table, viewer)

    @strawberry.mutation(description="host only, to a seated human")
    @translate_errors
    async def transfer_host(
        self, info: InfoT, table_id: strawberry.ID, player_id: strawberry.ID
    ) -> Table:
        viewer = await require_viewer(info)
        tables = services_of(info).tables
        table = await tables.transfer_host(viewer, str(table_id), str(player_id))
        return Table.of(table, viewer)

    @strawberry.mutation(description="host only, before the game starts")
    @translate_errors
    async def kick_player(
        self, info: InfoT, table_id: strawberry.ID, player_id: strawberry.ID
    ) -> Table:
        viewer = await require_viewer(info)
        table = await services_of(info).tables.kick(viewer, str(table_id), str(player_id))
        return Table.of(table, viewer)


@strawberry.type
class SocialSubscription:
    @strawberry.subscription(description="the subscriber's own notifications")
    @translate_errors
    async def notifications(self, info: InfoT) -> AsyncGenerator[Notification, None]:
        viewer = await require_viewer(info)
        stream = services_of(info).streams.notifications(viewer)
        with subscription_slot(info), SUBSCRIPTIONS.labels("notifications").track_inprogress():
            async for notification in _notifications(info, viewer, stream):
                yield notification


async def _notifications(
    info: InfoT, viewer: Viewer, stream: AsyncIterator[Notice]
) -> AsyncGenerator[Notification, None]:
    async for notice in stream:
        event = notice.kind.public
        if event is None:
            continue  # internal notices never reach a client (the stream drops them too)
        invitation = None
        if notice.invitation is not None:
            try:
                invitation = await _invitation(info, notice.invitation, viewer)
            except RuleError:
                invitation = None
        yield Notification(
            event=event,
            friend_request=(
                FriendRequest.of(notice.friend_request) if notice.friend_request else None
            ),
            invitation=invitation,
            table_id=strawberry.ID(notice.table_id) if notice.table_id else None,
            player=player_type(notice.other) if notice.other else None,
        )
