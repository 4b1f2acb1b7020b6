"""GraphiQL in Chromium with every non-loopback request blocked runs a query and a
subscription; a page on another origin calls the API with the headers common clients and
tracing libraries add."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode, urlparse

import httpx
import pytest

from tests.support.server import LiveServer, free_port

from .clients import CHROMIUM_ARGS, chromium_path

LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}


def call(server: LiveServer, query: str, token: str | None = None, **variables: Any) -> Any:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    body = {"query": query, "variables": variables}
    answer = httpx.post(server.http_url, json=body, headers=headers, timeout=10).json()
    assert "errors" not in answer, answer
    return answer["data"]


def bot_table(server: LiveServer) -> tuple[str, str]:
    """A new player at NORTH of a table with three bots (bidding); (token, table id)."""
    name = f"giql{time.monotonic_ns() % 10**9}"
    token = call(
        server,
        'mutation($u: String!) { signUp(username: $u, password: "password123") { token } }',
        u=name,
    )["signUp"]["token"]
    table = call(server, "mutation { createTable(input: {}) { id } }", token)["createTable"]["id"]
    for seat in ("EAST", "SOUTH", "WEST"):
        call(
            server,
            "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s) { id } }",
            token,
            t=table,
            s=seat,
        )
    return token, table


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def response_text(page: Any) -> str:
    return str(page.locator(".graphiql-response").inner_text())


def wait_for_response(page: Any, needle: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = response_text(page)
        if needle in text:
            return text
        page.wait_for_timeout(100)
    raise AssertionError(
        f"{needle!r} never appeared in GraphiQL's response: {response_text(page)!r}"
    )


def shown_update(page: Any) -> dict[str, Any]:
    """The gameUpdates payload GraphiQL shows now."""
    text = response_text(page).replace("\xa0", " ")
    return dict(json.loads(text)["data"]["gameUpdates"])


def test_graphiql_runs_a_query_and_a_subscription_with_nothing_but_the_server(
    server: LiveServer, browser: Any
) -> None:
    token, table = bot_table(server)
    context = browser.new_context()
    blocked: list[str] = []
    violations: list[str] = []

    def only_loopback(route: Any) -> None:
        host = urlparse(route.request.url).hostname or ""
        if host in LOOPBACK or route.request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_loopback)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            violations.append(message.text)
            if "Content Security Policy" in message.text or "Refused to" in message.text
            else None
        ),
    )

    query = "query Hello { __typename }"
    answer = page.goto(f"{server.http_url}?{urlencode({'q': query})}")
    assert answer is not None and answer.status == 200
    csp = answer.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"
    page.locator(".graphiql-execute-button").click()
    assert '"Query"' in wait_for_response(page, "__typename")

    subscription = (
        f'subscription Watch {{ gameUpdates(tableId: "{table}") {{ event view {{ version }} }} }}'
    )
    headers = json.dumps({"Authorization": f"Bearer {token}"})
    page.goto(f"{server.http_url}?{urlencode({'q': subscription, 'headers': headers})}")
    page.locator(".graphiql-execute-button").click()
    wait_for_response(page, "SNAPSHOT")
    snapshot = shown_update(page)
    bid = call(
        server,
        "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}) { version } }",
        token,
        t=table,
    )["placeBid"]["version"]
    # GraphiQL shows the latest update: the bid's, or a later one (bots move at once).
    deadline = time.monotonic() + 20
    while shown_update(page)["view"]["version"] < bid:
        assert time.monotonic() < deadline, shown_update(page)
        page.wait_for_timeout(100)
    assert bid > snapshot["view"]["version"]
    context.close()
    assert blocked == [], blocked
    assert violations == [], violations
    assert errors == [], errors


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>another origin</title>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def other_origin() -> Iterator[str]:
    """A plain web page served from another origin (another port)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


CROSS_ORIGIN_FETCH = """async ([url, headers]) => {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    return { status: res.status, body: await res.json() };
  } catch (error) {
    return { error: String(error) };
  }
}"""


def test_a_cross_origin_request_with_common_client_and_tracing_headers_succeeds(
    server: LiveServer, browser: Any, other_origin: str
) -> None:
    page = browser.new_page()
    page.goto(other_origin)
    common = {
        "authorization": "Bearer not-needed-here",
        "apollographql-client-name": "web",
        "apollographql-client-version": "1.2.3",
        "apollo-require-preflight": "true",
        "x-apollo-operation-name": "Typename",
        "sentry-trace": "0123456789abcdef0123456789abcdef-0123456789abcdef-1",
        "baggage": "sentry-environment=test",
        "traceparent": "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01",
        "tracestate": "vendor=value",
        "x-request-id": "abc-123",
    }
    answer = page.evaluate(CROSS_ORIGIN_FETCH, [server.http_url, common])
    assert answer == {"status": 200, "body": {"data": {"__typename": "Query"}}}, answer
    # A header nobody allowed still fails the preflight, as it should.
    refused = page.evaluate(CROSS_ORIGIN_FETCH, [server.http_url, {"x-unheard-of": "1"}])
    assert "error" in refused and "Failed to fetch" in refused["error"], refused
    page.close()
