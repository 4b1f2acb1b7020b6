"""Rate limits: every rule over its limit answers RATE_LIMITED with extensions.retryAfter;
in memory for one process, shared through Redis by every process when
SPADES_BROKER_URL is set."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.services.rate_limits import LIMITS, Rule
from tests.support.server import LiveServer, running

from .helpers import Gql, code_of, http_client, random_loopback, unique_name

SIGN_IN = "mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { token } }"
SIGN_UP = "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }"
CREATE_TABLE = "mutation { createTable(input: {}) { id } }"
FRIEND_REQUEST = "mutation($u: String!) { sendFriendRequest(username: $u) { id } }"
INVITE = "mutation($t: ID!, $u: String!) { invitePlayer(tableId: $t, username: $u) { id } }"
PLAY = "mutation($t: ID!) { playCard(tableId: $t, card: {suit: SPADES, rank: ACE}) { version } }"


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server with rate limits on, counting in memory."""
    database = tmp_path_factory.mktemp("limited") / "spades.db"
    with running(database, {"SPADES_RATE_LIMITS": "1"}) as live:
        yield live


def assert_rate_limited(answer: dict[str, Any], rule: Rule) -> None:
    """RATE_LIMITED with a retry hint within the rule's window, and nothing done."""
    error = answer["errors"][0]
    assert error["extensions"]["code"] == "RATE_LIMITED", answer
    retry_after = error["extensions"]["retryAfter"]
    assert isinstance(retry_after, int) and 1 <= retry_after <= LIMITS[rule].seconds
    assert f"retry in {retry_after} s" in error["message"]
    assert answer.get("data") is None


async def test_sign_in_and_sign_up_attempts_per_ip_are_limited(limited: LiveServer) -> None:
    budget = LIMITS[Rule.AUTH_IP].count
    async with http_client(random_loopback()) as http, http_client(random_loopback()) as other:
        api = Gql(limited, http)
        for attempt in range(budget):
            if attempt % 2:
                answer = await api.post(SIGN_IN, u=unique_name(), p="wrong-password")
                assert code_of(answer) == "UNAUTHENTICATED"
            else:
                answer = await api.post(SIGN_UP, u=unique_name(), p="short")
                assert code_of(answer) == "BAD_USER_INPUT"
        name = unique_name()
        assert_rate_limited(await api.post(SIGN_UP, u=name, p="password123"), Rule.AUTH_IP)
        assert_rate_limited(await api.post(SIGN_IN, u=name, p="password123"), Rule.AUTH_IP)
        # The refused sign-up created nothing; another address is not affected.
        assert code_of(await Gql(limited, other).post(SIGN_IN, u=name, p="password123")) == (
            "UNAUTHENTICATED"
        )
        assert (await Gql(limited, other).sign_up(name)).token


async def test_sign_in_attempts_per_username_are_limited_from_any_address(
    limited: LiveServer,
) -> None:
    async with http_client(random_loopback()) as http:
        victim = await Gql(limited, http).sign_up()
    for _ in range(LIMITS[Rule.SIGN_IN_USER].count):
        async with http_client(random_loopback()) as http:
            answer = await Gql(limited, http).post(SIGN_IN, u=victim.username, p="guess-guess")
            assert code_of(answer) == "UNAUTHENTICATED"
    async with http_client(random_loopback()) as http:
        api = Gql(limited, http)
        # Even the right password waits: guessing cannot go on from new addresses.
        right = await api.post(SIGN_IN, u=victim.username, p="password123")
        assert_rate_limited(right, Rule.SIGN_IN_USER)
        upper = await api.post(SIGN_IN, u=str(victim.username).upper(), p="password123")
        assert_rate_limited(upper, Rule.SIGN_IN_USER)
        other = await api.sign_up()
        assert (await api.data(SIGN_IN, u=other.username, p="password123"))["signIn"]["token"]


async def test_table_creation_is_limited_per_player(limited: LiveServer) -> None:
    async with http_client(random_loopback()) as http:
        host = await Gql(limited, http).sign_up()
        neighbour = await Gql(limited, http).sign_up()
        for _ in range(LIMITS[Rule.CREATE_TABLE].count):
            await host.data(CREATE_TABLE)
        assert_rate_limited(await host.post(CREATE_TABLE), Rule.CREATE_TABLE)
        lobby = await host.data("{ lobby { host { id } } }")
        assert [t["host"]["id"] for t in lobby["lobby"]].count(host.player_id) == (
            LIMITS[Rule.CREATE_TABLE].count
        )
        assert await neighbour.data(CREATE_TABLE)


