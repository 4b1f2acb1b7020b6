"""GraphQL types of moderation (docs/api.md, Moderation): roles, reports, sanctions."""

from __future__ import annotations

import strawberry
from strawberry.types import Info

from app.api.graphql.context import Context, require_player, services_of
from app.api.graphql.game_view import iso_instant, player_type
from app.api.graphql.resolvers.chat import ChatMessage
from app.api.graphql.resolvers.profiles import PageInfo
from app.api.graphql.types import Player
from app.rules import moderation as rules
from app.services.accounts.auth import Player as AuthPlayer
from app.services.accounts.profiles import Page
from app.services.moderation import model

InfoT = Info[Context, None]

# The rules' enums are the GraphQL enums (their names are defined once, there).
strawberry.enum(rules.Role, name="Role")
strawberry.enum(rules.ReportReason, name="ReportReason")
strawberry.enum(rules.ReportStatus, name="ReportStatus")
strawberry.enum(
    rules.SanctionKind, name="SanctionKind", description="MUTE: no chat; BAN: no access"
)

Role = rules.Role
ReportReason = rules.ReportReason
ReportStatus = rules.ReportStatus
SanctionKind = rules.SanctionKind


@strawberry.type
class Report:
    id: strawberry.ID
    reporter: Player
    reported: Player
    reason: ReportReason
    note: str | None
    message: ChatMessage | None = strawberry.field(
        description="the reported chat message, if any (also when hidden)"
    )
    table_id: strawberry.ID | None
    created_at: str
    status: ReportStatus
    resolved_by: Player | None
    resolved_at: str | None
    report: strawberry.Private[model.Report]

    @strawberry.field(
        description="moderators: whether the reported message is hidden (false for others)"
    )
    async def message_hidden(self, info: InfoT) -> bool:
        player = await require_player(info)
        return await services_of(info).moderation.message_hidden(player, self.report)

    @strawberry.field(
        description="moderators: the reported message among the few messages around it in "
        "its channel, oldest first, hidden ones included (empty for others)"
    )
    async def context(self, info: InfoT) -> list[ChatMessage]:
        player = await require_player(info)
        around = await services_of(info).moderation.context(player, self.report)
        return [ChatMessage.of(m) for m in around]

    @classmethod
    def of(cls, report: model.Report) -> Report:
        """The GraphQL report."""
        return cls(
            id=strawberry.ID(report.id),
            reporter=player_type(report.reporter),
            reported=player_type(report.reported),
            reason=report.reason,
            note=report.note,
            message=ChatMessage.of(report.message) if report.message is not None else None,
            table_id=strawberry.ID(report.table_id) if report.table_id else None,
            created_at=iso_instant(report.created_at),
            status=report.status,
            resolved_by=_player(report.resolved_by),
            resolved_at=_instant(report.resolved_at),
            report=report,
        )


@strawberry.type
class ReportEdge:
    cursor: str
    node: Report


@strawberry.type
class ReportConnection:
    edges: list[ReportEdge]
    page_info: PageInfo

    @classmethod
    def of(cls, page: Page[model.Report]) -> ReportConnection:
        """The GraphQL page."""
        edges = [ReportEdge(cursor=cursor, node=Report.of(r)) for cursor, r in page.edges]
        end = page.edges[-1][0] if page.edges else None
        return cls(edges=edges, page_info=PageInfo(has_next_page=page.has_next, end_cursor=end))


@strawberry.type
class Sanction:
    id: strawberry.ID
    player: Player
    kind: SanctionKind
    reason: str
    by: Player | None = strawberry.field(description="null: the operator (spades admin)")
    created_at: str
    ends_at: str | None = strawberry.field(description="null: until lifted")
    lifted_at: str | None
    lifted_by: Player | None = strawberry.field(
        description="who lifted it (null when not lifted, or lifted by the operator)"
    )

    @classmethod
    def of(cls, sanction: model.Sanction) -> Sanction:
        """The GraphQL sanction."""
        return cls(
            id=strawberry.ID(sanction.id),
            player=player_type(sanction.player),
            kind=sanction.kind,
            reason=sanction.reason,
            by=_player(sanction.by),
            created_at=iso_instant(sanction.created_at),
            ends_at=_instant(sanction.ends_at),
            lifted_at=_instant(sanction.lifted_at),
            lifted_by=_player(sanction.lifted_by),
        )


@strawberry.type(description="why the caller may not chat, and until when")
class Mute:
    reason: str
    ends_at: str

    @classmethod
    def of(cls, mute: model.Mute) -> Mute:
        """The GraphQL mute."""
        return cls(reason=mute.reason, ends_at=iso_instant(mute.ends_at))


def _player(player: AuthPlayer | None) -> Player | None:
    return player_type(player) if player is not None else None


def _instant(epoch: float | None) -> str | None:
    return iso_instant(epoch) if epoch is not None else None
