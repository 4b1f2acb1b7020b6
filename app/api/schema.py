"""The strawberry schema: the operations of API.md, built once with its caches and limits."""

from __future__ import annotations

from collections.abc import Iterator

import strawberry
from graphql import GraphQLError
from strawberry.extensions import MaskErrors, ParserCache, ValidationCache
from strawberry.schema.config import StrawberryConfig
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from app.settings import Settings

from .chat import ChatMutation, ChatQuery, ChatSubscription
from .core import CoreMutation, CoreQuery, CoreSubscription
from .errors import INTERNAL_MESSAGE, is_unexpected, log
from .limits import limit_extensions
from .live import LiveMutation, LiveQuery, LiveSubscription
from .metrics import MetricsExtension
from .profiles import ProfileQuery
from .rematch import RematchMutation
from .social import SocialMutation, SocialQuery, SocialSubscription
from .transport.codes import RefusalCodes, tag_request_error

Query = merge_types("Query", (CoreQuery, SocialQuery, ChatQuery, ProfileQuery, LiveQuery))
Mutation = merge_types(
    "Mutation", (CoreMutation, SocialMutation, ChatMutation, RematchMutation, LiveMutation)
)
Subscription = merge_types(
    "Subscription", (CoreSubscription, SocialSubscription, ChatSubscription, LiveSubscription)
)


class SpadesSchema(strawberry.Schema):
    """Logs only unexpected errors (with their traceback); expected ones are answers."""

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors:
            if is_unexpected(error):
                log.error("unexpected error", exc_info=error.original_error)
            else:
                tag_request_error(error)


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


def build_schema(settings: Settings | None = None) -> strawberry.Schema:
    """The server's schema with its parser/validation caches, limits, batching limit and
    error masking."""
    settings = settings or Settings()
    return SpadesSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        config=StrawberryConfig(batching_config={"max_operations": settings.max_batch}),
        extensions=[
            RefusalCodes,
            *limit_extensions(settings),
            lambda: ReportingParserCache(maxsize=1024),
            lambda: ValidationCache(maxsize=1024),
            lambda: MaskErrors(should_mask_error=is_unexpected, error_message=INTERNAL_MESSAGE),
            MetricsExtension,
        ],
    )


schema = build_schema()


def schema_text() -> str:
    """The schema in SDL, as committed in `schema.graphql`."""
    return schema.as_str() + "\n"
