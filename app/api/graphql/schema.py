"""The strawberry schema: the operations of the contract (docs/api.md), built once with
its caches and limits."""

from __future__ import annotations

import strawberry
from graphql import GraphQLError
from strawberry.schema.config import StrawberryConfig
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from app.api import fastpath
from app.api.documents import OperationConfig
from app.api.graphql.errors import INTERNAL_MESSAGE, is_unexpected, log
from app.api.graphql.extension import operations_extension
from app.api.graphql.query_limits import limit_rules
from app.api.graphql.resolvers.accounts import AccountMutation, AccountQuery
from app.api.graphql.resolvers.chat import ChatMutation, ChatQuery, ChatSubscription
from app.api.graphql.resolvers.game import GameMutation, GameQuery, GameSubscription
from app.api.graphql.resolvers.live import LiveMutation, LiveQuery, LiveSubscription
from app.api.graphql.resolvers.lobby import LobbyMutation, LobbyQuery, LobbySubscription
from app.api.graphql.resolvers.moderation import ModerationMutation, ModerationQuery
from app.api.graphql.resolvers.profiles import ProfileQuery
from app.api.graphql.resolvers.quickplay import (
    QuickPlayMutation,
    QuickPlayQuery,
    QuickPlaySubscription,
)
from app.api.graphql.resolvers.rematch import RematchMutation
from app.api.graphql.resolvers.social import SocialMutation, SocialQuery, SocialSubscription
from app.api.transport.codes import tag_request_error
from app.settings import Settings

# Each family of operations in its own module (app/api/graphql/resolvers/), merged in the
# order of the contract.
Query = merge_types(
    "Query",
    (
        AccountQuery,
        LobbyQuery,
        GameQuery,
        SocialQuery,
        ChatQuery,
        ProfileQuery,
        LiveQuery,
        ModerationQuery,
        QuickPlayQuery,
    ),
)
Mutation = merge_types(
    "Mutation",
    (
        AccountMutation,
        LobbyMutation,
        GameMutation,
        SocialMutation,
        ChatMutation,
        RematchMutation,
        LiveMutation,
        ModerationMutation,
        QuickPlayMutation,
    ),
)
Subscription = merge_types(
    "Subscription",
    (
        GameSubscription,
        LobbySubscription,
        SocialSubscription,
        ChatSubscription,
        LiveSubscription,
        QuickPlaySubscription,
    ),
)


class SpadesSchema(strawberry.Schema):
    """Logs only unexpected errors (with their traceback); expected ones are answers."""

    # What its operations share (limits, document cache, masking): the HTTP fast path
    # (app/api/fastpath/http.py) uses the same.
    operation_config: OperationConfig

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors:
            if is_unexpected(error):
                log.error("unexpected error", exc_info=error.original_error)
            else:
                tag_request_error(error)


def operation_config(settings: Settings) -> OperationConfig:
    """The limits, caches, masking and metrics every operation of the schema shares."""
    return OperationConfig(
        max_tokens=settings.max_query_tokens,
        extra_rules=limit_rules(settings),
        should_mask=is_unexpected,
        mask_message=INTERNAL_MESSAGE,
    )


def build_schema(settings: Settings | None = None) -> SpadesSchema:
    """The server's schema with its parser/validation caches, limits, batching limit, error
    masking and metrics (one extension: app/api/operations.py)."""
    settings = settings or Settings()
    config = operation_config(settings)
    built = SpadesSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        config=StrawberryConfig(batching_config={"max_operations": settings.max_batch}),
        extensions=[operations_extension(config)],
    )
    built.operation_config = config
    fastpath.install(built._schema)
    return built


schema = build_schema()


def schema_text() -> str:
    """The schema in SDL, as committed in `schema.graphql`."""
    return schema.as_str() + "\n"
