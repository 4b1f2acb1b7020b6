"""GraphQL over HTTP as its spec says, on strawberry's ASGI view: every refusal a GraphQL
response with its code and status, `application/graphql-response+json` by Accept,
persisted queries and trusted documents, a body size limit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from cross_web import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.exceptions import MissingQueryError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.parse_content_type import parse_content_type
from strawberry.http.types import HTTPMethod
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from app.api.transport.persisted import Documents, Resolved
from app.api.transport.refusals import (
    GRAPHQL_RESPONSE_JSON,
    JSON,
    Refusal,
    RefusalCode,
    graphql_json_response,
    is_request_error,
    refusal_response,
    response_media_type,
)

# What each member of a JSON request body may be, besides null.
BODY_MEMBERS: dict[str, type] = {
    "query": str,
    "operationName": str,
    "variables": dict,
    "extensions": dict,
    "documentId": str,
}


def check_body_shape(data: object) -> None:
    """A GraphQL-over-HTTP body is an object, or (batching) an array of objects, whose
    members have the right types; anything else is the client's error (400)."""
    for item in data if isinstance(data, list) else [data]:
        if not isinstance(item, dict):
            raise Refusal(
                RefusalCode.BAD_REQUEST, "the body must be a JSON object or an array of objects"
            )
        for name, kind in BODY_MEMBERS.items():
            value = item.get(name)
            if value is not None and not isinstance(value, kind):
                expected = "a string" if kind is str else "an object"
                raise Refusal(RefusalCode.BAD_REQUEST, f"`{name}` must be {expected} or null")


@dataclass
class RequestData(GraphQLRequestData):
    """One operation of a request, with the document it resolved to (or its refusal, for
    a member of a batch: the others still run)."""

    resolved: Resolved | None = None
    refusal: Refusal | None = None
    in_batch: bool = False


def refusal_of(exc: HTTPException) -> Refusal:
    """Strawberry's own HTTP errors (bad JSON, bad variables in a GET...) as refusals."""
    if exc.status_code == 413:
        return Refusal(RefusalCode.PAYLOAD_TOO_LARGE, exc.reason)
    return Refusal(RefusalCode.BAD_REQUEST, exc.reason, status=exc.status_code)


class Shortcut(Protocol):
    """A faster way to answer some requests (the fast path's: app/api/fastpath/http.py)."""

    async def answer(self, request: Request) -> Response | None:
        """The response to `request`, or None (nothing ran) for the normal path."""


