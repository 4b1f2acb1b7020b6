"""The HTTP fast path (app/api/fastpath/http.py) answers exactly what the normal path answers:
the same bytes, status and headers, for moves that succeed and for every error a move
can meet; and it leaves to the normal path what it does not handle."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response

from app.api.app import create_app
from app.api.graphql.view import SpadesGraphQL
from app.services.rate_limits import RateLimited, Rule
from app.settings import Settings

SEATS = ("NORTH", "EAST", "SOUTH", "WEST")
SIGN_UP = "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }"
CREATE = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
JOIN = "mutation($t: ID!, $s: Seat!) { joinTable(tableId: $t, seat: $s) { id } }"
STATE = "query($t: ID!) { game(tableId: $t) { phase turn handWithheld legalPlays { suit rank } } }"
FULL = """{ id tableId phase handNumber dealer turn viewerSeat hand { suit rank } handWithheld
  blindNilEligible legalPlays { suit rank }
  seats { id seat playerId username isBot bid { kind tricks } tricksWon cardCount
          awayPlayer { id username } botLevel }
  teams { id team score bags target } currentTrick { seat card { suit rank } }
  lastTrick { plays { seat card { suit rank } } winner } spadesBroken
  history { handNumber team target tricks points bags bagPenalty scoreAfter bagsAfter }
  winner version turnDeadline nextTableId rematchRequests __typename }"""
SELECTIONS = ("{ version }", FULL, "{ v: version ... on GameView { turn phase } }")
CARD = (
    "mutation($t: ID!, $c: CardInput!, $e: Int) "
    "{ playCard(tableId: $t, card: $c, expectedVersion: $e) "
)
BID = (
    "mutation Bid($t: ID!, $e: Int) "
    "{ placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}, expectedVersion: $e) "
)
REVEAL = "mutation($t: ID!) { revealHand(tableId: $t) "
HAND = "query($t: ID!) { game(tableId: $t) { hand { suit rank } legalPlays { suit rank } } }"
DEADLINE = re.compile(rb'"turnDeadline":"[^"]*"')


class Recorder:
    """Wraps the view's fast path: counts what it answered; `off` sends all the normal way."""

    def __init__(self, view: SpadesGraphQL) -> None:
        self.answer: Callable[[Request], Awaitable[Response | None]] = view.shortcut.answer
        self.off = False
        self.answered = 0
        view.shortcut.answer = self  # type: ignore[method-assign]

    async def __call__(self, request: Request) -> Response | None:
        if self.off:
            return None
        response = await self.answer(request)
        self.answered += response is not None
        return response


def graphql_view(app: Starlette) -> SpadesGraphQL:
    """The GraphQL view behind /graphql."""
    for route in app.routes:
        endpoint = getattr(route, "endpoint", None)
        if isinstance(endpoint, SpadesGraphQL):
            return endpoint
    raise AssertionError("no GraphQL view")


class Client:
    """POSTs to the app in process, each request by the fast path or the normal one."""

    def __init__(self, http: httpx.AsyncClient, recorder: Recorder) -> None:
        self.http = http
        self.recorder = recorder

    async def raw(
        self,
        query: str,
        variables: dict[str, Any] | None = None,
        token: str | None = None,
        fast: bool = True,
        accept: str | None = None,
        name: str | None = None,
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if accept:
            headers["Accept"] = accept
        body: dict[str, Any] = {"query": query, "variables": variables}
        if name:
            body["operationName"] = name
        self.recorder.off = not fast
        before = self.recorder.answered
        response = await self.http.post("/graphql", json=body, headers=headers)
        self.recorder.off = False
        assert (self.recorder.answered > before) is fast, "the path taken is not the one asked"
        headers_out = [(k, v) for k, v in response.headers.raw if k.lower() != b"date"]
        return response.status_code, response.content, headers_out

    async def data(self, query: str, variables: dict[str, Any], token: str | None = None) -> Any:
        status, content, _ = await self.raw(query, variables, token, fast=False)
        answer = httpx.Response(status, content=content).json()
        assert not answer.get("errors"), answer
        return answer["data"]

    async def both(self, *args: Any, **kwargs: Any) -> tuple[int, bytes, list[Any]]:
        """The same request by the fast path, then by the normal one: the same answer
        (for requests that change nothing)."""
        fast = await self.raw(*args, fast=True, **kwargs)
        normal = await self.raw(*args, fast=False, **kwargs)
        assert fast == normal
        return fast


@asynccontextmanager
async def started(tmp_path: Path) -> AsyncIterator[tuple[Client, Starlette]]:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path}/hot.db",
        argon2_time_cost=1,
        argon2_memory_kib=1024,
        allow_seeded_tables=True,
        rate_limits=False,
    )
    app = create_app(settings)
    recorder = Recorder(graphql_view(app))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://test") as http,
    ):
        yield Client(http, recorder), app


