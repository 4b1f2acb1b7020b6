"""The lobby and its tables: listing, creating, sitting down, bots, leaving, and the
lobby's live updates."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import strawberry
from strawberry.types import Info

from app.api.graphql.context import (
    Context,
    require_viewer,
    services_of,
    subscription_slot,
)
from app.api.graphql.enums import LobbyEvent
from app.api.graphql.errors import translate_errors
from app.api.graphql.table_types import Table
from app.api.graphql.types import BotLevel, JoinPolicy, Seat, Visibility
from app.api.metrics import SUBSCRIPTIONS
from app.services.lobby.service import LobbyFilter as ServiceLobbyFilter
from app.services.rate_limits import Rule
from app.services.tables import snapshot as model

InfoT = Info[Context, None]


@strawberry.type
class LobbyUpdate:
    event: LobbyEvent = strawberry.field(
        description="TABLE_CREATED, TABLE_UPDATED or TABLE_REMOVED"
    )
    table_id: strawberry.ID
    table: Table | None = strawberry.field(description="null for TABLE_REMOVED")


@strawberry.input
class CreateTableInput:
    name: str | None = strawberry.UNSET
    visibility: Visibility | None = Visibility.PUBLIC
    join_policy: JoinPolicy | None = strawberry.field(
        default=strawberry.UNSET,
        description="default: the most open policy the visibility allows",
    )
    spectating: bool | None = True
    turn_seconds: int | None = strawberry.field(
        default=model.DEFAULT_TURN_SECONDS,
        description="seconds a human has for each turn: 5..300, or 0 (untimed: only "
        "FRIENDS_ONLY and PRIVATE tables)",
    )
    replacement_bot: BotLevel | None = strawberry.field(
        default=BotLevel.BASIC,
        description="the level of a bot that takes an absent or leaving human's seat",
    )
    seed: int | None = strawberry.field(
        default=strawberry.UNSET,
        description="a fixed deal seed; only on servers started with SPADES_ALLOW_SEEDED_TABLES",
    )
    rated: bool | None = strawberry.field(
        default=False, description="four humans, no bots before the start; changes ratings"
    )


@strawberry.input
class LobbyFilter:
    open_seats_only: bool | None = strawberry.field(
        default=strawberry.UNSET, description="only tables still waiting with a free seat"
    )
    name_contains: str | None = strawberry.field(
        default=strawberry.UNSET, description="case-insensitive part of the table name"
    )

    def to_service(self) -> ServiceLobbyFilter:
        """The service-layer filter."""
        name = self.name_contains if isinstance(self.name_contains, str) else None
        return ServiceLobbyFilter(
            open_seats_only=self.open_seats_only is True, name_contains=(name or None)
        )


@strawberry.type
class LobbyQuery:
    @strawberry.field(description="tables the caller may see that have not finished")
    @translate_errors
    async def lobby(self, info: InfoT, filter: LobbyFilter | None = None) -> list[Table]:
        viewer = await require_viewer(info)
        wanted = filter.to_service() if filter else None
        return [Table.of(t, viewer) for t in await services_of(info).tables.lobby(viewer, wanted)]

    @strawberry.field(description="a table the caller may see (code: a join or spectator link)")
    @translate_errors
    async def table(
        self, info: InfoT, id: strawberry.ID, code: str | None = strawberry.UNSET
    ) -> Table | None:
        viewer = await require_viewer(info)
        link = code if isinstance(code, str) else None
        table, viewer = await services_of(info).tables.get_visible(viewer, str(id), link)
        return Table.of(table, viewer)


@strawberry.type
class LobbyMutation:
    @strawberry.mutation(description="the creator becomes host and sits NORTH")
    @translate_errors
    async def create_table(self, info: InfoT, input: CreateTableInput) -> Table:
        viewer = await require_viewer(info)
        await services_of(info).limits.check(Rule.CREATE_TABLE, viewer.id)
        table = await services_of(info).tables.create(
            viewer,
            name=input.name or None,
            visibility=model.Visibility((input.visibility or Visibility.PUBLIC).value),
            join_policy=(model.JoinPolicy(input.join_policy.value) if input.join_policy else None),
            spectating=input.spectating is not False,
            seed=input.seed if isinstance(input.seed, int) else None,
            rated=input.rated is True,
            turn_seconds=(
                input.turn_seconds
                if isinstance(input.turn_seconds, int)
                else model.DEFAULT_TURN_SECONDS
            ),
            replacement_bot=(input.replacement_bot or BotLevel.BASIC).to_rules(),
        )
        return Table.of(table, viewer)

    @strawberry.mutation(description="sit down (code: a join link's code); 4 seats start the game")
    @translate_errors
    async def join_table(
        self, info: InfoT, table_id: strawberry.ID, seat: Seat, code: str | None = strawberry.UNSET
    ) -> Table:
        viewer = await require_viewer(info)
        link = code if isinstance(code, str) else None
        table = await services_of(info).tables.join(viewer, str(table_id), seat.to_rules(), link)
        return Table.of(table, viewer)

    @strawberry.mutation(description="host only, before the game starts")
    @translate_errors
    async def add_bot(
        self, info: InfoT, table_id: strawberry.ID, seat: Seat, level: BotLevel = BotLevel.BASIC
    ) -> Table:
        viewer = await require_viewer(info)
        table = await services_of(info).tables.add_bot(
            viewer, str(table_id), seat.to_rules(), level.to_rules()
        )
        return Table.of(table, viewer)

    @strawberry.mutation(description="mid-game: a bot takes the seat")
    @translate_errors
    async def leave_table(self, info: InfoT, table_id: strawberry.ID) -> bool:
        viewer = await require_viewer(info)
        await services_of(info).tables.leave(viewer, str(table_id))
        return True


@strawberry.type
class LobbySubscription:
    @strawberry.subscription(description="lobby changes of tables the subscriber may see")
    @translate_errors
    async def lobby_updates(self, info: InfoT) -> AsyncGenerator[LobbyUpdate, None]:
        viewer = await require_viewer(info)
        with subscription_slot(info), SUBSCRIPTIONS.labels("lobby").track_inprogress():
            async for event, table_id, table in services_of(info).streams.lobby_updates(viewer):
                yield LobbyUpdate(
                    event=event,
                    table_id=strawberry.ID(table_id),
                    table=Table.of(table, viewer) if table is not None else None,
                )
