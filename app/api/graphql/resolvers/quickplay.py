"""Quick play (docs/api.md): start and cancel a ticket, read the latest one and how many
search, and follow the caller's tickets (`quickPlayUpdates`, which keeps a ticket)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

import strawberry
from strawberry.types import Info

from app.api.graphql.context import (
    Context,
    require_player,
    require_viewer,
    services_of,
    subscription_slot,
)
from app.api.graphql.enums import QuickPlayStatus
from app.api.graphql.errors import translate_errors
from app.api.graphql.game_view import iso_instant
from app.api.graphql.table_types import Table
from app.api.metrics import SUBSCRIPTIONS
from app.services.quickplay.model import QuickPlayTicket as Ticket
from app.services.social.model import Viewer

InfoT = Info[Context, None]


@strawberry.type(name="QuickPlayTicket")
class QuickPlayTicket:
    ticket: strawberry.Private[Ticket]
    viewer: strawberry.Private[Viewer]
    bot_seconds: strawberry.Private[float]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.ticket.id)

    @strawberry.field
    def status(self) -> QuickPlayStatus:
        return self.ticket.status

    @strawberry.field
    def rated(self) -> bool:
        return self.ticket.rated

    @strawberry.field(description="ISO-8601 UTC")
    def started_at(self) -> str:
        return iso_instant(self.ticket.started_at)

    @strawberry.field(
        description="when bots take the seats nobody took; null for rated tickets and once ended"
    )
    def bots_at(self) -> str | None:
        at = self.ticket.bots_at(self.bot_seconds)
        return iso_instant(at) if at is not None else None

    @strawberry.field(description="the table it was matched to; null unless MATCHED")
    @translate_errors
    async def table(self, info: InfoT) -> Table | None:
        if self.ticket.table_id is None:
            return None
        table = await services_of(info).ledger.get(self.ticket.table_id)
        return Table.of(table, self.viewer) if table is not None else None

    @classmethod
    def of(cls, info: InfoT, ticket: Ticket, viewer: Viewer) -> QuickPlayTicket:
        """The GraphQL ticket of a service ticket, as its owner sees it."""
        bot_seconds = services_of(info).quickplay.timings.bot_seconds
        return cls(ticket=ticket, viewer=viewer, bot_seconds=bot_seconds)


@strawberry.input
class QuickPlayInput:
    rated: bool | None = False


@strawberry.type
class QuickPlayQuery:
    @strawberry.field(description="the caller's latest ticket; null if none")
    @translate_errors
    async def quick_play(self, info: InfoT) -> QuickPlayTicket | None:
        viewer = await require_viewer(info)
        ticket = await services_of(info).quickplay.latest(viewer.id)
        return QuickPlayTicket.of(info, ticket, viewer) if ticket is not None else None

    @strawberry.field(description="tickets SEARCHING now, on every process")
    @translate_errors
    async def quick_play_searching(self, info: InfoT) -> int:
        await require_player(info)
        return await services_of(info).quickplay.searching()


@strawberry.type
class QuickPlayMutation:
    @strawberry.mutation(
        description="ALREADY_SEATED for a player seated at a WAITING or PLAYING table; while "
        "a ticket is SEARCHING, that same ticket"
    )
    @translate_errors
    async def start_quick_play(
        self,
        info: InfoT,
        # The contract's default, `{}` (strawberry hands the resolver a QuickPlayInput).
        input: QuickPlayInput | None = {},  # type: ignore[assignment]  # noqa: B006
    ) -> QuickPlayTicket:
        viewer = await require_viewer(info)
        rated = bool(input is not None and input.rated)
        ticket = await services_of(info).quickplay.start_ticket(viewer.player, rated)
        return QuickPlayTicket.of(info, ticket, viewer)

    @strawberry.mutation(
        description="the caller's latest ticket in its final state (MATCHED if a match won "
        "the race); null if none"
    )
    @translate_errors
    async def cancel_quick_play(self, info: InfoT) -> QuickPlayTicket | None:
        viewer = await require_viewer(info)
        ticket = await services_of(info).quickplay.cancel(viewer.player)
        return QuickPlayTicket.of(info, ticket, viewer) if ticket is not None else None


@strawberry.type
class QuickPlaySubscription:
    @strawberry.subscription(
        description="the caller's latest ticket first (if any), then each change of the "
        "caller's tickets; a SEARCHING ticket is kept only while one of these is open"
    )
    @translate_errors
    async def quick_play_updates(self, info: InfoT) -> AsyncGenerator[QuickPlayTicket, None]:
        viewer = await require_viewer(info)
        stream = services_of(info).quickplay.updates(viewer.player)
        # Closed at once when the subscription ends: that ends the caller's watch here.
        async with aclosing(stream):
            with subscription_slot(info), SUBSCRIPTIONS.labels("quickplay").track_inprogress():
                async for ticket in stream:
                    yield QuickPlayTicket.of(info, ticket, viewer)
