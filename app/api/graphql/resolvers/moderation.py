"""Moderation (docs/api.md, Moderation): reporting, the moderators' queue, sanctions and
hidden messages. Every moderator operation is checked by the service's one check."""

from __future__ import annotations

import strawberry
from strawberry.types import Info

from app.api.graphql.context import Context, require_player, require_viewer, services_of
from app.api.graphql.errors import translate_errors
from app.api.graphql.moderation_types import (
    Mute,
    Report,
    ReportConnection,
    ReportReason,
    ReportStatus,
    Role,
    Sanction,
)

InfoT = Info[Context, None]


def _first(first: int | None) -> int:
    # null is outside 1..100 like any other bad size (the service refuses it).
    return first if isinstance(first, int) else 0


@strawberry.type
class ModerationQuery:
    @strawberry.field(description="the caller's role")
    @translate_errors
    async def my_role(self, info: InfoT) -> Role:
        player = await require_player(info)
        return await services_of(info).moderation.role(player)

    @strawberry.field(description="the mute that keeps the caller from chatting now, if any")
    @translate_errors
    async def my_mute(self, info: InfoT) -> Mute | None:
        player = await require_player(info)
        mute = await services_of(info).moderation.mute(player)
        return Mute.of(mute) if mute is not None else None

    @strawberry.field(description="moderators; oldest first")
    @translate_errors
    async def reports(
        self,
        info: InfoT,
        status: ReportStatus | None = ReportStatus.OPEN,
        first: int | None = 20,
        after: str | None = strawberry.UNSET,
    ) -> ReportConnection:
        player = await require_player(info)
        cursor = after if isinstance(after, str) else None
        page = await services_of(info).moderation.queue(
            player, status or ReportStatus.OPEN, _first(first), cursor
        )
        return ReportConnection.of(page)

    @strawberry.field(description="moderators; newest first, lifted ones included")
    @translate_errors
    async def sanctions(self, info: InfoT, player_id: strawberry.ID) -> list[Sanction]:
        player = await require_player(info)
        found = await services_of(info).moderation.sanctions_of(player, str(player_id))
        return [Sanction.of(s) for s in found]


@strawberry.type
class ModerationMutation:
    @strawberry.mutation(
        description="a note is at most 500 characters; reporting a message again answers "
        "the first report; at most 10 reports per hour"
    )
    @translate_errors
    async def report_player(
        self,
        info: InfoT,
        player_id: strawberry.ID,
        reason: ReportReason,
        message_id: strawberry.ID | None = strawberry.UNSET,
        note: str | None = strawberry.UNSET,
    ) -> Report:
        viewer = await require_viewer(info)
        report = await services_of(info).moderation.report_player(
            viewer,
            str(player_id),
            reason,
            str(message_id) if isinstance(message_id, str) else None,
            note if isinstance(note, str) else None,
        )
        return Report.of(report)

    @strawberry.mutation(description="moderators")
    @translate_errors
    async def resolve_report(
        self, info: InfoT, report_id: strawberry.ID, status: ReportStatus
    ) -> Report:
        player = await require_player(info)
        report = await services_of(info).moderation.resolve_report(player, str(report_id), status)
        return Report.of(report)

    @strawberry.mutation(description="moderators; 1 to 10,080 minutes")
    @translate_errors
    async def mute_player(
        self, info: InfoT, player_id: strawberry.ID, minutes: int, reason: str
    ) -> Sanction:
        player = await require_player(info)
        sanction = await services_of(info).moderation.mute_player(
            player, str(player_id), minutes, reason
        )
        return Sanction.of(sanction)

    @strawberry.mutation(description="moderators; until lifted, in force everywhere at once")
    @translate_errors
    async def ban_player(self, info: InfoT, player_id: strawberry.ID, reason: str) -> Sanction:
        player = await require_player(info)
        sanction = await services_of(info).moderation.ban_player(player, str(player_id), reason)
        return Sanction.of(sanction)

    @strawberry.mutation(description="moderators")
    @translate_errors
    async def lift_sanction(self, info: InfoT, sanction_id: strawberry.ID) -> Sanction:
        player = await require_player(info)
        sanction = await services_of(info).moderation.lift_sanction(player, str(sanction_id))
        return Sanction.of(sanction)

    @strawberry.mutation(description="moderators")
    @translate_errors
    async def hide_chat_message(self, info: InfoT, message_id: strawberry.ID) -> bool:
        player = await require_player(info)
        return await services_of(info).moderation.hide_message(player, str(message_id))