class HTTPTransport:
    """The HTTP half of the GraphQL view (mixed into SpadesGraphQL before strawberry's
    view): parsing, refusals, media types, persisted documents."""

    documents: Documents
    max_batch: int
    shortcut: Shortcut | None

    async def handle_http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one HTTP request (by the shortcut if it can); refusals as GraphQL
        responses."""
        request = Request(scope=scope, receive=receive)
        media_type = response_media_type(request.headers.get("accept"))
        try:
            shortcut = self.shortcut
            response = await shortcut.answer(request) if shortcut is not None else None
            if response is None:
                response = await self.run(request)  # type: ignore[attr-defined]
        except Refusal as refusal:
            response = refusal_response(refusal, media_type)
        except HTTPException as exc:
            response = refusal_response(refusal_of(exc), media_type)
        await response(scope, receive, send)

    def should_render_graphql_ide(self, request: Any) -> bool:
        """GraphiQL for a browser's GET of /graphql with no operation in it."""
        params = request.query_params
        if any(params.get(name) is not None for name in ("extensions", "documentId")):
            return False
        return super().should_render_graphql_ide(request)  # type: ignore[misc,no-any-return]

    async def get_sub_response(self, request: Any) -> Response:
        """The response headers and status being built: it carries the negotiated type."""
        sub_response: Response = await super().get_sub_response(request)  # type: ignore[misc]
        sub_response.media_type = response_media_type(request.headers.get("accept"))
        return sub_response

    async def parse_http_body(self, request: Any) -> GraphQLRequestData | list[GraphQLRequestData]:
        """The operations of a request, each with its resolved document."""
        content_type, _ = parse_content_type(request.content_type or "")
        if request.method == "GET":
            data: Any = self.parse_query_params(request.query_params)  # type: ignore[attr-defined]
        elif content_type in ("application/json", GRAPHQL_RESPONSE_JSON) or content_type.endswith(
            "+json"
        ):
            data = self.parse_json(await request.get_body())  # type: ignore[attr-defined]
        else:
            raise Refusal(
                RefusalCode.BAD_REQUEST,
                "send the operation as application/json (POST) or in the URL (GET)",
                status=415,
            )
        check_body_shape(data)
        if isinstance(data, list):
            if not data:
                raise Refusal(RefusalCode.BAD_REQUEST, "an empty batch has no operation")
            if len(data) > self.max_batch:
                raise Refusal(
                    RefusalCode.BATCH_TOO_LARGE,
                    f"at most {self.max_batch} operations in one batch (got {len(data)})",
                )
            return [self._operation(item, in_batch=True) for item in data]
        return self._operation(data, in_batch=False)

    def _operation(self, item: dict[str, Any], in_batch: bool) -> RequestData:
        operation = RequestData(
            query=item.get("query"),
            variables=item.get("variables"),
            operation_name=item.get("operationName"),
            extensions=item.get("extensions"),
            in_batch=in_batch,
        )
        try:
            operation.resolved = self.documents.resolve(
                operation.query, operation.extensions, item.get("documentId")
            )
            operation.query = operation.resolved.query
        except Refusal as refusal:
            if not in_batch:
                raise
            operation.refusal = refusal
        return operation

    async def execute_single(
        self,
        request: Any,
        request_adapter: Any,
        sub_response: Any,
        context: Any,
        root_value: Any,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """One operation over plain HTTP: queries (GET or POST) and mutations (POST)."""
        try:
            return await self._execute_single(
                request_adapter.method, context, root_value, request_data
            )
        except Refusal as refusal:
            if not (isinstance(request_data, RequestData) and request_data.in_batch):
                raise
            return ExecutionResult(data=None, errors=[refusal.error()])

    async def _execute_single(
        self, method: HTTPMethod, context: Any, root_value: Any, request_data: GraphQLRequestData
    ) -> ExecutionResult:
        if isinstance(request_data, RequestData) and request_data.refusal is not None:
            raise request_data.refusal
        # Streamed transports do not come this way: a subscription here would run as if it
        # were a query and fail with an internal error.
        allowed = OperationType.from_http(method) - {OperationType.SUBSCRIPTION}
        try:
            result: ExecutionResult = await self.schema.execute(  # type: ignore[attr-defined]
                request_data.query,
                root_value=root_value,
                variable_values=request_data.variables,
                context_value=context,
                operation_name=request_data.operation_name,
                allowed_operation_types=allowed,
                operation_extensions=request_data.extensions,
            )
        except InvalidOperationTypeError as exc:
            if exc.operation_type is OperationType.SUBSCRIPTION:
                raise Refusal(
                    RefusalCode.BAD_REQUEST, "subscriptions are served over WebSocket only"
                ) from exc
            # A mutation sent by GET: 405, as the spec says.
            raise Refusal(
                RefusalCode.BAD_REQUEST, exc.as_http_error_reason(method), status=405
            ) from exc
        except CannotGetOperationTypeError as exc:
            raise Refusal(RefusalCode.BAD_REQUEST, exc.as_http_error_reason()) from exc
        except MissingQueryError as exc:
            raise Refusal(RefusalCode.BAD_REQUEST, "No GraphQL query found in the request") from exc
        failed_early = (
            result.data is None
            and bool(result.errors)
            and not any(e.path for e in result.errors or [])
        )
        if isinstance(request_data, RequestData) and request_data.resolved and not failed_early:
            self.documents.remember(request_data.resolved)
        return result

    def create_response(
        self,
        response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse],
        sub_response: Response,
    ) -> Response:
        """The JSON answer: a request error has no `data` entry and, under
        application/graphql-response+json, status 400."""
        media_type = sub_response.media_type or JSON
        status = 200
        for item in response_data if isinstance(response_data, list) else [response_data]:
            if is_request_error(item):
                item.pop("data", None)
                if not isinstance(response_data, list) and media_type == GRAPHQL_RESPONSE_JSON:
                    status = 400
        response = graphql_json_response(response_data, status, media_type)
        for name, value in sub_response.headers.items():
            if name.lower() not in ("content-type", "content-length"):
                response.headers.append(name, value)
        if sub_response.background:
            response.background = sub_response.background
        if sub_response.status_code:
            response.status_code = sub_response.status_code
        return response


class BodyLimit:
    """Refuses HTTP request bodies over `max_bytes` with 413 PAYLOAD_TOO_LARGE (declared or
    streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if declared_too_large(headers, self.max_bytes):
            await too_large_response(headers, self.max_bytes)(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, LimitedReceive(receive, self.max_bytes), tracking_send)
        except BodyTooLarge:
            if not started:
                await too_large_response(headers, self.max_bytes)(scope, receive, send)


class LimitedReceive:
    """A request's `receive` that raises BodyTooLarge once its body passed `max_bytes`."""

    __slots__ = ("_max_bytes", "_receive", "_received")

    def __init__(self, receive: Receive, max_bytes: int) -> None:
        self._receive = receive
        self._max_bytes = max_bytes
        self._received = 0

    async def __call__(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self._received += len(message.get("body", b""))
            if self._received > self._max_bytes:
                raise BodyTooLarge()
        return message


def declared_too_large(headers: dict[bytes, bytes], max_bytes: int) -> bool:
    """Whether the request's Content-Length (raw `headers`) is malformed or over
    `max_bytes`."""
    declared = headers.get(b"content-length")
    return declared is not None and (not declared.isdigit() or int(declared) > max_bytes)


def too_large_response(headers: dict[bytes, bytes], max_bytes: int) -> Response:
    """The 413 refusal of a body over `max_bytes`, in the media type the request's
    Accept asks for (read only for a refusal)."""
    media_type = response_media_type(headers.get(b"accept", b"").decode("latin-1"))
    refusal = Refusal(RefusalCode.PAYLOAD_TOO_LARGE, f"request body over {max_bytes} bytes")
    return refusal_response(refusal, media_type)


class BodyTooLarge(Exception):
    """A streamed request body passed the limit."""
