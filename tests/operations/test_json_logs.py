"""SPADES_LOG_FORMAT=json: every line the server writes is one JSON object with its time,
level, logger and message, and the request, operation, player and table it belongs to
where they apply; a whole game logged at DEBUG holds no token, no password and no card
(the server never logs one, played or not)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.rules.cards import FULL_DECK, Card
from tests.support.play import (
    KeepAliveApi,
    game_over,
    kept_alive,
    north_south_overbid,
    play_with_bots,
    watching,
)
from tests.support.scenarios import SIGN_IN
from tests.support.server import LiveServer

SEED = 16
PASSWORDS = ("north-secret-1234", "south-secret-5678")
REQUEST_ID = "operator-trace-42"
JSON_DEBUG = {"SPADES_LOG_FORMAT": "json", "SPADES_LOG_LEVEL": "debug"}


def card_patterns(card: Card) -> list[re.Pattern[str]]:
    """A card as the server writes it: its code as a JSON or Python string (`"AS"`), or
    its rank and suit together (`{"rank": "ACE", "suit": "SPADES"}`, either order)."""
    rank, suit = card.rank.name, card.suit.name
    near = r"[^{}\n]{0,40}?"
    return [
        re.compile(rf"[\"']{card.code}[\"']"),
        re.compile(rf"\b{rank}\b{near}\b{suit}\b"),
        re.compile(rf"\b{suit}\b{near}\b{rank}\b"),
    ]


@dataclass
class Game:
    """A whole game of two humans and two bots, and what it issued."""

    lines: list[dict[str, Any]]
    text: str  # as written, and with each line's values decoded (no JSON escapes)
    table_id: str
    players: dict[str, KeepAliveApi]
    tokens: list[str]


async def play_a_whole_game(server: LiveServer) -> tuple[str, dict[str, KeepAliveApi], list[str]]:
    north, south = KeepAliveApi(server), KeepAliveApi(server)
    await north.sign_up(password=PASSWORDS[0])
    await south.sign_up(password=PASSWORDS[1])
    tokens = [str(north.token), str(south.token)]
    for api, password in ((north, PASSWORDS[0]), (south, PASSWORDS[1])):
        signed_in = await api.call(SIGN_IN, u=api.username, p=password)
        api.token = signed_in["signIn"]["token"]
        tokens.append(str(api.token))
    table_id = str((await north.create_table(name="logged", seed=SEED))["id"])
    await south.join(table_id, "SOUTH")
    humans = {"NORTH": north, "SOUTH": south}
    async with kept_alive(north, south), watching(humans, table_id) as watchers:
        for seat in ("EAST", "WEST"):
            await north.add_bot(table_id, seat)
        last = await play_with_bots(
            humans, watchers, table_id, lambda u: game_over(u["view"]), north_south_overbid
        )
    assert last["view"]["phase"] == "GAME_OVER"
    async with httpx.AsyncClient() as client:
        answer = await client.post(
            server.http_url,
            json={"query": "query($t: ID!) { game(tableId: $t) { version } }", "variables": {
                "t": table_id
            }},
            headers={"Authorization": f"Bearer {north.token}", "X-Request-ID": REQUEST_ID},
        )  # fmt: skip
        assert answer.status_code == 200
    return table_id, humans, tokens


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Game]:
    server = LiveServer(tmp_path_factory.mktemp("logs") / "spades.db", env=JSON_DEBUG)
    server.start()
    try:
        table_id, players, tokens = asyncio.run(play_a_whole_game(server))
    finally:
        server.stop()
    written = server.logs()
    lines = [json.loads(line) for line in written.splitlines() if line.strip()]
    decoded = "\n".join(str(value) for line in lines for value in line.values())
    yield Game(lines, written + "\n" + decoded, table_id, players, tokens)


def test_every_line_is_one_json_object_with_time_level_logger_and_message(game: Game) -> None:
    assert len(game.lines) > 100  # a whole game at DEBUG
    for line in game.lines:
        assert isinstance(line, dict)
        assert {"time", "level", "logger", "message"} <= line.keys(), line
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00", line["time"])
    loggers = {line["logger"] for line in game.lines}
    assert {"uvicorn.error", "uvicorn.access"} <= loggers  # uvicorn's own lines too


def test_a_move_is_logged_with_its_request_operation_player_and_table(game: Game) -> None:
    north = game.players["NORTH"]
    moves = [
        line
        for line in game.lines
        if line.get("operation") == "playCard" and line.get("player_id") == north.player_id
    ]
    assert moves, "no line names a card played by NORTH"
    for line in moves:
        assert line["table_id"] == game.table_id
        assert re.fullmatch(r"[0-9a-f]{32}", line["request_id"])
    assert len({line["request_id"] for line in moves}) == len(moves)  # one id per request


def test_a_request_id_sent_by_the_client_is_the_one_logged(game: Game) -> None:
    (line,) = [line for line in game.lines if line.get("request_id") == REQUEST_ID]
    assert line["operation"] == "game" and line["table_id"] == game.table_id
    assert line["player_id"] == game.players["NORTH"].player_id


def test_a_subscription_is_logged_with_its_operation_player_and_table(game: Game) -> None:
    started = [line for line in game.lines if line["message"] == "subscription started"]
    assert {(line["operation"], line["table_id"], line["player_id"]) for line in started} >= {
        ("gameUpdates", game.table_id, api.player_id) for api in game.players.values()
    }


def test_lines_outside_a_request_carry_no_request_fields(game: Game) -> None:
    started = [line for line in game.lines if "Application startup complete" in line["message"]]
    assert started and not {"request_id", "player_id", "operation"} & started[0].keys()


def test_a_whole_game_logs_no_token_no_password_and_no_card(game: Game) -> None:
    for token in game.tokens:
        assert token[:12] not in game.text and token[-12:] not in game.text, "a token is logged"
    for password in PASSWORDS:
        assert password not in game.text, "a password is logged"
    for card in FULL_DECK:
        for pattern in card_patterns(card):
            found = pattern.search(game.text)
            assert found is None, f"{card.code} is logged: ...{found.group(0)}..."
