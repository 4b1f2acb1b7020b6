"""GraphQL limits (depth, tokens, aliases, cost, batching), the introspection switch, and
the size caps of HTTP bodies and WebSocket messages: at their defaults, and as set."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from graphql import get_introspection_query
from websockets.exceptions import ConnectionClosed

from tests.support.server import LiveServer, running

from .conftest import sign_up_now
from .helpers import Gql, http_client, receive, subscribe, ws_connection

# Tighter limits than the defaults, to show that each setting is honoured.
TIGHT_ENV = {
    "SPADES_INTROSPECTION": "0",
    "SPADES_MAX_QUERY_DEPTH": "3",
    "SPADES_MAX_QUERY_TOKENS": "200",
    "SPADES_MAX_ALIASES": "3",
    "SPADES_MAX_QUERY_COST": "500",
    "SPADES_MAX_BATCH": "2",
    "SPADES_MAX_BODY_BYTES": "3000",
    "SPADES_MAX_WS_MESSAGE_BYTES": "3000",
}

# Every list the query selects counts LIST_SIZE (10) times its selection.
GAME_FRAGMENT = """
fragment G on GameView {
  hand { suit rank } legalPlays { suit rank }
  seats { seat playerId username isBot bid { kind tricks } tricksWon cardCount }
  teams { team score bags target }
  currentTrick { seat card { suit rank } }
  lastTrick { plays { seat card { suit rank } } winner }
  history { handNumber team target tricks points bags bagPenalty scoreAfter bagsAfter }
}
"""


def lobby_aliases(count: int) -> str:
    """`count` aliased lobby queries selecting whole games: about 3,500 cost each."""
    fields = " ".join(f"l{i}: lobby {{ game {{ ...G }} }}" for i in range(count))
    return f"query {{ {fields} }}" + GAME_FRAGMENT


def messages(answer: dict[str, object]) -> str:
    """All error messages of an answer, joined."""
    errors = answer.get("errors") or []
    assert isinstance(errors, list)
    return " | ".join(str(e.get("message")) for e in errors)


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server with every query limit set tighter than its default, introspection off."""
    with running(tmp_path_factory.mktemp("tight") / "spades.db", TIGHT_ENV) as live:
        yield live


@pytest.fixture(scope="module")
def token(server: LiveServer) -> str:
    """A player of the default server."""
    return sign_up_now(server)[0]


@pytest.fixture(scope="module")
def tight_token(tight: LiveServer) -> str:
    """A player of the tight server."""
    return sign_up_now(tight)[0]


# ---------------------------------------------------------------------------- depth


async def test_a_query_nested_deeper_than_the_default_depth_is_refused(
    server: LiveServer, token: str
) -> None:
    async with http_client() as http:
        api = Gql(server, http, token)
        deepest = "{ invitations { table { game { lastTrick { plays { card { suit } } } } } } }"
        assert await api.data(deepest) == {"invitations": []}
        thirteen = "{ me " + "{ id " * 13 + "}" * 13 + " }"  # 13 levels below `me`
        answer = await api.post(thirteen)
        assert answer.get("data") is None
        assert "exceeds maximum operation depth of 12" in messages(answer)


async def test_the_depth_limit_follows_its_setting(tight: LiveServer, tight_token: str) -> None:
    async with http_client() as http:
        api = Gql(tight, http, tight_token)
        assert await api.data("{ lobby { game { seats { seat } } } }") == {"lobby": []}
        answer = await api.post("{ lobby { game { lastTrick { plays { seat } } } } }")
        assert "exceeds maximum operation depth of 3" in messages(answer)
        assert answer.get("data") is None


async def test_absurd_nesting_is_a_syntax_error_not_a_crash(server: LiveServer, token: str) -> None:
    async with http_client() as http:
        answer = await Gql(server, http, token).post("{" + "me {" * 900 + "id" + "}" * 901)
    assert answer.get("data") is None
    text = messages(answer)
    assert "Syntax Error" in text and "Internal server error" not in text


# ---------------------------------------------------------------------------- tokens


def pass_cards(count: int) -> str:
    """A passCards mutation listing `count` cards: 14 + 8 * count tokens."""
    cards = ", ".join(["{suit: SPADES, rank: TWO}"] * count)
    return f'mutation {{ passCards(tableId: "0", cards: [{cards}]) {{ version }} }}'


async def assert_token_limit(server: LiveServer, token: str, fits: int, over: int) -> None:
    async with http_client() as http:
        api = Gql(server, http, token)
        parsed = await api.post(pass_cards(fits))
        assert parsed["errors"][0]["extensions"]["code"] == "NOT_FOUND"  # it did run
        answer = await api.post(pass_cards(over))
    assert answer.get("data") is None
    assert "tokens. Parsing aborted" in messages(answer)


