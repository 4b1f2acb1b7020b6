"""The edge of a POST to `/graphql` (every move): security headers, the body limit and
CORS in one ASGI layer.

Stacked as three middlewares they wrapped each message of the answer three times over
(three coroutines per message) and CORS read the request's and the answer's headers
through starlette's header classes. Here one `send` does all three on the raw header
list, with starlette's CORS configuration and origin check, and adds what the three
would have added, in their order (`tests/transport/test_edge.py` compares the two for
arbitrary requests and answers)."""

from __future__ import annotations

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.transport.headers import SecurityHeaders, secure_raw_headers
from app.api.transport.http import (
    BodyTooLarge,
    LimitedReceive,
    declared_too_large,
    too_large_response,
)

_VARY = b"vary"
_ORIGIN = b"origin"
_ALLOW_ORIGIN = b"access-control-allow-origin"


def add_cors_headers(
    raw: list[tuple[bytes, bytes]], origin: str | None, cors: CORSMiddleware
) -> None:
    """What starlette's `CORSMiddleware.send` adds to a simple (not preflight) response's
    raw headers `raw`, for a request from `origin` (None: no Origin header)."""
    if origin is not None:
        for name, value in cors.simple_headers.items():
            _set(raw, name.lower().encode("latin-1"), value.encode("latin-1"))
    explicit = origin is not None and (
        cors.allow_credentials if cors.allow_all_origins else cors.is_allowed_origin(origin)
    )
    if explicit:
        assert origin is not None
        _set(raw, _ALLOW_ORIGIN, origin.encode("latin-1"))
    vary = [value for name, value in raw if name == _VARY]
    _set(raw, _VARY, b", ".join([*vary, b"Origin"]))


def _set(raw: list[tuple[bytes, bytes]], name: bytes, value: bytes) -> None:
    """starlette's `MutableHeaders.__setitem__` on a raw list: the first header of that
    name takes the value, any others go; none, it is appended."""
    found = [index for index, (key, _value) in enumerate(raw) if key == name]
    for index in reversed(found[1:]):
        del raw[index]
    if found:
        raw[found[0]] = (name, value)
    else:
        raw.append((name, value))


class PostEdge:
    """`SecurityHeaders(BodyLimit(CORSMiddleware(app)))` for POSTs: the security headers on
    every answer, a body over `max_bytes` refused with 413 (declared or streamed; the
    refusal without CORS headers, as the body limit sat outside CORS), the CORS headers
    of a simple response."""

    def __init__(self, app: ASGIApp, max_bytes: int, cors: CORSMiddleware) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.cors = cors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or ())
        if declared_too_large(headers, self.max_bytes):
            await self._refuse(headers, scope, receive, send)
            return
        origin = _origin(scope)
        cors = self.cors
        started = False

        async def edge_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                raw = list(message.get("headers") or ())
                message["headers"] = raw
                add_cors_headers(raw, origin, cors)
                secure_raw_headers(raw, scope)
            await send(message)

        try:
            await self.app(scope, LimitedReceive(receive, self.max_bytes), edge_send)
        except BodyTooLarge:
            if not started:
                await self._refuse(headers, scope, receive, send)

    async def _refuse(
        self, headers: dict[bytes, bytes], scope: Scope, receive: Receive, send: Send
    ) -> None:
        refusal = SecurityHeaders(too_large_response(headers, self.max_bytes))
        await refusal(scope, receive, send)


def _origin(scope: Scope) -> str | None:
    """The request's first Origin header, as starlette's `Headers.get` reads it."""
    for name, value in scope.get("headers") or ():
        if name == _ORIGIN:
            decoded: str = value.decode("latin-1")
            return decoded
    return None
