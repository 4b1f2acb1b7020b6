"""Turn clocks (docs/rules.md, "Live tables"): the deadline in the view, the timeout and the
move made for the seat, replacement after two timeouts, reclaiming, races, replay.

The server here runs turns at a fifth of their length (SPADES_TURN_CLOCK_SCALE), so a
10-second clock lasts 2 seconds; test_real_clock.py runs one real 5-second clock."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.client import Api, next_update
from tests.support.live import (
    LIVE_GAME,
    LIVE_UPDATES,
    RECLAIM,
    game_updates,
    hosting_bots,
    instant,
    refusal_code,
    seat_of,
)
from tests.support.scenarios import FastApi, assert_log_without_gaps, signed_up, ws_answers
from tests.support.server import LiveServer
from tests.support.social import Beacon, lobby_stream

SCALE = 0.2
BOT_LEVELS = "query($t: ID!) { game(tableId: $t) { seats { seat playerId isBot botLevel } } }"
UPDATE_TABLE = (
    "mutation($t: ID!, $i: UpdateTableInput!) { updateTable(tableId: $t, input: $i) "
    "{ turnSeconds replacementBot visibility } }"
)
BID = "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 2}) { version } }"
RECORD = "query($t: ID!) { gameRecord(tableId: $t) }"
CREATE = (
    "mutation($i: CreateTableInput!) { createTable(input: $i) "
    "{ id turnSeconds replacementBot status } }"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("clocks")
    live = LiveServer(folder / "spades.db", env={"SPADES_TURN_CLOCK_SCALE": str(SCALE)})
    live.start()
    yield live
    live.stop()


async def four_humans(server: LiveServer, **options: object) -> tuple[str, dict[str, FastApi]]:
    north, east, south, west = await signed_up(server, 4)
    table = await north.create_table(seed=11, **options)
    players = {"NORTH": north, "EAST": east, "SOUTH": south, "WEST": west}
    code = None
    if options.get("visibility") == "PRIVATE":
        link = "mutation($t: ID!) { createJoinLink(tableId: $t) }"
        code = (await north.call(link, t=table["id"]))["createJoinLink"]
    for seat in ("EAST", "SOUTH", "WEST"):
        await players[seat].join(table["id"], seat, code)
    return str(table["id"]), players


async def spades_bid(api: Api, table_id: str) -> None:
    await api.bid(table_id, "TRICKS", 3)


# ---------------------------------------------------------------------------- options


async def test_turn_seconds_default_to_30_and_replacement_bot_to_basic(server: LiveServer) -> None:
    (host,) = await signed_up(server, 1)
    table = (await host.call(CREATE, i={}))["createTable"]
    assert table["turnSeconds"] == 30
    assert table["replacementBot"] == "BASIC"
    assert table["status"] == "WAITING"


@pytest.mark.parametrize("seconds", [-1, 1, 4, 301, 10_000])
async def test_turn_seconds_outside_5_to_300_are_refused(server: LiveServer, seconds: int) -> None:
    (host,) = await signed_up(server, 1)
    assert await refusal_code(host, CREATE, i={"turnSeconds": seconds}) == "BAD_USER_INPUT"
    # Nothing was created.
    lobby = (await host.call("{ lobby { host { id } } }"))["lobby"]
    assert host.player_id not in [t["host"]["id"] for t in lobby]


async def test_an_untimed_table_must_not_be_public(server: LiveServer) -> None:
    (host,) = await signed_up(server, 1)
    assert await refusal_code(host, CREATE, i={"turnSeconds": 0}) == "BAD_USER_INPUT"
    for visibility in ("FRIENDS_ONLY", "PRIVATE"):
        made = await host.call(CREATE, i={"turnSeconds": 0, "visibility": visibility})
        assert made["createTable"]["turnSeconds"] == 0


async def test_the_host_changes_the_clock_before_the_start_but_never_to_untimed_public(
    server: LiveServer,
) -> None:
    (host,) = await signed_up(server, 1)
    table_id = (await host.call(CREATE, i={"visibility": "PRIVATE", "turnSeconds": 0}))[
        "createTable"
    ]["id"]
    # PUBLIC while untimed: refused, nothing changes.
    code = await refusal_code(host, UPDATE_TABLE, t=table_id, i={"visibility": "PUBLIC"})
    assert code == "BAD_USER_INPUT"
    changed = await host.call(
        UPDATE_TABLE,
        t=table_id,
        i={"visibility": "PUBLIC", "turnSeconds": 45, "replacementBot": "EXPERT"},
    )
    assert changed["updateTable"] == {
        "turnSeconds": 45,
        "replacementBot": "EXPERT",
        "visibility": "PUBLIC",
    }
    code = await refusal_code(host, UPDATE_TABLE, t=table_id, i={"turnSeconds": 0})
    assert code == "BAD_USER_INPUT"
    code = await refusal_code(host, UPDATE_TABLE, t=table_id, i={"turnSeconds": 400})
    assert code == "BAD_USER_INPUT"
    # The refusals changed nothing.
    assert await clock_options(host, table_id) == changed["updateTable"]
    # Once the game started, the clock is what it is.
    for seat in ("EAST", "SOUTH", "WEST"):
        await host.add_bot(table_id, seat)
    code = await refusal_code(host, UPDATE_TABLE, t=table_id, i={"turnSeconds": 60})
    assert code == "WRONG_PHASE"
    assert await clock_options(host, table_id) == changed["updateTable"]


async def clock_options(api: Api, table_id: str) -> dict[str, object]:
    """turnSeconds, replacementBot and visibility of a table."""
    query = "query($t: ID!) { table(id: $t) { turnSeconds replacementBot visibility } }"
    return dict((await api.call(query, t=table_id))["table"])


async def test_server_time_is_an_iso_utc_instant_close_to_now(server: LiveServer) -> None:
    (player,) = await signed_up(server, 1)
    answer = (await player.call("{ serverTime }"))["serverTime"]
    assert answer.endswith("Z")
    assert abs(instant(answer) - time.time()) < 5


# ---------------------------------------------------------------------------- the clock


async def test_the_view_shows_the_deadline_of_a_humans_turn_only(server: LiveServer) -> None:
    table_id, players = await four_humans(server, turnSeconds=10)
    view = (await players["EAST"].call(LIVE_GAME, t=table_id))["game"]
    assert view["turn"] == "EAST"
    left = instant(view["turnDeadline"]) - time.time()
    assert 0 < left <= 10 * SCALE + 0.5
    # Untimed tables show no deadline.
    untimed_id, untimed = await four_humans(server, turnSeconds=0, visibility="PRIVATE")
    assert (await untimed["EAST"].call(LIVE_GAME, t=untimed_id))["game"]["turnDeadline"] is None
    # A bot's turn is not timed.
    (host,) = await signed_up(server, 1)
    async with hosting_bots(host, seed=3, turnSeconds=10) as (_, updates):
        started = await updates.until(lambda u: u["event"] == "GAME_STARTED")
        assert started["view"]["turn"] == "EAST"
        assert started["view"]["turnDeadline"] is None


async def test_a_silent_player_is_timed_out_twice_replaced_reclaims_and_plays_on(
    server: LiveServer,
) -> None:
    table_id, players = await four_humans(server, turnSeconds=10)
    east = players["EAST"]
    async with game_updates(players["NORTH"], table_id) as updates:
        snapshot = await updates.next()
        started_at = snapshot["view"]["version"]
        assert snapshot["view"]["turn"] == "EAST"
        # EAST says nothing: the clock runs out, then EAST's bid is made for it.
        timed = await updates.until(lambda u: u["event"] == "TURN_TIMED_OUT", timeout=15)
        assert timed["seat"] == "EAST"
        assert timed["view"]["turn"] == "EAST"
        bid = await updates.next()
        assert (bid["event"], bid["seat"]) == ("BID_PLACED", "EAST")
        assert seat_of(bid["view"], "EAST")["bid"]["kind"] == "TRICKS"
        # EAST's late bid is refused: the turn has moved on.
        assert await refusal_code(east, BID, t=table_id) == "NOT_YOUR_TURN"
        for seat in ("SOUTH", "WEST", "NORTH"):
            await spades_bid(players[seat], table_id)
        # EAST leads the first trick and stays silent again: second timeout, replaced.
        await updates.until(lambda u: u["view"]["phase"] == "PLAYING", timeout=10)
        second = await updates.until(lambda u: u["event"] == "TURN_TIMED_OUT", timeout=15)
        assert second["seat"] == "EAST"
        replaced = await updates.next()
        assert (replaced["event"], replaced["seat"]) == ("PLAYER_REPLACED", "EAST")
        east_seat = seat_of(replaced["view"], "EAST")
        assert east_seat["isBot"] is True
        assert east_seat["awayPlayer"] == {"id": east.player_id, "username": east.username}
        played = await updates.next()
        assert (played["event"], played["seat"]) == ("CARD_PLAYED", "EAST")

        # Someone else cannot take the seat back; EAST can.
        code = await refusal_code(players["SOUTH"], RECLAIM, t=table_id)
        assert code == "FORBIDDEN"
        # A stranger who may see the table is not the away player either.
        (stranger,) = await signed_up(server, 1)
        assert await refusal_code(stranger, RECLAIM, t=table_id) == "FORBIDDEN"
        back = (await east.call(RECLAIM, t=table_id))["reclaimSeat"]
        assert seat_of(back, "EAST")["playerId"] == east.player_id
        reclaimed = await updates.until(lambda u: u["event"] == "SEAT_RECLAIMED")
        assert reclaimed["seat"] == "EAST"
        assert seat_of(reclaimed["view"], "EAST")["awayPlayer"] is None
        assert seat_of(reclaimed["view"], "EAST")["isBot"] is False
        assert await refusal_code(east, RECLAIM, t=table_id) == "FORBIDDEN"

        # EAST plays on: the others play the trick round to EAST, who plays a card.
        for _ in range(8):
            view = (await players["NORTH"].call(LIVE_GAME, t=table_id))["game"]
            turn = view["turn"]
            own = (await players[turn].call(LIVE_GAME, t=table_id))["game"]
            await players[turn].play(table_id, own["legalPlays"][0])
            if turn == "EAST":
                break
        else:
            raise AssertionError("EAST never got to play again")
        await asyncio.sleep(0.2)
        # Versions are consecutive through timeouts, replacements and the reclaim.
        await updates.quiet(0.3)
        versions = updates.versions
        assert versions == list(range(versions[0], versions[0] + len(versions)))
    assert_log_without_gaps(server.database, table_id)

    # `since` replays the timeouts, the replacement and the reclaim like any change.
    async with game_updates(players["NORTH"], table_id, since=started_at) as replay:
        replayed = [await replay.next() for _ in range(len(updates.items) - 1)]
    live = [(u["event"], u["seat"], u["view"]["version"]) for u in updates.items[1:]]
    assert [(u["event"], u["seat"], u["view"]["version"]) for u in replayed] == live
    live_seats = [u["view"]["seats"] for u in updates.items[1:]]
    assert [u["view"]["seats"] for u in replayed] == live_seats


async def test_a_move_racing_its_own_deadline_applies_once(server: LiveServer) -> None:
    for offset in (-0.05, -0.01, 0.0, 0.01, 0.03):
        table_id, players = await four_humans(server, turnSeconds=5)
        east = players["EAST"]
        async with game_updates(players["NORTH"], table_id) as updates:
            view = (await updates.next())["view"]
            deadline = instant(view["turnDeadline"])
            await asyncio.sleep(max(0.0, deadline - time.time() + offset))
            try:
                await east.bid(table_id, "TRICKS", 4)
                human_won = True
            except Exception as error:  # the clock got there first
                assert getattr(error, "code", None) in ("NOT_YOUR_TURN", "CONFLICT"), error
                human_won = False
            bid = await updates.until(lambda u: u["event"] == "BID_PLACED", timeout=10)
            await updates.quiet(0.5)
        east_bids = [u for u in updates.items if u["event"] == "BID_PLACED" and u["seat"] == "EAST"]
        timeouts = [u for u in updates.items if u["event"] == "TURN_TIMED_OUT"]
        assert len(east_bids) == 1
        assert bid["seat"] == "EAST"
        if human_won:
            assert timeouts == []
            assert seat_of(bid["view"], "EAST")["bid"] == {"kind": "TRICKS", "tricks": 4}
        else:
            assert [t["seat"] for t in timeouts] == ["EAST"]
        assert_log_without_gaps(server.database, table_id)


async def test_a_withheld_seat_times_out_into_a_reveal_and_a_bid_never_blind_nil(
    server: LiveServer,
) -> None:
    table_id, players = await four_humans(server, turnSeconds=15)
    bids = {"NORTH": 13, "SOUTH": 13, "EAST": 1, "WEST": 1}
    # Hand 1: North-South bid 26 in all and are set: 100+ behind, so hand 2 withholds
    # their cards. Everyone plays promptly.
    while True:
        view = (await players["NORTH"].call(LIVE_GAME, t=table_id))["game"]
        if view["handNumber"] == 2:
            break
        turn = view["turn"]
        assert turn is not None
        player = players[turn]
        if view["phase"] == "BIDDING":
            await player.bid(table_id, "TRICKS", bids[turn])
        else:
            own = (await player.call(LIVE_GAME, t=table_id))["game"]
            await player.play(table_id, own["legalPlays"][0])
    south = (await players["SOUTH"].call(LIVE_GAME, t=table_id))["game"]
    assert south["turn"] == "SOUTH" and south["handWithheld"] is True
    async with game_updates(players["EAST"], table_id) as updates:
        await updates.next()
        timed = await updates.until(lambda u: u["event"] == "TURN_TIMED_OUT", timeout=15)
        assert timed["seat"] == "SOUTH"
        revealed = await updates.next()
        assert (revealed["event"], revealed["seat"]) == ("HAND_REVEALED", "SOUTH")
        bid = await updates.next()
        assert (bid["event"], bid["seat"]) == ("BID_PLACED", "SOUTH")
        assert seat_of(bid["view"], "SOUTH")["bid"]["kind"] == "TRICKS"


async def test_a_table_whose_humans_are_only_away_plays_on_with_bots(server: LiveServer) -> None:
    (host,) = await signed_up(server, 1)
    async with hosting_bots(host, seed=5, turnSeconds=5) as (table_id, updates):
        replaced = await updates.until(lambda u: u["event"] == "PLAYER_REPLACED", timeout=30)
        assert replaced["seat"] == "NORTH"
        # Only bots sit now, but the host may come back: the game goes on.
        later = await updates.until(
            lambda u: u["view"]["version"] >= replaced["view"]["version"] + 20, timeout=20
        )
        assert later["event"] != "TABLE_CLOSED"
        table = await host.call("query($t: ID!) { table(id: $t) { status } }", t=table_id)
        assert table["table"]["status"] == "PLAYING"
        await host.call(RECLAIM, t=table_id)
        back = await updates.until(lambda u: u["event"] == "SEAT_RECLAIMED")
        assert seat_of(back["view"], "NORTH")["playerId"] == host.player_id


async def test_a_player_who_left_cannot_reclaim(server: LiveServer) -> None:
    table_id, players = await four_humans(server, turnSeconds=60)
    await players["WEST"].leave(table_id)
    assert await refusal_code(players["WEST"], RECLAIM, t=table_id) in ("FORBIDDEN", "NOT_FOUND")


@pytest.fixture
def unhurried_bots(tmp_path: Path) -> Iterator[LiveServer]:
    """A server whose bots take 100 ms a move: with only bots seated, a whole game lasts
    about a minute, so a test can act on it while it is still in progress."""
    live = LiveServer(
        tmp_path / "spades.db",
        env={"SPADES_TURN_CLOCK_SCALE": str(SCALE), "SPADES_BOT_DELAY_MS": "100"},
    )
    live.start()
    yield live
    live.stop()


async def test_an_away_player_who_leaves_gives_up_the_seat_to_the_bot(
    unhurried_bots: LiveServer,
) -> None:
    server = unhurried_bots
    # NORTH (the host) and EAST stay silent: both are replaced and become away players.
    (north, east) = await signed_up(server, 2)
    table_id = (await north.create_table(seed=5, turnSeconds=5))["id"]
    await east.join(table_id, "EAST")
    async with game_updates(north, table_id) as updates:
        await updates.next()
        for seat in ("SOUTH", "WEST"):
            await north.add_bot(table_id, seat)
        for seat in ("EAST", "NORTH"):
            await updates.until(
                lambda u, seat=seat: u["event"] == "PLAYER_REPLACED" and u["seat"] == seat,
                timeout=30,
            )
        # EAST leaves: the bot keeps the seat for good; NORTH could still come back.
        assert await east.leave(table_id) is True
        left = await updates.until(
            lambda u: u["event"] == "PLAYER_REPLACED" and u["seat"] == "EAST", timeout=10
        )
        assert seat_of(left["view"], "EAST")["isBot"] is True
        assert seat_of(left["view"], "EAST")["awayPlayer"] is None
        assert seat_of(left["view"], "NORTH")["awayPlayer"]["id"] == north.player_id
        assert await refusal_code(east, RECLAIM, t=table_id) == "FORBIDDEN"
        table = await north.call("query($t: ID!) { table(id: $t) { status } }", t=table_id)
        assert table["table"]["status"] == "PLAYING"
        # `since` replays the leaving like any change.
        async with game_updates(north, table_id, since=left["view"]["version"] - 1) as replay:
            again = await replay.next()
        assert (again["event"], again["seat"]) == ("PLAYER_REPLACED", "EAST")
        assert again["view"]["seats"] == left["view"]["seats"]
        # The last away player leaving: nobody could come back, the table closes.
        assert await north.leave(table_id) is True
        gone = await updates.until(
            lambda u: u["event"] == "PLAYER_REPLACED" and u["seat"] == "NORTH", timeout=10
        )
        closed = await updates.next()
        assert closed["event"] == "TABLE_CLOSED"
        assert closed["view"]["version"] == gone["view"]["version"] + 1
    assert await refusal_code(north, RECLAIM, t=table_id) in ("FORBIDDEN", "WRONG_PHASE")
    assert_log_without_gaps(server.database, table_id)


async def test_reclaiming_after_game_over_is_the_wrong_phase(server: LiveServer) -> None:
    # One human and three bots; the human is replaced after two timeouts and the bots
    # finish the game. The away player then asks too late.
    (host,) = await signed_up(server, 1)
    async with hosting_bots(host, seed=9, turnSeconds=5) as (table_id, updates):
        await updates.until(lambda u: u["event"] == "GAME_OVER", timeout=120)
    assert await refusal_code(host, RECLAIM, t=table_id) == "WRONG_PHASE"
    # The record shows the seat changing hands in the hand it happened (docs/record.md).
    record = (await host.call(RECORD, t=table_id))["gameRecord"]
    assert record["players"]["NORTH"] == host.player_id
    changed = [hand for hand in record["hands"] if "players" in hand]
    assert changed and changed[0]["players"]["NORTH"] == "bot:north", record["hands"][0]
    assert all(hand.get("players", {}).get("NORTH") != host.player_id for hand in changed)


# ---------------------------------------------------------------------------- closing


async def test_the_last_human_leaving_closes_the_table_for_everyone_watching(
    server: LiveServer,
) -> None:
    (host, spectator) = await signed_up(server, 2)
    table_id = (await host.create_table(seed=4, turnSeconds=60))["id"]
    for seat in ("EAST", "SOUTH", "WEST"):
        await host.add_bot(table_id, seat)
    beacon = await Beacon.create(server)
    async with (
        game_updates(spectator, table_id) as watching,
        # Synced: the lobby subscription is registered on the server before the host leaves
        # (a fixed pause left its TABLE_REMOVED to chance on a loaded machine).
        lobby_stream(spectator, beacon) as lobby,
    ):
        await watching.next()
        await host.leave(table_id)
        replaced = await watching.until(lambda u: u["event"] == "PLAYER_REPLACED")
        closed = await watching.next()
        assert closed["event"] == "TABLE_CLOSED"
        assert closed["view"]["version"] == replaced["view"]["version"] + 1
        while True:
            update = (await next_update(lobby.queue, 10))["lobbyUpdates"]
            if (update["event"], update["tableId"]) == ("TABLE_REMOVED", table_id):
                break
    status = await spectator.call("query($t: ID!) { table(id: $t) { status } }", t=table_id)
    assert status["table"]["status"] == "CLOSED"
    # Every move is refused; a new subscription sees the last change and ends.
    assert await refusal_code(host, RECLAIM, t=table_id) in ("FORBIDDEN", "WRONG_PHASE")
    # A new subscription gets the table as it was closed, then the stream completes.
    subscribe = {
        "id": "1",
        "type": "subscribe",
        "payload": {"query": LIVE_UPDATES, "variables": {"t": table_id}},
    }
    answers, _ = await ws_answers(server, spectator.token, [json.dumps(subscribe)], replies=2)
    assert [a["type"] for a in answers] == ["next", "complete"]
    snapshot = answers[0]["payload"]["data"]["gameUpdates"]
    assert snapshot["view"]["version"] == closed["view"]["version"]
    async with game_updates(spectator, table_id, since=replaced["view"]["version"] - 1) as replay:
        assert [(await replay.next())["event"] for _ in range(2)] == [
            "PLAYER_REPLACED",
            "TABLE_CLOSED",
        ]


async def test_a_waiting_table_closes_when_its_last_human_leaves(server: LiveServer) -> None:
    (host, other) = await signed_up(server, 2)
    table_id = (await host.create_table())["id"]
    async with game_updates(other, table_id) as watching:
        await watching.next()
        await host.leave(table_id)
        left = await watching.next()
        closed = await watching.next()
    assert left["event"] == "SEAT_LEFT"
    assert closed["event"] == "TABLE_CLOSED"
    code = await refusal_code(
        other, "mutation($t: ID!) { joinTable(tableId: $t, seat: EAST) { id } }", t=table_id
    )
    assert code in ("WRONG_PHASE", "NOT_FOUND")


async def test_a_replacement_bot_has_the_tables_level_and_reclaiming_on_its_turn_starts_a_clock(
    tmp_path: Path,
) -> None:
    # Bots take 1.5 s a move here, so the away player can reclaim while the bot standing
    # in is still to move.
    env = {"SPADES_TURN_CLOCK_SCALE": str(SCALE), "SPADES_BOT_DELAY_MS": "1500"}
    live = LiveServer(tmp_path / "spades.db", env=env)
    live.start()
    try:
        (host,) = await signed_up(live, 1)
        options = {"seed": 6, "turnSeconds": 5, "replacementBot": "STANDARD"}
        async with hosting_bots(host, **options) as (table_id, updates):
            replaced = await updates.until(lambda u: u["event"] == "PLAYER_REPLACED", timeout=40)
            assert replaced["seat"] == "NORTH"
            levels = await host.call(BOT_LEVELS, t=table_id)
            north = seat_of(levels["game"], "NORTH")
            assert (north["isBot"], north["botLevel"]) == (True, "STANDARD")
            # The bot's turn has no clock; the away player takes the seat back on it.
            bots_turn = await updates.until(
                lambda u: u["view"]["turn"] == "NORTH" and u["event"] != "PLAYER_REPLACED",
                timeout=20,
            )
            assert bots_turn["view"]["turnDeadline"] is None
            asked = time.time()
            await host.call(RECLAIM, t=table_id)
            back = await updates.until(lambda u: u["event"] == "SEAT_RECLAIMED")
            assert back["view"]["version"] == bots_turn["view"]["version"] + 1
            assert back["view"]["turn"] == "NORTH"
            # A fresh clock of the whole turnSeconds (5 s, at this server's scale).
            left = instant(back["view"]["turnDeadline"]) - asked
            assert 5 * SCALE - 0.5 <= left <= 5 * SCALE + 0.5, left
    finally:
        live.stop()