async def test_a_query_with_more_tokens_than_the_default_is_refused(
    server: LiveServer, token: str
) -> None:
    await assert_token_limit(server, token, fits=360, over=375)  # 2,894 and 3,014 tokens


async def test_the_token_limit_follows_its_setting(tight: LiveServer, tight_token: str) -> None:
    await assert_token_limit(tight, tight_token, fits=20, over=24)  # 174 and 206 tokens


# ---------------------------------------------------------------------------- aliases


async def test_more_aliases_than_the_default_are_refused(server: LiveServer, token: str) -> None:
    async with http_client() as http:
        api = Gql(server, http, token)
        thirty = "{ " + " ".join(f"a{i}: me {{ id }}" for i in range(30)) + " }"
        assert len(await api.data(thirty)) == 30
        answer = await api.post(thirty.replace("a0: ", "a0: me { id } b0: "))
    assert answer.get("data") is None
    assert "Allowed: 30" in messages(answer)


async def test_the_alias_limit_follows_its_setting(tight: LiveServer, tight_token: str) -> None:
    async with http_client() as http:
        api = Gql(tight, http, tight_token)
        assert len(await api.data("{ a: me { id } b: me { id } c: me { id } }")) == 3
        answer = await api.post("{ a: me { id } b: me { id } c: me { id } d: me { id } }")
    assert "Allowed: 3" in messages(answer)


# ---------------------------------------------------------------------------- cost


async def test_an_expensive_selection_of_lists_is_refused_by_its_estimated_cost(
    server: LiveServer, token: str
) -> None:
    async with http_client() as http:
        api = Gql(server, http, token)
        assert len(await api.data(lobby_aliases(10))) == 10  # about 35,000: allowed
        answer = await api.post(lobby_aliases(20))  # about 70,000: over 50,000
    assert answer.get("data") is None
    text = messages(answer)
    assert "too expensive" in text and "limit 50000" in text


async def test_the_cost_limit_follows_its_setting(tight: LiveServer, tight_token: str) -> None:
    async with http_client() as http:
        api = Gql(tight, http, tight_token)
        # 1 + 10 * (1 + 10 * 4) = 411 and 1 + 10 * (1 + 10 * 6) = 611.
        assert await api.data("{ lobby { seats { seat playerId username isBot } } }")
        answer = await api.post(
            "{ lobby { seats { seat playerId username isBot tricksWon cardCount } } }"
        )
    assert "limit 500" in messages(answer)


# ---------------------------------------------------------------------------- batching


async def post_batch(server: LiveServer, token: str, size: int) -> httpx.Response:
    async with http_client() as http:
        return await http.post(
            server.http_url,
            json=[{"query": "{ me { id } }"}] * size,
            headers={"Authorization": f"Bearer {token}"},
        )


async def test_a_batch_over_the_default_size_is_refused_and_a_small_one_works(
    server: LiveServer, token: str
) -> None:
    ten = await post_batch(server, token, 10)
    assert ten.status_code == 200
    assert [item["data"]["me"]["id"] for item in ten.json()].count(None) == 0
    assert len(ten.json()) == 10
    eleven = await post_batch(server, token, 11)
    assert eleven.status_code == 400
    assert eleven.json()["errors"][0]["extensions"]["code"] == "BATCH_TOO_LARGE"


async def test_the_batch_limit_follows_its_setting(tight: LiveServer, tight_token: str) -> None:
    assert (await post_batch(tight, tight_token, 2)).status_code == 200
    assert (await post_batch(tight, tight_token, 3)).status_code == 400


# ---------------------------------------------------------------------------- introspection


async def test_introspection_is_on_by_default_for_graphiql(server: LiveServer) -> None:
    async with http_client() as http:
        api = Gql(server, http)
        full = await api.data(get_introspection_query(descriptions=True))
        names = {t["name"] for t in full["__schema"]["types"]}
        assert {"Query", "Mutation", "Subscription", "GameView"} <= names
        page = await http.get(server.http_url, headers={"Accept": "text/html"})
    assert page.status_code == 200 and "graphiql" in page.text.lower()


async def test_introspection_can_be_switched_off(tight: LiveServer, tight_token: str) -> None:
    async with http_client() as http:
        api = Gql(tight, http, tight_token)
        for query in (
            "{ __schema { queryType { name } } }",
            '{ __type(name: "Query") { name } }',
        ):
            answer = await api.post(query)
            assert answer.get("data") is None
            assert "introspection has been disabled" in messages(answer)
        assert await api.data("{ __typename me { id } }")