async def seated(client: Client, seed: int, tokens: list[str]) -> str:
    options = {"name": "hot", "seed": seed}
    table: str = (await client.data(CREATE, {"i": options}, tokens[0]))["createTable"]["id"]
    for seat in range(1, 4):
        await client.data(JOIN, {"t": table, "s": SEATS[seat]}, tokens[seat])
    return table


async def players(client: Client) -> list[str]:
    return [
        (await client.data(SIGN_UP, {"u": f"hot{n}", "p": "hot-password"}, None))["signUp"]["token"]
        for n in range(4)
    ]


async def next_move(
    client: Client, table: str, tokens: list[str]
) -> tuple[str, dict[str, Any], int]:
    """(document head, variables, seat) of a legal move at `table`."""
    state = (await client.data(STATE, {"t": table}, tokens[0]))["game"]
    seat = SEATS.index(state["turn"])
    mine = (await client.data(STATE, {"t": table}, tokens[seat]))["game"]
    if state["phase"] == "BIDDING":
        if mine["handWithheld"]:
            return REVEAL, {"t": table}, seat
        return BID, {"t": table}, seat
    return CARD, {"t": table, "c": mine["legalPlays"][0]}, seat


async def test_moves_answer_the_same_bytes_by_both_paths(tmp_path: Path) -> None:
    """Two tables dealt alike by the same four players: every move by the fast path at
    one and by the normal path at the other answers the same bytes (the table's id and
    the clock's instant aside), whatever the selection."""
    async with started(tmp_path) as (client, _app):
        tokens = await players(client)
        fast_table = await seated(client, 41, tokens)
        normal_table = await seated(client, 41, tokens)
        for n in range(60):
            head, variables, seat = await next_move(client, fast_table, tokens)
            selection = SELECTIONS[n % len(SELECTIONS)]
            name = "Bid" if head is BID else None
            fast = await client.raw(head + selection + " }", variables, tokens[seat], name=name)
            variables = {**variables, "t": normal_table}
            normal = await client.raw(
                head + selection + " }", variables, tokens[seat], fast=False, name=name
            )
            assert fast[0] == normal[0] == 200
            assert b'"errors"' not in fast[1]
            same = DEADLINE.sub(b"", normal[1].replace(normal_table.encode(), fast_table.encode()))
            assert DEADLINE.sub(b"", fast[1]) == same
            assert fast[2] == normal[2]
        assert client.recorder.answered >= 60


