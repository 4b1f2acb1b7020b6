"""Trusted-documents mode: only the operations of a manifest run (by id, by hash or by
their exact text), over HTTP and WebSocket; anything else is OPERATION_NOT_ALLOWED."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from tests.support.server import LiveServer

TYPENAME = "query Typename { __typename }"
LOBBY = "subscription Lobby { lobbyUpdates { event } }"
SIGN_UP = 'mutation SignUp($u: String!) { signUp(username: $u, password: "password123") { token } }'
# GraphQL Code Generator's client preset writes {hash: document}.
CODEGEN_MANIFEST = {"a1b2": TYPENAME, "c3d4": LOBBY, "e5f6": SIGN_UP}
APOLLO_MANIFEST = {
    "format": "apollo-persisted-query-manifest",
    "version": 1,
    "operations": [
        {"id": "typename-1", "name": "Typename", "type": "query", "body": TYPENAME},
    ],
}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def start(tmp: Path, manifest: dict[str, Any]) -> LiveServer:
    path = tmp / "manifest.json"
    path.write_text(json.dumps(manifest))
    live = LiveServer(tmp / "spades.db", env={"SPADES_TRUSTED_DOCUMENTS": str(path)})
    live.start()
    return live


@pytest.fixture(scope="module")
def trusted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = start(tmp_path_factory.mktemp("trusted"), CODEGEN_MANIFEST)
    yield live
    live.stop()


async def post(server: LiveServer, body: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=10) as http:
        return dict((await http.post(server.http_url, json=body)).json())


def code(answer: dict[str, Any]) -> str:
    return str(answer["errors"][0]["extensions"]["code"])


async def test_a_manifest_operation_runs_by_id_hash_or_text(trusted: LiveServer) -> None:
    expected = {"data": {"__typename": "Query"}}
    assert await post(trusted, {"documentId": "a1b2"}) == expected
    assert await post(trusted, {"query": TYPENAME}) == expected
    by_hash = {"persistedQuery": {"version": 1, "sha256Hash": sha256(TYPENAME)}}
    assert await post(trusted, {"extensions": by_hash}) == expected
    async with httpx.AsyncClient(timeout=10) as http:
        get = await http.get(trusted.http_url, params={"documentId": "a1b2"})
    assert get.json() == expected


async def test_any_other_operation_is_not_allowed(trusted: LiveServer) -> None:
    for body in (
        {"query": "{ __typename }"},  # not the manifest's text
        {"query": "query Typename { __typename }  "},
        {"documentId": "zzzz"},
        {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha256("{ me { id } }")}}},
        {
            "query": "{ me { id } }",
            "extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha256("{ me { id } }")}},
        },
    ):
        answer = await post(trusted, body)
        assert "data" not in answer and code(answer) == "OPERATION_NOT_ALLOWED", (body, answer)


async def test_websocket_operations_are_held_to_the_manifest_on_both_protocols(
    trusted: LiveServer,
) -> None:
    other = "subscription { lobbyUpdates { event tableId } }"
    for protocol, start_type in (("graphql-transport-ws", "subscribe"), ("graphql-ws", "start")):
        async with connect(trusted.ws_url, subprotocols=[Subprotocol(protocol)]) as socket:
            await socket.send(json.dumps({"type": "connection_init", "payload": {}}))
            assert json.loads(await socket.recv())["type"] == "connection_ack"
            message = {"id": "x", "type": start_type, "payload": {"query": other}}
            await socket.send(json.dumps(message))
            while (answer := json.loads(await socket.recv()))["type"] == "ka":
                pass
            assert answer["type"] == "error", answer
            errors = (
                answer["payload"] if isinstance(answer["payload"], list) else [answer["payload"]]
            )
            assert errors[0]["extensions"]["code"] == "OPERATION_NOT_ALLOWED"
            allowed = {"id": "y", "type": start_type, "payload": {"query": LOBBY}}
            await socket.send(json.dumps(allowed))
            while (answer := json.loads(await socket.recv()))["type"] == "ka":
                pass
            # The allowed document ran: it needs a signed-in caller.
            assert answer["payload"]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


async def test_an_apollo_persisted_query_manifest_works_too(tmp_path: Path) -> None:
    live = start(tmp_path, APOLLO_MANIFEST)
    try:
        assert await post(live, {"documentId": "typename-1"}) == {"data": {"__typename": "Query"}}
        assert code(await post(live, {"query": "{ me { id } }"})) == "OPERATION_NOT_ALLOWED"
    finally:
        live.stop()
