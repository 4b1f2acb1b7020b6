"""Core operations of the contract: accounts, lobby, tables, game moves, live updates."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable
from functools import partial
from typing import Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from app.api.fastpath.live import LIVE_OPERATION, live_sink
from app.api.fastpath.sharing import shared_payload
from app.api.graphql.context import (
    Context,
    SubscriptionSlot,
    client_ip,
    require_player,
    require_viewer,
    services_of,
    subscription_slot,
)
from app.api.graphql.enums import GameEvent, LobbyEvent
from app.api.graphql.errors import translate_errors
from app.api.graphql.table_types import Table, message_view, viewer_game
from app.api.graphql.types import (
    AuthPayload,
    BidInput,
    BotLevel,
    CardInput,
    GameView,
    JoinPolicy,
    Player,
    Seat,
    Visibility,
    lazy_game_view,
    seat_type,
)
from app.api.metrics import FANOUT, MOVES, SUBSCRIPTIONS
from app.rules.bidding import BidKind as RBidKind
from app.rules.errors import ErrorCode, RuleError
from app.rules.moves import Move, PassCards, PlaceBid, PlayCard, RevealHand
from app.rules.record import export_record
from app.rules.seats import Seat as RSeat
from app.services.accounts.auth import Player as AuthPlayer
from app.services.lobby.service import LobbyFilter as ServiceLobbyFilter
from app.services.rate_limits import Rule
from app.services.social.model import Viewer
from app.services.tables import snapshot as model
from app.services.tables.snapshot import TableStatus

InfoT = Info[Context, None]

# A pass of more cards than this is refused anyway; do not convert a huge list.
MAX_PASS_INPUT = 3


def player_type(player: AuthPlayer) -> Player:
    """The GraphQL player."""
    return Player(id=strawberry.ID(player.id), username=player.username)


@strawberry.type
class GameUpdate:
    event: GameEvent = strawberry.field(description="what happened, e.g. BID_PLACED, CARD_PLAYED")
    seat: Seat | None = strawberry.field(description="who acted, where it applies")
    view: GameView = strawberry.field(description="the state after the change, as you see it")
    # Executions of this payload, shared by the subscribers who see the same view (None:
    # a payload of one subscriber's, not memoized).
    shared_executions: strawberry.Private[dict[Any, Any] | None] = None


def _game_update(message: model.GameMessage, viewer: Viewer) -> GameUpdate:
    return GameUpdate(
        event=message.event, seat=seat_type(message.seat), view=message_view(message, viewer)
    )


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
class CoreQuery:
    @strawberry.field
    @translate_errors
    async def me(self, info: InfoT) -> Player | None:
        return player_type(await require_player(info))

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

    @strawberry.field(description="the per-seat (or spectator) view of the caller")
    @translate_errors
    async def game(self, info: InfoT, table_id: strawberry.ID) -> GameView | None:
        viewer = await require_viewer(info)
        services = services_of(info)
        table, viewer = await services.tables.get_visible(viewer, str(table_id))
        services.streams.check_viewer(viewer, table)
        return viewer_game(table, viewer)

    @strawberry.field(description="the spades-record/1 record of a finished game")
    @translate_errors
    async def game_record(self, info: InfoT, table_id: strawberry.ID) -> JSON:
        viewer = await require_viewer(info)
        table, _ = await services_of(info).tables.get_visible(viewer, str(table_id))
        if table.game is None or table.status is not TableStatus.FINISHED:
            raise RuleError(ErrorCode.WRONG_PHASE, "the game is not over yet")
        return cast(JSON, export_record(table.game))


async def _move(
    info: InfoT,
    kind: str,
    table_id: strawberry.ID,
    build: Callable[[RSeat], Move],
    expected_version: int | None,
) -> GameView:
    player = await require_player(info)
    services = services_of(info)
    await services.limits.check(Rule.MOVE, player.id)
    version = expected_version if isinstance(expected_version, int) else None
    after = await services.games.act(player, str(table_id), build, version)
    MOVES.labels(kind).inc()
    return lazy_game_view(after, after.seat_of(player.id))


@strawberry.type
class CoreMutation:
    @strawberry.mutation
    @translate_errors
    async def sign_up(self, info: InfoT, username: str, password: str) -> AuthPayload:
        services = services_of(info)
        await services.limits.check(Rule.AUTH_IP, client_ip(info))
        token, player = await services.auth.sign_up(username, password)
        return AuthPayload(token=token, player=player_type(player))

    @strawberry.mutation
    @translate_errors
    async def sign_in(self, info: InfoT, username: str, password: str) -> AuthPayload:
        services = services_of(info)
        await services.limits.check(Rule.AUTH_IP, client_ip(info))
        await services.limits.check(Rule.SIGN_IN_USER, str(username).lower()[:40])
        token, player = await services.auth.sign_in(username, password)
        return AuthPayload(token=token, player=player_type(player))

    @strawberry.mutation(description="revoke the token of this request (its WebSockets close)")
    @translate_errors
    async def sign_out(self, info: InfoT) -> bool:
        await require_player(info)
        token = info.context.token
        return token is not None and await services_of(info).sign_out(token)

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

    @strawberry.mutation(description="see your cards, giving up blind nil")
    @translate_errors
    async def reveal_hand(
        self, info: InfoT, table_id: strawberry.ID, expected_version: int | None = strawberry.UNSET
    ) -> GameView:
        return await _move(info, "RevealHand", table_id, RevealHand, expected_version)

    @strawberry.mutation(description="expectedVersion: refuse with CONFLICT if the game moved on")
    @translate_errors
    async def place_bid(
        self,
        info: InfoT,
        table_id: strawberry.ID,
        bid: BidInput,
        expected_version: int | None = strawberry.UNSET,
    ) -> GameView:
        kind = RBidKind(bid.kind.value)
        tricks = bid.tricks if isinstance(bid.tricks, int) else None
        return await _move(
            info, "PlaceBid", table_id, lambda s: PlaceBid(s, kind, tricks), expected_version
        )

    @strawberry.mutation(description="blind nil exchange: exactly 2 cards")
    @translate_errors
    async def pass_cards(
        self,
        info: InfoT,
        table_id: strawberry.ID,
        cards: list[CardInput],
        expected_version: int | None = strawberry.UNSET,
    ) -> GameView:
        picked = tuple(c.to_rules() for c in cards[:MAX_PASS_INPUT])
        return await _move(
            info, "PassCards", table_id, lambda s: PassCards(s, picked), expected_version
        )

    @strawberry.mutation
    @translate_errors
    async def play_card(
        self,
        info: InfoT,
        table_id: strawberry.ID,
        card: CardInput,
        expected_version: int | None = strawberry.UNSET,
    ) -> GameView:
        picked = card.to_rules()
        return await _move(
            info, "PlayCard", table_id, lambda s: PlayCard(s, picked), expected_version
        )


@strawberry.type
class CoreSubscription:
    @strawberry.subscription(
        description="first a SNAPSHOT (or, with since, the missed updates), then every change"
    )
    @translate_errors
    async def game_updates(
        self, info: InfoT, table_id: strawberry.ID, since: int | None = strawberry.UNSET
    ) -> AsyncGenerator[GameUpdate, None]:
        live = LIVE_OPERATION.get()
        parked = live.unpark() if live is not None else None
        streams = services_of(info).streams
        if parked is None:
            viewer = await require_viewer(info)
            after = since if isinstance(since, int) else None
            # Over a WebSocket, live changes are written by the table's feed
            # (app/api/fastpath/live.py).
            build = partial(_game_update, viewer=viewer)
            sink = live_sink(info._raw_info, viewer.id, build, live)
            stream = streams.game_updates(viewer, str(table_id), after, sink)
            held = SubscriptionSlot(info, SUBSCRIPTIONS.labels("game"))
        else:  # the same operation run again to take on its parked stream
            viewer, held = parked.viewer, cast(SubscriptionSlot, parked.held)
            stream = streams.resume(parked.stream)
        try:
            async for message in stream:
                if message.committed_at:  # a live change, seen by every subscriber
                    FANOUT.observe(max(0.0, time.time() - message.committed_at))
                    seat = message.table.seat_of(viewer.id)
                    update = shared_payload(message, seat, _game_update, message, viewer)
                else:  # a SNAPSHOT or a replayed update: this subscriber's alone
                    update = _game_update(message, viewer)
                yield update
                # An idle subscription keeps nothing of its last update alive.
                del update, message
        finally:
            # Parked (app/services/live/followed.py): the slot stays held until the end.
            if live is None or not live.keep(held, viewer):
                held.release()

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