async def test_friend_requests_are_limited_per_player(limited: LiveServer) -> None:
    async with http_client(random_loopback()) as http:
        sender = await Gql(limited, http).sign_up()
        target = await Gql(limited, http).sign_up()
        for _ in range(LIMITS[Rule.FRIEND_REQUEST].count):
            answer = await sender.post(FRIEND_REQUEST, u=unique_name())
            assert code_of(answer) == "NOT_FOUND"
        answer = await sender.post(FRIEND_REQUEST, u=target.username)
        assert_rate_limited(answer, Rule.FRIEND_REQUEST)
        assert await target.data("{ friendRequests { id } }") == {"friendRequests": []}
        assert await target.data(FRIEND_REQUEST, u=sender.username)


async def test_invitations_are_limited_per_player(limited: LiveServer) -> None:
    async with http_client(random_loopback()) as http:
        host = await Gql(limited, http).sign_up()
        guest = await Gql(limited, http).sign_up()
        table = (await host.data(CREATE_TABLE))["createTable"]["id"]
        for _ in range(LIMITS[Rule.INVITATION].count):
            assert code_of(await host.post(INVITE, t=table, u=unique_name())) == "NOT_FOUND"
        assert_rate_limited(await host.post(INVITE, t=table, u=guest.username), Rule.INVITATION)
        assert await guest.data("{ invitations { id } }") == {"invitations": []}


async def moves_in_one_window(api: Gql, table: str, count: int) -> list[dict[str, Any]]:
    """`count` moves sent at once (batches of 10 run concurrently) right after a second
    begins, so that they fall into one window of the per-second limit."""
    await asyncio.sleep(1.02 - time.time() % 1)
    batches = [
        api.http.post(
            api.server.http_url,
            json=[{"query": PLAY, "variables": {"t": table}}] * 10,
            headers=api.headers(),
        )
        for _ in range(count // 10)
    ]
    answers: list[dict[str, Any]] = []
    for response in await asyncio.gather(*batches):
        assert response.status_code == 200
        answers.extend(response.json())
    return answers


async def test_moves_per_second_are_limited_per_player(limited: LiveServer) -> None:
    ceiling = LIMITS[Rule.MOVE].count
    async with http_client(random_loopback()) as http:
        player = await Gql(limited, http).sign_up()
        bystander = await Gql(limited, http).sign_up()
        # A table still waiting: each move counts, then answers WRONG_PHASE and changes nothing.
        table = (await player.data(CREATE_TABLE))["createTable"]["id"]
        other_table = (await bystander.data(CREATE_TABLE))["createTable"]["id"]
        for _attempt in range(3):
            answers = await moves_in_one_window(player, table, 30)
            codes = [code_of(a) for a in answers]
            if codes.count("RATE_LIMITED") >= 30 - ceiling:
                break
        assert set(codes) == {"WRONG_PHASE", "RATE_LIMITED"}
        assert codes.count("RATE_LIMITED") >= 30 - ceiling, codes
        for answer in answers:
            if code_of(answer) == "RATE_LIMITED":
                assert_rate_limited(answer, Rule.MOVE)
                assert answer["errors"][0]["extensions"]["retryAfter"] == 1
        # Another player is not slowed down; the player may move again a second later.
        assert code_of(await bystander.post(PLAY, t=other_table)) == "WRONG_PHASE"
        await asyncio.sleep(1.1)
        assert code_of(await player.post(PLAY, t=table)) == "WRONG_PHASE"
        version = await player.data("query($t: ID!) { game(tableId: $t) { version } }", t=table)
        assert version["game"]["version"] == 0


async def test_the_redis_backed_limits_are_shared_by_every_process(
    redis_pair: tuple[LiveServer, LiveServer],
) -> None:
    first, second = redis_pair
    budget = LIMITS[Rule.CREATE_TABLE].count
    async with http_client(random_loopback()) as http:
        on_first = await Gql(first, http).sign_up()
        on_second = Gql(second, http, on_first.token)
        for number in range(budget):
            await (on_first if number % 2 else on_second).data(CREATE_TABLE)
        assert_rate_limited(await on_first.post(CREATE_TABLE), Rule.CREATE_TABLE)
        assert_rate_limited(await on_second.post(CREATE_TABLE), Rule.CREATE_TABLE)

        victim = on_first.username
        for number in range(LIMITS[Rule.SIGN_IN_USER].count):
            api = Gql(first if number % 2 else second, http)
            assert code_of(await api.post(SIGN_IN, u=victim, p="guess-guess")) == (
                "UNAUTHENTICATED"
            )
        for live in (first, second):
            answer = await Gql(live, http).post(SIGN_IN, u=victim, p="password123")
            assert_rate_limited(answer, Rule.SIGN_IN_USER)
