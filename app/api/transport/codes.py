"""The `extensions.code` of request errors no check coded (parse and validation errors
get theirs in app/api/operations.py, on every transport)."""

from __future__ import annotations

from graphql import GraphQLError

from app.api.transport.refusals import RefusalCode, tag


def tag_request_error(error: GraphQLError) -> None:
    """An error of the request as a whole that no check coded (variables that do not fit
    their types: a wrong enum value, a missing required variable) is, as docs/api.md says,
    GRAPHQL_VALIDATION_FAILED. Field errors have a path and keep their own codes."""
    if error.path is None and (
        error.original_error is None or isinstance(error.original_error, GraphQLError)
    ):
        tag(error, RefusalCode.GRAPHQL_VALIDATION_FAILED)
