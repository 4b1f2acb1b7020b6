"""The security headers are added on the raw header list exactly as starlette's
MutableHeaders added them: the same names, values and order, and a header the app set
itself wins (names compared as given: ASGI names are lowercase)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from starlette.datastructures import MutableHeaders

from app.api.transport.headers import (
    CONTENT_SECURITY_POLICY,
    EVERY_RESPONSE,
    HTML_HEADERS,
    add_security_headers,
    connect_sources,
)

SCOPE = {"type": "http", "headers": [(b"host", b"spades.example:8000")]}


def by_mutable_headers(message: dict[str, Any], scope: dict[str, Any]) -> None:
    """What the middleware did before: starlette's MutableHeaders on the message."""
    headers = MutableHeaders(scope=message)
    extra = dict(EVERY_RESPONSE)
    if headers.get("content-type", "").startswith("text/html"):
        extra.update(HTML_HEADERS)
        extra["content-security-policy"] = CONTENT_SECURITY_POLICY.replace(
            "connect-src 'self'", "connect-src 'self'" + connect_sources(scope)
        )
    for name, value in extra.items():
        if name not in headers:
            headers[name] = value


NAMES = st.sampled_from(
    [
        b"content-type",
        b"Content-Type",
        b"content-length",
        b"x-frame-options",
        b"X-Content-Type-Options",
        b"referrer-policy",
        b"content-security-policy",
        b"x-other",
    ]
)
VALUES = st.sampled_from([b"text/html; charset=utf-8", b"application/json", b"DENY", b"12", b""])


@given(st.lists(st.tuples(NAMES, VALUES), max_size=6))
def test_the_raw_list_gets_what_mutable_headers_gave(headers: list[tuple[bytes, bytes]]) -> None:
    fast = {"type": "http.response.start", "status": 200, "headers": list(headers)}
    slow = {"type": "http.response.start", "status": 200, "headers": list(headers)}
    add_security_headers(fast, SCOPE)
    by_mutable_headers(slow, SCOPE)
    assert list(fast["headers"]) == list(slow["headers"])


def test_an_html_page_gets_the_policy_and_a_json_answer_does_not() -> None:
    page = {"type": "http.response.start", "headers": [(b"content-type", b"text/html")]}
    add_security_headers(page, SCOPE)
    names = [name for name, _ in page["headers"]]
    assert b"content-security-policy" in names and b"x-frame-options" in names
    answer = {"type": "http.response.start", "headers": [(b"content-type", b"application/json")]}
    add_security_headers(answer, SCOPE)
    names = [name for name, _ in answer["headers"]]
    assert b"content-security-policy" not in names and b"x-content-type-options" in names
