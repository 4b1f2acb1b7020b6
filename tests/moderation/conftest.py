"""Fixtures of the moderation tests: a moderator and an admin on the module's server
(given their role in its database; `spades admin role` has tests of its own)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.support.client import SIGN_UP
from tests.support.moderation import grant
from tests.support.server import LiveServer
from tests.support.social import Social


@dataclass(frozen=True)
class Account:
    """A signed-up account: its token, id and username."""

    token: str
    player_id: str
    username: str

    def api(self, server: LiveServer) -> Social:
        """A client of this account."""
        player = Social(server, self.token)
        player.player_id = self.player_id
        player.username = self.username
        return player


def account(server: LiveServer, username: str) -> Account:
    """Sign an account up from a synchronous fixture."""
    with httpx.Client(timeout=30) as client:
        answer = client.post(
            server.http_url,
            json={"query": SIGN_UP, "variables": {"u": username, "p": "password123"}},
        ).json()
    payload = answer["data"]["signUp"]
    return Account(payload["token"], payload["player"]["id"], username)


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server for the single-process modules of this folder (each test uses players
    of its own): starting one per module cost more than their tests."""
    live = LiveServer(tmp_path_factory.mktemp("moderation") / "spades.db")
    live.start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def moderator_account(server: LiveServer, request: pytest.FixtureRequest) -> Account:
    """A MODERATOR, named after the module."""
    name = "mod_" + request.module.__name__.rsplit(".", 1)[-1][-12:]
    made = account(server, name)
    grant(server, made.player_id, "MODERATOR")
    return made


@pytest.fixture(scope="module")
def admin_account(server: LiveServer, request: pytest.FixtureRequest) -> Account:
    """An ADMIN, named after the module."""
    name = "adm_" + request.module.__name__.rsplit(".", 1)[-1][-12:]
    made = account(server, name)
    grant(server, made.player_id, "ADMIN")
    return made


@pytest.fixture
def moderator(server: LiveServer, moderator_account: Account) -> Social:
    """The module's moderator, signed in."""
    return moderator_account.api(server)


@pytest.fixture
def admin(server: LiveServer, admin_account: Account) -> Social:
    """The module's admin, signed in."""
    return admin_account.api(server)
