"""The strawberry schema: queries, mutations and subscriptions of API.md."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Iterator
from typing import Any, cast

import strawberry
from graphql import GraphQLError
from strawberry.extensions import AddValidationRules, MaskErrors, ParserCache, ValidationCache
from strawberry.extensions.query_depth_limiter import create_validator
from strawberry.scalars import JSON
from strawberry.types import ExecutionContext, ExecutionResult, Info
from strawberry.types.graphql import OperationType

from app.rules.errors import ErrorCode, RuleError
from app.rules.moves import PassCards, PlaceBid, PlayCard, RevealHand
from app.rules.record import export_record
from app.rules.seats import Seat as RSeat
from app.services import model
from app.services.access import can_watch
from app.services.auth import Player as AuthPlayer
from app.services.model import GameMessage, TableSnapshot, TableStatus

from .context import Context, require_player, services_of
from .errors import INTERNAL_MESSAGE, is_unexpected, log, translate_errors
from .types import (
    AuthPayload,
    BidInput,
    CardInput,
    GameView,
    JoinPolicy,
    Player,
    Seat,
    SeatState,
    Visibility,
    game_view,
    seat_states,
    seat_type,
)

MAX_DEPTH = 12

InfoT = Info[Context, None]


def _player_type(player: AuthPlayer) -> Player:
    return Player(id=strawberry.ID(player.id), username=player.username)


@strawberry.type
class Table:
    snapshot: strawberry.Private[TableSnapshot]
    id: strawberry.ID
    name: str | None
    host: Player
    visibility: Visibility
    join_policy: JoinPolicy
    spectating: bool
    seats: list[SeatState]

    @strawberry.field(description="the game as seen by the caller")
    def game(self, info: InfoT) -> GameView:
        player = info.context.player
        return viewer_game(info, self.snapshot, player)

    @classmethod
    def of(cls, table: TableSnapshot) -> Table:
        """The GraphQL table of a snapshot."""
        return cls(
            snapshot=table,
            id=strawberry.ID(table.id),
            name=table.name,
            host=Player(id=strawberry.ID(table.host_id), username=table.host_name),
            visibility=Visibility[table.visibility.value],
            join_policy=JoinPolicy[table.join_policy.value],
            spectating=table.spectating,
            seats=seat_states(table),
        )


def viewer_game(info: InfoT, table: TableSnapshot, player: AuthPlayer | None) -> GameView:
    """The game view of `table` for `player`: its seat's view, or a spectator's."""
    seat = table.seat_of(player.id) if player is not None else None
    if seat is not None:
        return game_view(table, seat)
    watching = player is not None and can_watch(
        table, services_of(info).tables.relation(player, table)
    )
    return game_view(table, None, watching)


def message_view(message: GameMessage, player: AuthPlayer, watching: bool) -> GameView:
    """The view of one broker message for one subscriber, built once per viewer seat."""
    seat = message.table.seat_of(player.id)
    key = (seat, watching) if seat is None else seat
    view = message.views.get(key)
    if view is None:
        view = game_view(message.table, seat, watching)
        message.views[key] = view
    return cast(GameView, view)


@strawberry.type
class GameUpdate:
    event: str = strawberry.field(description="what happened, e.g. BID_PLACED, CARD_PLAYED")
    seat: Seat | None = strawberry.field(description="who acted, where it applies")
    view: GameView = strawberry.field(description="the state after the change, as you see it")


@strawberry.type
class LobbyUpdate:
    event: str = strawberry.field(description="TABLE_CREATED, TABLE_UPDATED or TABLE_REMOVED")
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
    seed: int | None = strawberry.field(
        default=strawberry.UNSET,
        description="a fixed deal seed; only on servers started with SPADES_ALLOW_SEEDED_TABLES",
    )


@strawberry.type
class Query:
    @strawberry.field
    @translate_errors
    async def me(self, info: InfoT) -> Player | None:
        return _player_type(require_player(info))

    @strawberry.field(description="tables the caller may see that have not finished")
    @translate_errors
    async def lobby(self, info: InfoT) -> list[Table]:
        player = require_player(info)
        return [Table.of(t) for t in await services_of(info).tables.lobby(player)]

    @strawberry.field
    @translate_errors
    async def table(self, info: InfoT, id: strawberry.ID) -> Table | None:
        player = require_player(info)
        return Table.of(await services_of(info).tables.get_visible(player, str(id)))

    @strawberry.field(description="the per-seat (or spectator) view of the caller")
    @translate_errors
    async def game(self, info: InfoT, table_id: strawberry.ID) -> GameView | None:
        player = require_player(info)
        services = services_of(info)
        table = await services.tables.get_visible(player, str(table_id))
        services.streams.check_viewer(player, table)
        return viewer_game(info, table, player)

    @strawberry.field(description="the spades-record/1 record of a finished game")
    @translate_errors
    async def game_record(self, info: InfoT, table_id: strawberry.ID) -> JSON:
        player = require_player(info)
        table = await services_of(info).tables.get_visible(player, str(table_id))
        if table.game is None or table.status is not TableStatus.FINISHED:
            raise RuleError(ErrorCode.WRONG_PHASE, "the game is not over yet")
        return cast(JSON, export_record(table.game))


def _seat(seat: Seat) -> RSeat:
    return RSeat[seat.name]


async def _move_view(
    info: InfoT,
    table_id: strawberry.ID,
    build: Any,
    expected_version: int | None,
) -> GameView:
    player = require_player(info)
    after = await services_of(info).games.act(player, str(table_id), build, expected_version)
    return viewer_game(info, after, player)


@strawberry.type
class Mutation:
    @strawberry.mutation
    @translate_errors
    async def sign_up(self, info: InfoT, username: str, password: str) -> AuthPayload:
        token, player = await services_of(info).auth.sign_up(username, password)
        return AuthPayload(token=token, player=_player_type(player))

    @strawberry.mutation
    @translate_errors
    async def sign_in(self, info: InfoT, username: str, password: str) -> AuthPayload:
        token, player = await services_of(info).auth.sign_in(username, password)
        return AuthPayload(token=token, player=_player_type(player))

    @strawberry.mutation(description="the creator becomes host and sits NORTH")
    @translate_errors
    async def create_table(self, info: InfoT, input: CreateTableInput) -> Table:
        player = require_player(info)
        table = await services_of(info).tables.create(
            player,
            name=input.name or None,
            visibility=model.Visibility((input.visibility or Visibility.PUBLIC).value),
            join_policy=(model.JoinPolicy(input.join_policy.value) if input.join_policy else None),
            spectating=input.spectating is not False,
            seed=input.seed if isinstance(input.seed, int) else None,
        )
        return Table.of(table)

    @strawberry.mutation(description="sit down; the game starts when 4 seats are filled")
    @translate_errors
    async def join_table(
        self, info: InfoT, table_id: strawberry.ID, seat: Seat, code: str | None = None
    ) -> Table:
        player = require_player(info)
        services = services_of(info)
        table = await services.tables.join(player, str(table_id), _seat(seat))
        services.bots.kick(table.id)
        return Table.of(table)

    @strawberry.mutation(description="host only, before the game starts")
    @translate_errors
    async def add_bot(self, info: InfoT, table_id: strawberry.ID, seat: Seat) -> Table:
        player = require_player(info)
        services = services_of(info)
        table = await services.tables.add_bot(player, str(table_id), _seat(seat))
        services.bots.kick(table.id)
        return Table.of(table)

    @strawberry.mutation(description="mid-game: a bot takes the seat")
    @translate_errors
    async def leave_table(self, info: InfoT, table_id: strawberry.ID) -> bool:
        player = require_player(info)
        services = services_of(info)
        table = await services.tables.leave(player, str(table_id))
        services.bots.kick(table.id)
        return True

    @strawberry.mutation
    @translate_errors
    async def reveal_hand(
        self, info: InfoT, table_id: strawberry.ID, expected_version: int | None = None
    ) -> GameView:
        return await _move_view(info, table_id, RevealHand, expected_version)

    @strawberry.mutation
    @translate_errors
    async def place_bid(
        self,
        info: InfoT,
        table_id: strawberry.ID,
        bid: BidInput,
        expected_version: int | None = None,
    ) -> GameView:
        def build(seat: RSeat) -> PlaceBid:
            from app.rules.bidding import BidKind as RBidKind

            tricks = bid.tricks if isinstance(bid.tricks, int) else None
            return PlaceBid(seat, RBidKind(bid.kind.value), tricks)

        return await _move_view(info, table_id, build, expected_version)

    @strawberry.mutation(description="blind nil exchange: exactly 2 cards")
    @translate_errors
    async def pass_cards(
        self,
        info: InfoT,
        table_id: strawberry.ID,
        cards: list[CardInput],
        expected_version: int | None = None,
    ) -> GameView:
        picked = tuple(c.to_rules() for c in cards[:3])
        return await _move_view(
            info, table_id, lambda seat: PassCards(seat, picked), expected_version
        )

    @strawberry.mutation
    @translate_errors
    async def play_card(
        self,
        info: InfoT,
        table_id: strawberry.ID,
        card: CardInput,
        expected_version: int | None = None,
    ) -> GameView:
        picked = card.to_rules()
        return await _move_view(
            info, table_id, lambda seat: PlayCard(seat, picked), expected_version
        )


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="first a SNAPSHOT (or, with since, the missed updates), then every change"
    )
    @translate_errors
    async def game_updates(
        self, info: InfoT, table_id: strawberry.ID, since: int | None = None
    ) -> AsyncGenerator[GameUpdate, None]:
        player = require_player(info)
        services = services_of(info)
        async for message in services.streams.game_updates(player, str(table_id), since):
            table = message.table
            watching = can_watch(table, services.tables.relation(player, table))
            yield GameUpdate(
                event=message.event,
                seat=seat_type(message.seat),
                view=message_view(message, player, watching),
            )

    @strawberry.subscription(description="lobby changes of tables the subscriber may see")
    @translate_errors
    async def lobby_updates(self, info: InfoT) -> AsyncGenerator[LobbyUpdate, None]:
        player = require_player(info)
        async for event, table in services_of(info).streams.lobby_updates(player):
            yield LobbyUpdate(
                event=event,
                table_id=strawberry.ID(table.id),
                table=None if event == "TABLE_REMOVED" else Table.of(table),
            )


class SpadesSchema(strawberry.Schema):
    """Logs only unexpected errors (with their traceback); expected ones are answers."""

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors:
            if is_unexpected(error):
                log.error("unexpected error", exc_info=error.original_error)

    async def execute(
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
        operation_extensions: dict[str, Any] | None = None,
    ) -> ExecutionResult:
        """One-shot execution (plain HTTP). A subscription cannot be answered in one shot:
        strawberry ran it as a field anyway and failed with an internal error; now it is
        refused like a mutation over GET (HTTP 400). Subscriptions go through `stream`."""
        allowed = set(
            allowed_operation_types
            if allowed_operation_types is not None
            else (OperationType.QUERY, OperationType.MUTATION)
        )
        return await super().execute(
            query,
            variable_values,
            context_value,
            root_value,
            operation_name,
            allowed - {OperationType.SUBSCRIPTION},
            operation_extensions,
        )


class ReportingParserCache(ParserCache):
    """The parser cache, minus one trap: strawberry's ParserCache parses outside the step
    that turns a syntax error into a GraphQL error, so over WebSocket a bad document
    escaped as an internal exception (logged with its traceback, the client told only
    "complete"). Here a document the cache cannot parse is left to strawberry's own parse,
    which answers the error properly."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        try:
            context.graphql_document = self.cached_parse_document(
                context.query, **context.parse_options
            )
        except Exception:  # strawberry parses it again and reports the error
            context.graphql_document = None
        yield


# Built once: a validator class made per request would defeat the validation cache.
_DEPTH_RULE = create_validator(MAX_DEPTH, None)


def build_schema() -> strawberry.Schema:
    """The server's schema with its parser/validation caches, limits and error masking."""
    return SpadesSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        extensions=[
            lambda: AddValidationRules([_DEPTH_RULE]),
            lambda: ReportingParserCache(maxsize=1024),
            lambda: ValidationCache(maxsize=1024),
            lambda: MaskErrors(should_mask_error=is_unexpected, error_message=INTERNAL_MESSAGE),
        ],
    )


schema = build_schema()


def schema_text() -> str:
    """The schema in SDL, as committed in `schema.graphql`."""
    return schema.as_str() + "\n"
