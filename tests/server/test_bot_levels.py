"""Bot levels through the real server: addBot(level), SeatState.botLevel, EXPERT thinking
off the event loop, bot levels kept across a restart."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.rules.record import replay_record
from tests.support.client import Api
from tests.support.play import HumanTable, game_record, sign_up_players
from tests.support.server import LiveServer

# Each EXPERT decision thinks for 8 s here: long enough that the human table's moves
# all land while it thinks, if (and only if) the thinking is off the event loop.
SLOW_EXPERT_ENV = {"SPADES_EXPERT_MS": "8000", "SPADES_BOT_WORKERS": "1"}
SEATS_QUERY = """query($t: ID!) { game(tableId: $t) {
  phase version turn seats { seat playerId isBot botLevel } } }"""


@pytest.fixture(scope="module")
def slow_expert_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path_factory.mktemp("levels") / "spades.db", env=SLOW_EXPERT_ENV)
    live.start(timeout=60)
    yield live
    live.stop()


async def add_bot(api: Api, table_id: str, seat: str, level: str | None) -> dict[str, Any]:
    """addBot, with a level or without one (the default)."""
    if level is None:
        query = "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s) { id } }"
        return await api.call(query, t=table_id, s=seat)
    query = (
        "mutation($t: ID!, $s: Seat!, $l: BotLevel!) "
        "{ addBot(tableId: $t, seat: $s, level: $l) { id } }"
    )
    return await api.call(query, t=table_id, s=seat, l=level)


async def levels_of(api: Api, table_id: str) -> dict[str, str | None]:
    """Every seat's botLevel as the caller's game view has it."""
    game = (await api.call(SEATS_QUERY, t=table_id))["game"]
    return {s["seat"]: s["botLevel"] for s in game["seats"]}


async def game_state(api: Api, table_id: str) -> dict[str, Any]:
    return dict((await api.call(SEATS_QUERY, t=table_id))["game"])


async def test_add_bot_takes_a_level_and_seats_show_it(slow_expert_server: LiveServer) -> None:
    (host,) = await sign_up_players(slow_expert_server, 1)
    table = await host.create_table(name="levels")
    await add_bot(host, table["id"], "EAST", "STANDARD")
    await add_bot(host, table["id"], "WEST", None)
    levels = await levels_of(host, table["id"])
    assert levels == {"NORTH": None, "EAST": "STANDARD", "SOUTH": None, "WEST": "BASIC"}


async def test_expert_table_does_not_delay_a_human_table(slow_expert_server: LiveServer) -> None:
    host, *humans = await sign_up_players(slow_expert_server, 5)
    # Table A: one human and three EXPERT bots. NORTH deals, so EAST (a bot) bids first.
    expert_table = (await host.create_table(name="experts"))["id"]
    for seat in ("EAST", "SOUTH", "WEST"):
        await add_bot(host, expert_table, seat, "EXPERT")
    started = await game_state(host, expert_table)
    assert started["phase"] == "BIDDING" and started["turn"] == "EAST"
    # Table B: four humans, playing while A's first EXPERT decision is being thought out.
    human_table = (await humans[0].create_table(name="humans"))["id"]
    players = dict(zip(("NORTH", "EAST", "SOUTH", "WEST"), humans, strict=True))
    for seat in ("EAST", "SOUTH", "WEST"):
        await players[seat].join(human_table, seat)
    table = HumanTable(human_table, players)
    view = await table.view("NORTH")
    for _ in range(12):  # four bids and two tricks
        view = await table.step(view)
    assert view["phase"] == "PLAYING"
    thinking = await game_state(host, expert_table)
    assert thinking["version"] == started["version"], "the human table waited for the expert"
    # The expert's bid lands once thought out (exactly once: the version moves by one).
    for _ in range(200):
        await asyncio.sleep(0.1)
        after = await game_state(host, expert_table)
        if after["version"] != started["version"]:
            break
    assert after["version"] == started["version"] + 1
    assert after["turn"] == "SOUTH"


async def test_expert_and_standard_bots_play_a_game_that_replays(tmp_path: Path) -> None:
    env = {"SPADES_EXPERT_MS": "5", "SPADES_BOT_WORKERS": "1", "SPADES_BOT_DELAY_MS": "0"}
    live = LiveServer(tmp_path / "spades.db", env=env)
    live.start(timeout=60)
    try:
        (host,) = await sign_up_players(live, 1)
        table_id = (await host.create_table(name="mixed"))["id"]
        await add_bot(host, table_id, "EAST", "EXPERT")
        await add_bot(host, table_id, "SOUTH", "STANDARD")
        await add_bot(host, table_id, "WEST", "EXPERT")
        table = HumanTable(table_id, {"NORTH": host})
        view = await host.game(table_id)
        for _ in range(5000):
            if view["phase"] == "GAME_OVER":
                break
            if view["turn"] == "NORTH" and view["viewerSeat"] == "NORTH":
                view = await table.step(view)
            else:
                await asyncio.sleep(0.05)
                view = await host.game(table_id)
        assert view["phase"] == "GAME_OVER"
        record = await game_record(host, table_id)
        replay_record(record)
        assert await levels_of(host, table_id) == {
            "NORTH": None,
            "EAST": "EXPERT",
            "SOUTH": "STANDARD",
            "WEST": "EXPERT",
        }
        # The levels are stored with the seats: a restarted server still has them.
        live.stop()
        live.start(timeout=60)
        assert (await levels_of(host, table_id))["SOUTH"] == "STANDARD"
        assert (await levels_of(host, table_id))["EAST"] == "EXPERT"
    finally:
        live.stop()
