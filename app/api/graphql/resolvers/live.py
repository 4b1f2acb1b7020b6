"""Live tables (docs/api.md): server time, presence, reclaiming a seat."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator

import strawberry
from strawberry.types import Info

from app.api.graphql.context import Context, require_viewer, services_of, subscription_slot
from app.api.graphql.errors import translate_errors
from app.api.graphql.game_view import iso_instant, seat_type
from app.api.graphql.table_types import Table
from app.api.graphql.types import Seat
from app.api.metrics import SUBSCRIPTIONS
from app.services.live.presence import SeatPresence as ServicePresence

InfoT = Info[Context, None]


@strawberry.type
class SeatPresence:
    id: strawberry.ID = strawberry.field(
        description="<tableId>:<seat>, as the seat's SeatState (one entry per seat)"
    )
    seat: Seat
    player_id: strawberry.ID | None = strawberry.field(description="null for an empty seat")
    connected: bool = strawberry.field(description="bots always; empty seats never")
    changed_at: str = strawberry.field(description="ISO-8601 UTC instant of the last change")

    @classmethod
    def of(cls, table_id: str, entry: ServicePresence) -> SeatPresence:
        """The GraphQL presence of one seat of the table."""
        seat = seat_type(entry.seat)
        assert seat is not None
        return cls(
            id=strawberry.ID(f"{table_id}:{entry.seat.name}"),
            seat=seat,
            player_id=strawberry.ID(entry.player_id) if entry.player_id is not None else None,
            connected=entry.connected,
            changed_at=iso_instant(entry.changed_at),
        )


@strawberry.type
class LiveQuery:
    @strawberry.field(description="ISO-8601 UTC, for clients to correct their clock")
    @translate_errors
    async def server_time(self, info: InfoT) -> str:
        await require_viewer(info)
        return iso_instant(time.time())

    @strawberry.field(description="always 4, NORTH..WEST")
    @translate_errors
    async def presence(self, info: InfoT, table_id: strawberry.ID) -> list[SeatPresence]:
        viewer = await require_viewer(info)
        entries = await services_of(info).streams.seat_presence(viewer, str(table_id))
        return [SeatPresence.of(str(table_id), e) for e in entries]


@strawberry.type
class LiveMutation:
    @strawberry.mutation(description="the away player takes their seat back from the bot")
    @translate_errors
    async def reclaim_seat(self, info: InfoT, table_id: strawberry.ID) -> Table:
        viewer = await require_viewer(info)
        table = await services_of(info).tables.reclaim(viewer, str(table_id))
        return Table.of(table, viewer)


@strawberry.type
class LiveSubscription:
    @strawberry.subscription(description="first the 4 current entries, then each change")
    @translate_errors
    async def presence_updates(
        self, info: InfoT, table_id: strawberry.ID
    ) -> AsyncGenerator[SeatPresence, None]:
        viewer = await require_viewer(info)
        stream = services_of(info).streams.presence_updates(viewer, str(table_id))
        with subscription_slot(info), SUBSCRIPTIONS.labels("presence").track_inprogress():
            async for entry in stream:
                yield SeatPresence.of(str(table_id), entry)
