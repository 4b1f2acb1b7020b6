"""Servers for the abuse-resistance tests: each module starts the few it needs, with the
settings under test; the Redis-backed pair is shared by the modules that need two
processes."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.server import LiveServer, running
from tests.support.services import postgres_database, redis_url

from .helpers import PASSWORD, random_loopback, unique_name


def sign_up_now(server: LiveServer, source: str | None = None) -> tuple[str, str, str]:
    """Sign a new player up from a synchronous fixture: (token, player id, username)."""
    username = unique_name()
    transport = httpx.HTTPTransport(local_address=source or random_loopback())
    with httpx.Client(transport=transport, timeout=30) as client:
        answer = client.post(
            server.http_url,
            json={
                "query": "mutation($u: String!, $p: String!) { signUp(username: $u, "
                "password: $p) { token player { id } } }",
                "variables": {"u": username, "p": PASSWORD},
            },
        ).json()
    payload = answer["data"]["signUp"]
    return payload["token"], payload["player"]["id"], username


@pytest.fixture(scope="session")
def redis_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two server processes on one PostgreSQL database sharing Redis (broker and rate
    limits), with rate limits on."""
    url = redis_url()
    folder = tmp_path_factory.mktemp("pair")
    env = {"SPADES_BROKER_URL": url, "SPADES_RATE_LIMITS": "1"}
    with (
        postgres_database() as database_url,
        running(folder / "a.db", env, database_url=database_url) as first,
        running(folder / "b.db", env, database_url=database_url) as second,
    ):
        yield first, second
