"""Refusals before execution, answered as GraphQL responses with `extensions.code` and the
HTTP status the GraphQL-over-HTTP spec asks for (never plain text)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from enum import StrEnum

from graphql import GraphQLError, GraphQLSyntaxError
from starlette.responses import Response

JSON = "application/json"
GRAPHQL_RESPONSE_JSON = "application/graphql-response+json"


class RefusalCode(StrEnum):
    """The `extensions.code` of a request refused before (or instead of) execution."""

    GRAPHQL_PARSE_FAILED = "GRAPHQL_PARSE_FAILED"
    GRAPHQL_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
    BAD_REQUEST = "BAD_REQUEST"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    BATCH_TOO_LARGE = "BATCH_TOO_LARGE"
    PERSISTED_QUERY_NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
    OPERATION_NOT_ALLOWED = "OPERATION_NOT_ALLOWED"
    QUERY_TOO_COMPLEX = "QUERY_TOO_COMPLEX"


# Refusals of a body the server could not take as a GraphQL request at all: the same
# status whatever the Accept. The others are GraphQL request errors: 200 under
# application/json, 400 under application/graphql-response+json (the spec's rule).
FIXED_STATUS: dict[RefusalCode, int] = {
    RefusalCode.BAD_REQUEST: 400,
    RefusalCode.PAYLOAD_TOO_LARGE: 413,
    RefusalCode.BATCH_TOO_LARGE: 400,
}

# The message Apollo's PersistedQueryLink also recognises (besides the code).
PERSISTED_QUERY_NOT_FOUND_MESSAGE = "PersistedQueryNotFound"


class Refusal(Exception):
    """A request refused before execution. `status` overrides the default for its code
    (405 for a mutation sent by GET, 415 for an unsupported content type)."""

    def __init__(self, code: RefusalCode, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def error(self) -> GraphQLError:
        """The refusal as a GraphQL error."""
        return GraphQLError(self.message, extensions={"code": self.code.value})

    def http_status(self, media_type: str) -> int:
        """The status to answer under `media_type`."""
        if self.status is not None:
            return self.status
        if self.code in FIXED_STATUS:
            return FIXED_STATUS[self.code]
        return 400 if media_type == GRAPHQL_RESPONSE_JSON else 200


# Clients send one Accept again and again (every move): parsed once per distinct text.
@functools.lru_cache(maxsize=256)
def response_media_type(accept: str | None) -> str:
    """The media type to answer with, by the request's Accept: the spec's
    `application/graphql-response+json` when the client prefers it, else
    `application/json` (also for a missing or unsatisfiable Accept, as the spec allows)."""
    best, best_q = JSON, -1.0
    for part in (accept or "").split(","):
        fields = [f.strip() for f in part.split(";")]
        kind = fields[0].lower()
        if kind not in (JSON, GRAPHQL_RESPONSE_JSON):
            continue
        q = 1.0
        for param in fields[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > best_q or (q == best_q and kind == GRAPHQL_RESPONSE_JSON):
            best, best_q = kind, q
    return best if best_q > 0 else JSON


def graphql_json_response(
    body: object, status: int, media_type: str, headers: Mapping[str, str] | None = None
) -> Response:
    """A GraphQL response body, UTF-8 JSON under `media_type`."""
    return Response(
        json.dumps(body, separators=(",", ":")),
        status_code=status,
        media_type=f"{media_type}; charset=utf-8",
        headers=dict(headers or {}),
    )


def refusal_response(refusal: Refusal, media_type: str) -> Response:
    """The answer to a refused request: `{"errors": [...]}` with no `data` entry."""
    return graphql_json_response(
        {"errors": [refusal.error().formatted]}, refusal.http_status(media_type), media_type
    )


# ------------------------------------------------------------ codes of graphql-core errors

# The token and nesting limits are enforced by the parser: their errors are syntax errors
# by type, told apart by their messages.
PARSER_LIMIT_MARKS = ("tokens. Parsing aborted", "nested too deeply")


def parse_error_code(error: GraphQLError) -> RefusalCode:
    """The code of an error raised while parsing a document."""
    if any(mark in error.message for mark in PARSER_LIMIT_MARKS):
        return RefusalCode.QUERY_TOO_COMPLEX
    if isinstance(error, GraphQLSyntaxError) or error.message.startswith("Syntax Error"):
        return RefusalCode.GRAPHQL_PARSE_FAILED
    return RefusalCode.GRAPHQL_VALIDATION_FAILED


def tag(error: GraphQLError, code: RefusalCode) -> None:
    """Give `error` a code unless it already has one (the limit rules set their own)."""
    if error.extensions is None:
        error.extensions = {}
    error.extensions.setdefault("code", code.value)


def is_request_error(response: Mapping[str, object]) -> bool:
    """A formatted result that failed before execution (parse, validation, variables):
    no data and no error with a path. Such a response carries no `data` entry."""
    if response.get("data") is not None:
        return False
    errors = response.get("errors")
    if not isinstance(errors, list) or not errors:
        return False
    return all(isinstance(e, dict) and e.get("path") is None for e in errors)
