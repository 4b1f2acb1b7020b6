"""A table's game: its view for the caller, the moves, the record of a finished game,
and the live updates of every change.

`gameUpdates` names what to follow (the service's stream) and how a change becomes the
subscriber's payload; the fast path's seam (app/api/fastpath/) decides how it is
streamed."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from app.api import fastpath
from app.api.graphql.context import (
    Context,
    SubscriptionSlot,
    require_player,
    require_viewer,
    services_of,
)
from app.api.graphql.enums import GameEvent
from app.api.graphql.errors import translate_errors
from app.api.graphql.game_view import game_view, seat_type
from app.api.graphql.table_types import message_view, viewer_game
from app.api.graphql.types import BidInput, CardInput, GameView, Seat
from app.api.metrics import MOVES, SUBSCRIPTIONS
from app.rules.bidding import BidKind as RBidKind
from app.rules.errors import ErrorCode, RuleError
from app.rules.moves import Move, PassCards, PlaceBid, PlayCard, RevealHand
from app.rules.record import export_record
from app.rules.seats import Seat as RSeat
from app.services.live.table_feeds import Sink
from app.services.rate_limits import Rule
from app.services.social.model import Viewer
from app.services.tables.snapshot import GameMessage, TableStatus

InfoT = Info[Context, None]

# A pass of more cards than this is refused anyway; do not convert a huge list.
MAX_PASS_INPUT = 3


@strawberry.type
class GameUpdate:
    event: GameEvent = strawberry.field(description="what happened, e.g. BID_PLACED, CARD_PLAYED")
    seat: Seat | None = strawberry.field(description="who acted, where it applies")
    view: GameView = strawberry.field(description="the state after the change, as you see it")


def game_update(message: GameMessage, viewer: Viewer) -> GameUpdate:
    """One change of a table's game, as one subscriber sees it."""
    return GameUpdate(
        event=message.event, seat=seat_type(message.seat), view=message_view(message, viewer)
    )


@strawberry.type
class GameQuery:
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
    return cast(GameView, fastpath.move_answer(after, after.seat_of(player.id), game_view))


@strawberry.type
class GameMutation:
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
class GameSubscription:
    @strawberry.subscription(
        description="first a SNAPSHOT (or, with since, the missed updates), then every change"
    )
    @translate_errors
    async def game_updates(
        self, info: InfoT, table_id: strawberry.ID, since: int | None = strawberry.UNSET
    ) -> AsyncGenerator[GameUpdate, None]:
        async def follow(sink: Sink | None) -> fastpath.Following:
            viewer = await require_viewer(info)
            after = since if isinstance(since, int) else None
            updates = services_of(info).streams.game_updates(viewer, str(table_id), after, sink)
            slot = SubscriptionSlot(info, SUBSCRIPTIONS.labels("game"))
            return fastpath.Following(viewer, updates, slot)

        async for update in fastpath.game_updates(info, follow, game_update):
            yield update