# ---------------------------------------------------------------------------- body size


def padded_body(size: int) -> bytes:
    """A valid JSON body of exactly `size` bytes (whitespace padding)."""
    body = b'{"query": "{ __typename }"}'
    return body[:-1] + b" " * (size - len(body)) + b"}"


async def test_an_oversized_body_is_refused_with_413(server: LiveServer) -> None:
    headers = {"content-type": "application/json"}
    async with http_client() as http:
        fits = await http.post(server.http_url, content=padded_body(65_536), headers=headers)
        assert fits.status_code == 200
        over = await http.post(server.http_url, content=padded_body(65_537), headers=headers)
        assert over.status_code == 413

        async def chunks() -> object:  # no Content-Length: the size is counted as it streams
            yield b'{"query": "{ __typename }"' + b" " * 8_000
            for _ in range(10):
                yield b" " * 8_000
            yield b"}"

        streamed = await http.post(server.http_url, content=chunks(), headers=headers)  # type: ignore[arg-type]
        assert streamed.status_code == 413


async def test_the_body_limit_follows_its_setting(tight: LiveServer) -> None:
    headers = {"content-type": "application/json"}
    async with http_client() as http:
        fits = await http.post(tight.http_url, content=padded_body(3_000), headers=headers)
        over = await http.post(tight.http_url, content=padded_body(3_001), headers=headers)
    assert (fits.status_code, over.status_code) == (200, 413)


# ---------------------------------------------------------------------------- WebSocket size


async def assert_oversized_message_closes_socket(
    server: LiveServer, token: str, limit: int
) -> None:
    lobby = "subscription { lobbyUpdates { event } }"
    async with ws_connection(server, token) as socket:
        assert (await receive(socket))["type"] == "connection_ack"
        await subscribe(socket, "fits", "query { me { id } }" + " " * (limit - 200))
        assert [(await receive(socket))["type"] for _ in range(2)] == ["next", "complete"]
        await subscribe(socket, "big", lobby + " " * limit)
        with pytest.raises(ConnectionClosed):
            await receive(socket)
        assert socket.close_code == 1009  # message too big


async def test_an_oversized_websocket_message_closes_the_socket(
    server: LiveServer, token: str
) -> None:
    await assert_oversized_message_closes_socket(server, token, 65_536)


async def test_the_websocket_message_limit_follows_its_setting(
    tight: LiveServer, tight_token: str
) -> None:
    await assert_oversized_message_closes_socket(tight, tight_token, 3_000)


# ---------------------------------------------------------------------------- malformed


MALFORMED_BODIES = [
    "5",
    '"text"',
    "null",
    "true",
    '"\\ud800"',
    "[5]",
    "[null]",
    "[[]]",
    '[{"query": 5}]',
    '{"query": ["{ me { id } }"]}',
    '{"query": "{ me { id } }", "variables": [1]}',
    '[{"query": "{ me { id } }", "variables": "x"}]',
    '{"query": "{ me { id } }", "operationName": 5}',
    '[{"query": "{ me { id } }", "extensions": 3}]',
    "{not json",
    "{}",
]


@pytest.mark.parametrize("body", MALFORMED_BODIES)
async def test_a_malformed_request_body_is_a_client_error_never_a_crash(
    server: LiveServer, body: str
) -> None:
    async with http_client() as http:
        answer = await http.post(
            server.http_url, content=body.encode(), headers={"content-type": "application/json"}
        )
    assert answer.status_code == 400, answer.text
    assert "Traceback" not in answer.text and "Internal" not in answer.text


async def test_a_subscription_sent_over_plain_http_is_refused_clearly(
    server: LiveServer, token: str
) -> None:
    async with http_client() as http:
        for body in (
            {"query": "subscription { lobbyUpdates { event } }"},
            [{"query": "subscription { notifications { event } }"}],
        ):
            answer = await http.post(
                server.http_url, json=body, headers={"Authorization": f"Bearer {token}"}
            )
            # Alone, the request is refused (400); in a batch, only its member is.
            assert answer.status_code == (200 if isinstance(body, list) else 400)
            result = answer.json()[0] if isinstance(body, list) else answer.json()
            assert "data" not in result
            assert result["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
            assert "WebSocket" in result["errors"][0]["message"]


def test_no_request_of_this_module_left_a_traceback_in_the_log(
    server: LiveServer, tight: LiveServer
) -> None:
    for live in (server, tight):
        log = live.logs()
        assert "Traceback" not in log and "Internal Server Error" not in log, log[-3000:]