def metric(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_every_error_of_a_move_answers_the_same_by_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with started(tmp_path) as (client, app):
        tokens = await players(client)
        table = await seated(client, 42, tokens)
        head, variables, seat = await next_move(client, table, tokens)
        while head is not CARD:  # into the play, where a card can be illegal
            await client.data(head + "{ version } }", variables, tokens[seat])
            head, variables, seat = await next_move(client, table, tokens)
        query = head + "{ version } }"
        other = (seat + 1) % 4
        cases: list[tuple[str, dict[str, Any], str | None, bytes]] = [
            (query, variables, tokens[other], b"NOT_YOUR_TURN"),
            (query, variables, None, b"UNAUTHENTICATED"),
            (query, variables, "not-a-token", b"UNAUTHENTICATED"),
            (query, {**variables, "t": "no-such-table"}, tokens[seat], b"NOT_FOUND"),
            (query, {**variables, "e": 0}, tokens[seat], b"CONFLICT"),
            (
                query,
                {**variables, "e": "not an int"},
                tokens[seat],
                b"GRAPHQL_VALIDATION_FAILED",
            ),
            (query, {}, tokens[seat], b"GRAPHQL_VALIDATION_FAILED"),
        ]
        mine = (await client.data(HAND, {"t": table}, tokens[seat]))["game"]
        deck = [
            {"suit": suit, "rank": rank}
            for suit in ("SPADES", "HEARTS", "CLUBS", "DIAMONDS")
            for rank in ("TWO", "SEVEN", "TEN", "ACE")
        ]
        missing = next(c for c in deck if c not in mine["hand"])
        cases.append((query, {**variables, "c": missing}, tokens[seat], b"CARD_NOT_IN_HAND"))
        illegal = [c for c in mine["hand"] if c not in mine["legalPlays"]]
        if illegal:
            cases.append((query, {**variables, "c": illegal[0]}, tokens[seat], b"ILLEGAL_PLAY"))
        assert len(cases) >= 8
        for document, values, token, code in cases:
            for accept in (None, "application/graphql-response+json"):
                label = {"code": code.decode()}
                counts = [metric("spades_graphql_errors_total", label)]
                fast = await client.raw(document, values, token, accept=accept)
                counts.append(metric("spades_graphql_errors_total", label))
                normal = await client.raw(document, values, token, fast=False, accept=accept)
                counts.append(metric("spades_graphql_errors_total", label))
                assert fast == normal
                status, content, _ = fast
                assert code in content, content
                # Counted alike by both paths (once per error).
                assert counts[2] - counts[1] == counts[1] - counts[0] >= 1
                if code == b"GRAPHQL_VALIDATION_FAILED":
                    assert b'"data"' not in content
                    assert status == (400 if accept else 200)

        games = app.state.services.games
        limits = app.state.services.limits

        async def limited(*_args: Any) -> None:
            raise RateLimited(Rule.MOVE, 2.5)

        async def broken(*_args: Any) -> None:
            raise ValueError("a bug's secret detail")

        async def outage(*_args: Any) -> None:
            raise OSError("database gone")

        for target, attribute, replacement, code in (
            (limits, "check", limited, b'"retryAfter":3'),
            (games, "act", broken, b"Internal server error"),
            (games, "act", outage, b"UNAVAILABLE"),
        ):
            with monkeypatch.context() as patch:
                patch.setattr(target, attribute, replacement)
                _, content, _ = await client.both(query, variables, tokens[seat])
            assert code in content
            assert b"secret" not in content


async def test_what_the_fast_path_leaves_to_the_normal_path(tmp_path: Path) -> None:
    async with started(tmp_path) as (client, _app):
        tokens = await players(client)
        table = await seated(client, 43, tokens)
        http, recorder = client.http, client.recorder
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        version = "query($t: ID!) { game(tableId: $t) { version } }"
        requests: list[dict[str, Any]] = [
            {"json": {"query": "{ me { id "}},  # does not parse
            {"json": {"query": "{ nope }"}},  # does not validate
            {"json": {"query": "subscription { lobbyUpdates { event } }"}},
            {"json": [{"query": version, "variables": {"t": table}}]},  # a batch
            {"json": {"query": version, "variables": {"t": table}, "extensions": {"x": 1}}},
            {"json": {"query": version + " query B { me { id } }", "variables": {"t": table}}},
            {"json": {"query": version, "variables": {"t": table}, "operationName": "Other"}},
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            {"content": version.encode(), "headers": {"content-type": "application/graphql"}},
        ]
        for request in requests:
            before = recorder.answered
            headers = {**auth, **request.pop("headers", {})}
            response = await http.post("/graphql", headers=headers, **request)
            assert recorder.answered == before, request
            assert response.status_code in (200, 400, 405, 415)
        answered = await http.get("/graphql", params={"query": "{ me { id } }"}, headers=auth)
        assert answered.json()["data"]["me"]["id"]
        assert recorder.answered == before
        # ...while the same valid query by POST does take it.
        response = await http.post("/graphql", json={"query": "{ me { id } }"}, headers=auth)
        assert response.json()["data"]["me"]["id"]
        assert recorder.answered == before + 1
