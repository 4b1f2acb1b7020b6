"""The web client across a server restart: the server drains (its sockets closed with
1012, service restart) and starts again; the table page reconnects by itself,
resubscribes with `since` the last version it showed, catches up on what happened while
it was away, and shows no error."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.client import SIGN_UP
from tests.support.scenarios import PLACE_BID
from tests.support.server import LiveServer
from tests.web import pages

JOIN_SOUTH = "mutation($t: ID!) { joinTable(tableId: $t, seat: SOUTH) { id } }"
VERSION = "query($t: ID!) { game(tableId: $t) { version turn } }"


@pytest.fixture
def restarting_server(tmp_path: Path, web_dist: Path) -> Iterator[LiveServer]:
    """A server with the client, a one-second drain and bots that take 150 ms."""
    live = LiveServer(
        tmp_path / "spades.db",
        env={
            "SPADES_DRAIN_SECONDS": "1",
            "SPADES_BOT_DELAY_MS": "150",
            "SPADES_WEB_DIST": str(web_dist),
        },
    )
    live.start()
    yield live
    live.stop()


def graphql(server: LiveServer, token: str | None, query: str, **variables: Any) -> Any:
    """One operation over HTTP that must succeed; its data."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    answer = httpx.post(
        server.http_url, json={"query": query, "variables": variables}, headers=headers, timeout=30
    ).json()
    assert not answer.get("errors"), answer
    return answer["data"]


def game_subscriptions(frames: list[str]) -> list[dict[str, Any]]:
    """The variables of every gameUpdates subscription the page sent."""
    found = []
    for frame in frames:
        message = json.loads(frame)
        payload = message.get("payload") or {}
        if message.get("type") == "subscribe" and "GameUpdates" in str(payload):
            found.append(dict(payload.get("variables") or {}))
    return found


def test_the_table_page_rides_out_a_server_restart_with_since_and_no_error(
    browser: Any, restarting_server: LiveServer
) -> None:
    server = restarting_server
    sent: list[str] = []
    north = pages.sign_up(
        browser,
        server,
        "steady",
        on_page=lambda page: page.on(
            "websocket", lambda socket: socket.on("framesent", lambda f: sent.append(str(f)))
        ),
    )
    table_id = pages.create_table(north, "Restart table", turn_seconds=300)
    south = graphql(server, None, SIGN_UP, u=pages.unique_name("south"), p="password123")
    south_token = south["signUp"]["token"]
    graphql(server, south_token, JOIN_SOUTH, t=table_id)
    pages.add_bot(north, "EAST")
    pages.add_bot(north, "WEST")
    # North deals: East (a bot) bids, then it is South's turn.
    north.page.locator(".game[data-turn=SOUTH]").wait_for()
    north.page.locator("[data-link=online]").wait_for()
    shown = north.version()

    server.signal(signal.SIGTERM)
    assert server.exit_code(timeout=30) == 0
    server.start()
    # South bids as soon as the server is back, whether or not the page is yet; West (a
    # bot) answers, and it is North's turn.
    before = graphql(server, south_token, VERSION, t=table_id)["game"]
    assert before["version"] == shown
    graphql(server, south_token, PLACE_BID, t=table_id, b={"kind": "TRICKS", "tricks": 3}, v=shown)
    north.page.locator("[data-link=online]").wait_for(timeout=30_000)
    pages.wait_turn(north)
    after = graphql(server, south_token, VERSION, t=table_id)["game"]
    north.wait_version_at_least(after["version"])
    assert north.version() == after["version"]
    assert north.page.locator("[data-bid-of=SOUTH]").inner_text() == "3"
    assert north.page.locator("[data-bid-of=WEST]").inner_text() != "\u2013"  # bid
    # The page went on by itself: it asked for what followed the version it showed.
    assert {"tableId": table_id, "since": shown} in game_subscriptions(sent)

    # And it plays on.
    pages.act(north, 3)
    north.wait_version_at_least(after["version"] + 1)
    assert north.page.locator("[role=alert]").count() == 0
