"""GraphQL over HTTP as its spec says: the graphql-http audit, every refusal a GraphQL
response with its code and status, persisted queries, and CORS for common headers."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import httpx
import pytest

from app.api.app import create_app
from app.settings import Settings
from app.store.migrate import upgrade
from tests.support.server import LiveServer

from .clients import run_node
from .conftest import APQ_ENTRIES

GRAPHQL_RESPONSE = "application/graphql-response+json"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def persisted(query: str) -> dict[str, Any]:
    return {"persistedQuery": {"version": 1, "sha256Hash": sha256(query)}}


def code(answer: httpx.Response) -> str:
    body = answer.json()
    assert "data" not in body, body
    return str(body["errors"][0]["extensions"]["code"])


async def post(
    server: LiveServer, body: Any, accept: str | None = None, **kw: Any
) -> httpx.Response:
    headers = {"accept": accept} if accept else {}
    async with httpx.AsyncClient(timeout=10) as http:
        if isinstance(body, bytes | str):
            return await http.post(
                server.http_url,
                content=body,
                headers={"content-type": "application/json", **headers},
                **kw,
            )
        return await http.post(server.http_url, json=body, headers=headers, **kw)


def test_the_graphql_over_http_audit_passes_without_errors_or_warnings(
    server: LiveServer,
) -> None:
    result = run_node("audit.mjs", server.http_url)
    assert result["failures"] == [] and result["warn"] == 0 and result["error"] == 0, result
    assert result["ok"] >= 60, result


@pytest.mark.parametrize(
    ("body", "expected", "json_status", "graphql_status"),
    [
        (b'{"query": "{ __typename ', "BAD_REQUEST", 400, 400),
        (b"[1, 2]", "BAD_REQUEST", 400, 400),
        ({"query": 5}, "BAD_REQUEST", 400, 400),
        ({"query": "{ me { id "}, "GRAPHQL_PARSE_FAILED", 200, 400),
        ({"query": "{ nope }"}, "GRAPHQL_VALIDATION_FAILED", 200, 400),
        ({"query": '{ lobby(first: "x") { id } }'}, "GRAPHQL_VALIDATION_FAILED", 200, 400),
        (
            {"query": "{ " + " ".join(f"a{i}: __typename" for i in range(40)) + " }"},
            "QUERY_TOO_COMPLEX",
            200,
            400,
        ),
        ({"query": "{ " + "me { id } " * 1600 + "}"}, "QUERY_TOO_COMPLEX", 200, 400),
        (
            {"query": "query($t: ID!) { game(tableId: $t) { version } }", "variables": {}},
            "GRAPHQL_VALIDATION_FAILED",
            200,
            400,
        ),
        ([{"query": "{ __typename }"}] * 11, "BATCH_TOO_LARGE", 400, 400),
        (
            {"extensions": persisted("{ unknownToThisServer: __typename }")},
            "PERSISTED_QUERY_NOT_FOUND",
            200,
            400,
        ),
        (
            {"query": "{ __typename }", "extensions": persisted("{ other: __typename }")},
            "BAD_REQUEST",
            400,
            400,
        ),
        ({}, "BAD_REQUEST", 400, 400),
        ({"query": "subscription { lobbyUpdates { event } }"}, "BAD_REQUEST", 400, 400),
    ],
    ids=[
        "bad-json",
        "not-an-object",
        "query-not-a-string",
        "parse",
        "unknown-field",
        "wrong-argument-type",
        "aliases",
        "tokens",
        "missing-variable",
        "batch",
        "unknown-hash",
        "hash-mismatch",
        "no-query",
        "subscription-over-http",
    ],
)
async def test_every_refusal_is_a_graphql_response_with_its_code(
    server: LiveServer, body: Any, expected: str, json_status: int, graphql_status: int
) -> None:
    as_json = await post(server, body, accept="application/json")
    assert (as_json.status_code, code(as_json)) == (json_status, expected), as_json.text
    assert as_json.headers["content-type"].startswith("application/json")
    as_graphql = await post(server, body, accept=GRAPHQL_RESPONSE)
    assert (as_graphql.status_code, code(as_graphql)) == (graphql_status, expected)
    assert as_graphql.headers["content-type"].startswith(GRAPHQL_RESPONSE)


async def test_an_oversized_body_is_payload_too_large(server: LiveServer) -> None:
    body = json.dumps({"query": "{ __typename }", "variables": {"x": "y" * 70_000}})
    answer = await post(server, body, accept=GRAPHQL_RESPONSE)
    assert (answer.status_code, code(answer)) == (413, "PAYLOAD_TOO_LARGE")


async def test_a_post_gets_the_headers_of_every_response_and_cors(server: LiveServer) -> None:
    # A POST to /graphql (every move) skips starlette's router and error middlewares: it
    # must still pass the security headers and CORS middlewares.
    headers = {"origin": "http://app.example", "content-type": "application/json"}
    async with httpx.AsyncClient(timeout=10) as http:
        answers = [
            await http.post(server.http_url, content=body, headers=headers)
            for body in ('{"query": "{ __typename }"}', '{"query": "{ nope }"}', "not json")
        ]
    assert [a.status_code for a in answers] == [200, 200, 400]
    for answer in answers:
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["access-control-allow-origin"] == "*"
        assert "content-security-policy" not in answer.headers  # not an HTML page


async def test_other_methods_on_graphql_still_answer_as_before(server: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        assert (
            await http.put(server.http_url, json={"query": "{ __typename }"})
        ).status_code == 405
        assert (await http.get(server.http_url, params={"query": "{ __typename }"})).is_success


async def test_a_mutation_over_get_is_405_and_a_wrong_content_type_415(server: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        get = await http.get(server.http_url, params={"query": "mutation { signOut }"})
        assert (get.status_code, code(get)) == (405, "BAD_REQUEST")
        text = await http.post(
            server.http_url, content="{ __typename }", headers={"content-type": "text/plain"}
        )
        assert (text.status_code, code(text)) == (415, "BAD_REQUEST")


async def test_the_response_type_follows_accept(server: LiveServer) -> None:
    for accept, expected in [
        (None, "application/json"),
        ("*/*", "application/json"),
        ("application/json", "application/json"),
        (GRAPHQL_RESPONSE, GRAPHQL_RESPONSE),
        (f"{GRAPHQL_RESPONSE}, application/json;q=0.9", GRAPHQL_RESPONSE),
        (f"{GRAPHQL_RESPONSE};q=0.5, application/json", "application/json"),
    ]:
        answer = await post(server, {"query": "{ __typename }"}, accept=accept)
        assert answer.status_code == 200
        assert answer.headers["content-type"] == f"{expected}; charset=utf-8", accept
        assert answer.json() == {"data": {"__typename": "Query"}}


async def test_a_field_error_keeps_its_data_and_status_200(server: LiveServer) -> None:
    answer = await post(server, {"query": '{ table(id: "x") { id } }'}, accept=GRAPHQL_RESPONSE)
    assert answer.status_code == 200
    body = answer.json()
    assert "data" in body and body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


# ---------------------------------------------------------------------------- persisted queries


async def test_automatic_persisted_queries_register_then_run_by_hash_over_post_and_get(
    server: LiveServer,
) -> None:
    query = "query Typename { typename: __typename }"
    by_hash = {"extensions": persisted(query)}
    first = await post(server, by_hash)
    assert (first.status_code, code(first)) == (200, "PERSISTED_QUERY_NOT_FOUND")
    assert first.json()["errors"][0]["message"] == "PersistedQueryNotFound"
    registered = await post(server, {"query": query, **by_hash})
    assert registered.json() == {"data": {"typename": "Query"}}
    assert (await post(server, by_hash)).json() == {"data": {"typename": "Query"}}
    async with httpx.AsyncClient(timeout=10) as http:
        get = await http.get(
            server.http_url, params={"extensions": json.dumps(by_hash["extensions"])}
        )
    assert get.status_code == 200 and get.json() == {"data": {"typename": "Query"}}


async def test_a_hash_counts_against_the_limits_of_its_query(server: LiveServer) -> None:
    """A document over the limits is refused with its hash as without, and never kept."""
    query = "{ " + " ".join(f"a{i}: __typename" for i in range(40)) + " }"
    refused = await post(server, {"query": query, "extensions": persisted(query)})
    assert code(refused) == "QUERY_TOO_COMPLEX"
    again = await post(server, {"extensions": persisted(query)})
    assert code(again) == "PERSISTED_QUERY_NOT_FOUND"


async def test_the_persisted_query_cache_is_bounded_least_recently_used_first(
    server: LiveServer,
) -> None:
    queries = [f"{{ q{i}: __typename }}" for i in range(APQ_ENTRIES + 1)]
    for query in queries:
        assert (
            "errors"
            not in (await post(server, {"query": query, "extensions": persisted(query)})).json()
        )
    # The oldest went when the sixth came; the newest are all there.
    assert code(await post(server, {"extensions": persisted(queries[0])})) == (
        "PERSISTED_QUERY_NOT_FOUND"
    )
    for query in queries[-APQ_ENTRIES:]:
        assert "errors" not in (await post(server, {"extensions": persisted(query)})).json()


# ---------------------------------------------------------------------------- CORS

TRACING_HEADERS = (
    "authorization, content-type, apollographql-client-name, apollographql-client-version, "
    "apollo-require-preflight, x-apollo-operation-name, sentry-trace, baggage, traceparent, "
    "tracestate, x-request-id"
)


async def test_a_cors_preflight_passes_the_headers_clients_and_tracers_send(
    server: LiveServer,
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.options(
            server.http_url,
            headers={
                "origin": "http://app.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": TRACING_HEADERS,
            },
        )
        assert answer.status_code == 200, answer.text
        refused = await http.options(
            server.http_url,
            headers={
                "origin": "http://app.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "x-not-a-known-header",
            },
        )
        assert refused.status_code == 400


async def test_the_cors_headers_follow_their_setting(tmp_path: Any) -> None:
    live = LiveServer(tmp_path / "spades.db", env={"SPADES_CORS_ALLOW_HEADERS": "x-only-this"})
    live.start()
    try:
        async with httpx.AsyncClient(timeout=10) as http:

            async def preflight(headers: str) -> int:
                answer = await http.options(
                    live.http_url,
                    headers={
                        "origin": "http://app.example",
                        "access-control-request-method": "POST",
                        "access-control-request-headers": headers,
                    },
                )
                return answer.status_code

            assert await preflight("x-only-this") == 200
            assert await preflight("sentry-trace") == 400
    finally:
        live.stop()


async def test_the_app_runs_its_lifespan(tmp_path: Any) -> None:
    # uvicorn's lifespan "auto" only logs an app that fails a lifespan scope and serves
    # on without its services started: the routing in front (app/api/app.py
    # SpadesApp) must pass a lifespan scope (it has no path) to starlette.
    url = f"sqlite+aiosqlite:///{tmp_path / 'spades.db'}"
    await asyncio.to_thread(upgrade, url)
    app = create_app(Settings(database_url=url))
    incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[str] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    await app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
