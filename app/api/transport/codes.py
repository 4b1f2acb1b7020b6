"""Gives the errors of parsing and validation their `extensions.code`, on every transport
(HTTP and both WebSocket protocols)."""

from __future__ import annotations

from collections.abc import Iterator

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension

from .refusals import RefusalCode, parse_error_code, tag


class RefusalCodes(SchemaExtension):
    """After parsing: GRAPHQL_PARSE_FAILED (QUERY_TOO_COMPLEX for the token limit); after
    validation: GRAPHQL_VALIDATION_FAILED unless a limit rule already said
    QUERY_TOO_COMPLEX. The errors are tagged in place, before anyone formats them."""

    def on_parse(self) -> Iterator[None]:
        yield
        for error in self.execution_context.pre_execution_errors or []:
            tag(error, parse_error_code(error))

    def on_validate(self) -> Iterator[None]:
        yield
        for error in self.execution_context.pre_execution_errors or []:
            tag(error, RefusalCode.GRAPHQL_VALIDATION_FAILED)


def tag_request_error(error: GraphQLError) -> None:
    """An error of the request as a whole that no check coded (variables that do not fit
    their types: a wrong enum value, a missing required variable) is, as API.md says,
    GRAPHQL_VALIDATION_FAILED. Field errors have a path and keep their own codes."""
    if error.path is None and (
        error.original_error is None or isinstance(error.original_error, GraphQLError)
    ):
        tag(error, RefusalCode.GRAPHQL_VALIDATION_FAILED)
