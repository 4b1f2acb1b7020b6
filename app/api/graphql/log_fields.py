"""What a log line says of the GraphQL request it belongs to: its request id (the
client's `X-Request-ID` when it sent a sane one, else one made here), the signed-in
player, the operation and the table it is about (its root field's `tableId`, or
`table(id:)`).

Nothing is computed unless a line is logged: a request only attaches itself
(`RequestLog`). The operation is attached by the schema extension when it runs one
(`attach_operation_of`); a POST the fast path answers runs no extension, so its
operation is read, at the first line logged, from the body it was sent (documents are
located once per text). The body's variables are only looked up for the table id:
nothing else of them (passwords) is ever kept or logged.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    GraphQLError,
    OperationDefinitionNode,
    StringValueNode,
    VariableNode,
    parse,
)
from starlette.requests import Request
from starlette.websockets import WebSocket

from app.api.graphql.context import Context
from app.logs import attach_operation
from app.logs import attach_request as attach_fields

REQUEST_ID_HEADER = "x-request-id"
# A client's request id is kept when it looks like one (no spaces, quotes or controls).
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:/+=-]{1,128}")
# Root fields whose table is their `id` argument rather than a `tableId`.
_TABLE_BY_ID = frozenset({"table"})
# Texts of POSTed documents located once each (a longer one is located every time it
# is logged about, and a bigger one not at all).
_CACHED_TEXT = 8192
_LOCATED_TEXT = 65536
_MAX_TOKENS = 5000


@dataclass(frozen=True, slots=True)
class Located:
    """An operation's log name and where its table id comes from: a variable's name, or
    the literal in the document."""

    operation: str | None
    table_variable: str | None = None
    table_literal: str | None = None

    def table_id(self, variables: Mapping[str, Any] | None) -> str | None:
        """The table id, given the operation's variables."""
        if self.table_literal is not None:
            return self.table_literal
        if self.table_variable is None or not variables:
            return None
        value = variables.get(self.table_variable)
        return value if isinstance(value, str) else None


def locate(document: DocumentNode, operation_name: str | None) -> Located | None:
    """The operation `operation_name` names in `document` (its only one when None)."""
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is not None:
        operations = [o for o in operations if o.name and o.name.value == operation_name]
    if len(operations) != 1:
        return None
    operation = operations[0]
    fields = [s for s in operation.selection_set.selections if isinstance(s, FieldNode)]
    name = operation.name.value if operation.name else ",".join(f.name.value for f in fields)
    for field in fields:
        wanted = "id" if field.name.value in _TABLE_BY_ID else "tableId"
        for argument in field.arguments or ():
            if argument.name.value != wanted:
                continue
            if isinstance(argument.value, VariableNode):
                return Located(name or None, table_variable=argument.value.name.value)
            if isinstance(argument.value, StringValueNode):
                return Located(name or None, table_literal=argument.value.value)
    return Located(name or None)


def _located_text(query: str, operation_name: str | None) -> Located | None:
    if len(query) > _LOCATED_TEXT:
        return None
    if len(query) > _CACHED_TEXT:
        return _locate_text(query, operation_name)
    return _cached_location(query, operation_name)


def _locate_text(query: str, operation_name: str | None) -> Located | None:
    try:
        return locate(parse(query, max_tokens=_MAX_TOKENS), operation_name)
    except GraphQLError:
        return None


_cached_location = functools.lru_cache(maxsize=256)(_locate_text)


def attach_operation_of(
    document: DocumentNode | None, operation_name: str | None, variables: Any
) -> None:
    """Lines logged from now on in this task name this operation and its table."""
    located = locate(document, operation_name) if document is not None else None
    if located is not None:
        attach_operation(located.operation, located.table_id(_mapping(variables)))


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


class RequestLog:
    """The log fields of one HTTP request or one WebSocket connection."""

    __slots__ = ("_body", "_context", "_headers", "_operation", "_request_id")

    def __init__(self, context: Context, request: Request | WebSocket) -> None:
        self._context = context
        self._headers = request.headers
        # The body a POST was read with (starlette keeps it): the fast path's operation.
        self._body: bytes | None = getattr(request, "_body", None)
        self._request_id: str | None = None
        self._operation: tuple[str | None, str | None] | None = None

    @property
    def request_id(self) -> str:
        """The client's request id, or one made for this request (the same every line)."""
        if self._request_id is None:
            sent = self._headers.get(REQUEST_ID_HEADER)
            sane = sent is not None and _SANE_REQUEST_ID.fullmatch(sent) is not None
            self._request_id = sent if sane and sent is not None else uuid.uuid4().hex
        return self._request_id

    def log_fields(self) -> Mapping[str, str | None]:
        """The request's fields (the operation's, when one is attached, take over)."""
        player = self._context.player
        operation, table_id = self._posted_operation()
        return {
            "request_id": self.request_id,
            "player_id": player.id if player is not None else None,
            "operation": operation,
            "table_id": table_id,
        }

    def _posted_operation(self) -> tuple[str | None, str | None]:
        if self._operation is None:
            self._operation = _operation_in(self._body)
        return self._operation


def _operation_in(body: bytes | None) -> tuple[str | None, str | None]:
    """The operation and table id of a JSON POST body of one operation."""
    if not body:
        return None, None
    try:
        sent = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(sent, dict) or not isinstance(sent.get("query"), str):
        return None, None
    name = sent.get("operationName")
    located = _located_text(sent["query"], name if isinstance(name, str) else None)
    if located is None:
        return None, None
    return located.operation, located.table_id(_mapping(sent.get("variables")))


def attach_request(context: Context, request: Request | WebSocket) -> None:
    """Lines logged from now on for this request (or connection) carry its fields."""
    attach_fields(RequestLog(context, request))
