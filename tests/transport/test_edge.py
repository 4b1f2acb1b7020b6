"""A POST's edge layer answers exactly as the three middlewares it replaces did,
`SecurityHeaders(BodyLimit(CORSMiddleware(app)))`: the same messages, headers in the
same order, for arbitrary CORS settings, origins, declared and streamed bodies and
answers (a body over the limit refused with 413, without CORS headers)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Message, Receive, Scope, Send

from app.api.transport.edge import PostEdge
from app.api.transport.headers import SecurityHeaders
from app.api.transport.http import BodyLimit

MAX_BYTES = 64
ALLOWED = "https://spades.example"


@dataclass(frozen=True)
class Answer:
    """What the wrapped app answers: its headers, after reading the whole body."""

    headers: tuple[tuple[bytes, bytes], ...]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": list(self.headers)})
        await send({"type": "http.response.body", "body": b"{}"})


@dataclass(frozen=True)
class Request:
    headers: tuple[tuple[bytes, bytes], ...]
    chunks: tuple[bytes, ...]

    def scope(self) -> dict[str, Any]:
        return {"type": "http", "method": "POST", "path": "/graphql", "headers": list(self.headers)}

    def receive(self) -> Receive:
        pending = list(self.chunks) or [b""]

        async def receive() -> Message:
            body = pending.pop(0)
            return {"type": "http.request", "body": body, "more_body": bool(pending)}

        return receive


def sent_by(app: Any, request: Request) -> list[Message]:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(request.scope(), request.receive(), send))
    return sent


ORIGINS = st.one_of(
    st.none(), st.sampled_from([ALLOWED, "https://other.example", "null", "https://x.test"])
)
LENGTHS = st.one_of(st.none(), st.sampled_from([b"0", b"10", b"64", b"65", b"900", b"ten", b""]))
RESPONSE_NAMES = st.sampled_from(
    [
        b"vary",
        b"Vary",
        b"access-control-allow-origin",
        b"access-control-allow-credentials",
        b"content-type",
        b"x-frame-options",
    ]
)
RESPONSE_VALUES = st.sampled_from([b"Accept", b"*", b"true", b"application/json", b"text/html"])


@st.composite
def requests(draw: st.DrawFn) -> Request:
    headers: list[tuple[bytes, bytes]] = [(b"host", b"spades.example")]
    origin = draw(ORIGINS)
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    length = draw(LENGTHS)
    if length is not None:
        headers.append((b"content-length", length))
    headers.append((b"accept", draw(st.sampled_from([b"*/*", b"application/json", b"text/html"]))))
    chunks = draw(st.lists(st.integers(0, 50), max_size=4))
    return Request(tuple(headers), tuple(b"x" * n for n in chunks))


@st.composite
def cors_settings(draw: st.DrawFn) -> dict[str, Any]:
    origins = draw(st.sampled_from([[ALLOWED], ["*"], [], [ALLOWED, "https://x.test"]]))
    return {
        "allow_origins": origins,
        "allow_methods": ["GET", "POST", "OPTIONS"],
        "allow_credentials": draw(st.booleans()),
        "allow_origin_regex": draw(st.sampled_from([None, r"https://.*\.test"])),
        "expose_headers": draw(st.sampled_from([(), ("x-request-id",)])),
    }


@settings(max_examples=300, deadline=None)
@given(
    cors_settings(),
    requests(),
    st.lists(st.tuples(RESPONSE_NAMES, RESPONSE_VALUES), max_size=4),
)
def test_the_edge_answers_as_the_three_middlewares_did(
    cors: dict[str, Any], request: Request, answer_headers: list[tuple[bytes, bytes]]
) -> None:
    app = Answer(tuple(answer_headers))
    stacked = SecurityHeaders(BodyLimit(CORSMiddleware(app, **cors), max_bytes=MAX_BYTES))
    edge = PostEdge(app, MAX_BYTES, CORSMiddleware(app, **cors))
    assert sent_by(edge, request) == sent_by(stacked, request)


def test_an_allowed_origin_is_mirrored_and_a_streamed_excess_refused() -> None:
    app = Answer(((b"content-type", b"application/json"),))
    edge = PostEdge(app, MAX_BYTES, CORSMiddleware(app, allow_origins=[ALLOWED]))
    answered = sent_by(edge, Request(((b"origin", ALLOWED.encode()),), (b"{}",)))
    assert (b"access-control-allow-origin", ALLOWED.encode()) in answered[0]["headers"]
    refused = sent_by(edge, Request(((b"origin", ALLOWED.encode()),), (b"x" * 40, b"x" * 40)))
    assert refused[0]["status"] == 413
    assert all(not name.startswith(b"access-control") for name, _ in refused[0]["headers"])
