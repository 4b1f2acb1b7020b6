"""Rematch (docs/rules.md, Rematch) on a real server: every seated human asks after GAME_OVER,
bots agree, and one new table opens with the same options, occupants, seats and host,
its game started; the old table's last change names it, and the old table's spectators
and link holders follow it there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from app.rules.dealing import rematch_seed
from tests.support.client import next_update
from tests.support.live import game_updates, refusal_code
from tests.support.scenarios import assert_log_without_gaps
from tests.support.server import LiveServer
from tests.support.social import Beacon, Social, befriend, lobby_stream
from tests.support.table_talk import (
    REMATCH_UPDATES,
    REQUEST_REMATCH,
    play_to_game_over,
    rematch_watch,
    request_rematch,
    table,
)

SEE_TABLE = "query($t: ID!) { table(id: $t) { id } }"
# The reconnect window of `away_server`: a player who drops mid-game is replaced by a bot
# (and becomes the seat's away player) after this many seconds.
RECONNECT = 1.0


@pytest.fixture(scope="module")
def away_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose reconnect window is short, so a host who drops out is soon away."""
    folder = tmp_path_factory.mktemp("rematch_away")
    live = LiveServer(folder / "spades.db", env={"SPADES_RECONNECT_SECONDS": str(RECONNECT)})
    live.start()
    yield live
    live.stop()


def occupants(payload: dict[str, object]) -> list[tuple[str, str | None]]:
    """(seat, playerId) of a Table payload."""
    seats = payload["seats"]
    assert isinstance(seats, list)
    return [(s["seat"], s["playerId"]) for s in seats]


async def test_two_humans_and_two_bots_get_one_rematch_table_that_a_spectator_follows(
    server: LiveServer,
) -> None:
    north, south, spectator, stranger = [await Social.signed_up(server) for _ in range(4)]
    old_id = (await north.create_table(name="again?", visibility="PRIVATE", seed=3))["id"]
    await south.join(old_id, "SOUTH", await north.join_link(old_id))
    await north.add_bot(old_id, "EAST")
    await north.add_bot(old_id, "WEST")
    await spectator.watch(old_id, await north.spectator_link(old_id))
    old = await table(north, old_id)

    # Not before GAME_OVER, not by someone without a seat, nothing for those who see nothing.
    assert await north.error(REQUEST_REMATCH, t=old_id) == "WRONG_PHASE"
    assert await spectator.error(REQUEST_REMATCH, t=old_id) == "FORBIDDEN"
    assert await stranger.error(REQUEST_REMATCH, t=old_id) == "NOT_FOUND"

    beacon = await Beacon.create(server)
    async with (
        rematch_watch(spectator, old_id) as watcher,
        lobby_stream(spectator, beacon) as lobby,
    ):
        over = await play_to_game_over({"NORTH": north, "SOUTH": south}, old_id)
        finished = over["version"]
        assert (await watcher.view_at(finished))["phase"] == "GAME_OVER"

        asked = await request_rematch(north, old_id)
        assert asked["id"] == old_id
        assert asked["game"]["rematchRequests"] == ["NORTH"]
        assert asked["game"]["version"] == finished + 1
        assert asked["game"]["nextTableId"] is None
        # Asking twice is harmless: no second change.
        again = await request_rematch(north, old_id)
        assert again["game"]["version"] == finished + 1
        assert await spectator.error(REQUEST_REMATCH, t=old_id) == "FORBIDDEN"

        new = await request_rematch(south, old_id)
        new_id = new["id"]
        assert new_id != old_id
        assert new["rematchOf"] == old_id
        assert new["status"] == "PLAYING"
        assert new["host"] == old["host"]
        assert occupants(new) == occupants(old)
        assert (new["visibility"], new["joinPolicy"], new["spectating"]) == (
            old["visibility"],
            old["joinPolicy"],
            old["spectating"],
        )
        assert new["game"]["phase"] in ("BIDDING", "PLAYING")
        assert new["game"]["handNumber"] == 1
        assert new["game"]["viewerSeat"] == "SOUTH"

        # The spectator of the old table sees the two requests and the start, in order.
        updates = await watcher.until(lambda u: u["event"] == "REMATCH_STARTED")
        assert [(u["event"], u["seat"], u["view"]["version"]) for u in updates] == [
            ("REMATCH_REQUESTED", "NORTH", finished + 1),
            ("REMATCH_REQUESTED", "SOUTH", finished + 2),
            ("REMATCH_STARTED", None, finished + 3),
        ]
        assert updates[-1]["view"]["nextTableId"] == new_id
        assert updates[-1]["view"]["phase"] == "GAME_OVER"
        # The lobby shows the new table like any new table.
        assert "TABLE_CREATED" in await lobby.events_for(new_id)

    # The spectator follows nextTableId without a new code; a stranger still sees nothing.
    assert (await table(spectator, new_id))["rematchOf"] == old_id
    assert new_id in await spectator.lobby_ids()
    async with rematch_watch(spectator, new_id) as followed:
        snapshot = followed.received[0]["view"]
        assert snapshot["tableId"] == new_id and snapshot["phase"] != "WAITING"
        assert snapshot["hand"] is None
    assert (await north.game(new_id))["viewerSeat"] == "NORTH"
    assert await stranger.error("query($t: ID!) { table(id: $t) { id } }", t=new_id) == (
        "NOT_FOUND"
    )

    # After the start the old table changes no more; asking answers the new table.
    assert (await request_rematch(north, old_id))["id"] == new_id
    assert (await table(north, old_id))["game"]["version"] == finished + 3
    # Catching up with `since` replays the rematch changes from the move log.
    async with spectator.subscribe(REMATCH_UPDATES, t=old_id, s=finished) as queue:
        replayed = [(await next_update(queue))["gameUpdates"] for _ in range(3)]
    assert [(u["event"], u["view"]["version"]) for u in replayed] == [
        ("REMATCH_REQUESTED", finished + 1),
        ("REMATCH_REQUESTED", finished + 2),
        ("REMATCH_STARTED", finished + 3),
    ]
    assert [u["view"]["rematchRequests"] for u in replayed] == [
        ["NORTH"],
        ["NORTH", "SOUTH"],
        ["NORTH", "SOUTH"],
    ]
    assert [u["view"]["nextTableId"] for u in replayed] == [None, None, new_id]
    assert assert_log_without_gaps(server.database, old_id) == finished + 3
    assert_log_without_gaps(server.database, new_id)


async def test_bots_always_agree_and_the_offer_ends_after_the_window(tmp_path: Path) -> None:
    server = LiveServer(tmp_path / "spades.db", env={"SPADES_REMATCH_SECONDS": "6"})
    server.start()
    try:
        alone = await Social.signed_up(server)
        first = (await alone.create_table(seed=8))["id"]
        for seat in ("EAST", "SOUTH", "WEST"):
            await alone.add_bot(first, seat)
        await play_to_game_over({"NORTH": alone}, first)
        # The only human asks: the bots agree, the rematch starts at once.
        second = await request_rematch(alone, first)
        assert second["rematchOf"] == first and second["status"] == "PLAYING"

        over = await play_to_game_over({"NORTH": alone}, second["id"])
        await asyncio.sleep(6.5)
        assert await alone.error(REQUEST_REMATCH, t=second["id"]) == "WRONG_PHASE"
        after = await table(alone, second["id"])
        assert after["game"]["version"] == over["version"]  # nothing changed
        assert after["game"]["nextTableId"] is None
    finally:
        server.stop()


@asynccontextmanager
async def host_gone_away(host: Social, south: Social, visibility: str) -> AsyncIterator[str]:
    """A table of `host` (NORTH; `south` at SOUTH, bots at EAST and WEST) whose host
    dropped out mid-game and was replaced by a bot: they are its away player, so the
    rematch will have another host (the first seated human from NORTH: `south`). SOUTH
    stays connected (else the short window would replace them too) for the block."""
    table_id = str((await host.create_table(visibility=visibility, seed=4))["id"])
    code = await host.join_link(table_id) if visibility == "PRIVATE" else None
    await south.join(table_id, "SOUTH", code)
    async with game_updates(south, table_id) as updates:
        async with game_updates(host, table_id) as hosts:
            for seat in ("EAST", "WEST"):
                await host.add_bot(table_id, seat)
            await hosts.until(lambda u: u["event"] == "GAME_STARTED")
        replaced = await updates.until(
            lambda u: u["event"] == "PLAYER_REPLACED", timeout=3.5 + RECONNECT + 10
        )
        assert replaced["seat"] == "NORTH"
        north = next(s for s in replaced["view"]["seats"] if s["seat"] == "NORTH")
        assert north["awayPlayer"]["id"] == host.pid
        yield table_id


async def test_a_spectator_without_a_link_follows_next_table_id_to_a_private_rematch(
    away_server: LiveServer,
) -> None:
    host, south, stranger = [await Social.signed_up(away_server) for _ in range(3)]
    async with host_gone_away(host, south, "PRIVATE") as old_id:
        # The away host watches the game that goes on without them: no link of any kind,
        # the table shows itself to them as its away player.
        await host.watch(old_id)
        async with rematch_watch(host, old_id) as watcher:
            await play_to_game_over({"SOUTH": south}, old_id)
            new = await request_rematch(south, old_id)
            started = await watcher.until(lambda u: u["event"] == "REMATCH_STARTED")
    new_id = started[-1]["view"]["nextTableId"]
    assert new["id"] == new_id and new["rematchOf"] == old_id
    assert new["visibility"] == "PRIVATE"
    # The host sits at neither table now, so the rematch is hosted by SOUTH ...
    assert new["host"]["id"] == south.pid
    assert host.pid not in [pid for _, pid in occupants(new)]
    # ... yet the spectator of the old table keeps seeing and watching the new one.
    assert (await table(host, new_id))["rematchOf"] == old_id
    assert new_id in await host.lobby_ids()
    assert (await host.watch(new_id))["id"] == new_id
    async with rematch_watch(host, new_id) as followed:
        snapshot = followed.received[0]["view"]
        assert snapshot["tableId"] == new_id and snapshot["viewerSeat"] is None
        assert snapshot["hand"] is None
    # Nobody else gained anything: a stranger still sees neither table.
    assert await refusal_code(stranger, SEE_TABLE, t=new_id) == "NOT_FOUND"
    assert await refusal_code(stranger, SEE_TABLE, t=old_id) == "NOT_FOUND"

    # A spectator of a rematch table (who kept access to it) keeps it again at the next.
    await play_to_game_over({"SOUTH": south}, new_id)
    third = await request_rematch(south, new_id)
    assert third["rematchOf"] == new_id
    assert (await table(host, third["id"]))["rematchOf"] == new_id


async def test_only_those_still_watching_a_friends_only_table_keep_it_at_the_rematch(
    away_server: LiveServer,
) -> None:
    host, south, fan, former, friend = [await Social.signed_up(away_server) for _ in range(5)]
    for player in (south, fan, former, friend):
        await befriend(host, player)
    async with host_gone_away(host, south, "FRIENDS_ONLY") as old_id:
        # Friends of the host see and watch the table; two of them watch it.
        await fan.watch(old_id)
        await former.watch(old_id)
        # One stops being the host's friend, and so a spectator, before the game ends.
        await host.remove_friend(former.pid)
        assert await refusal_code(former, SEE_TABLE, t=old_id) == "NOT_FOUND"
        await play_to_game_over({"SOUTH": south}, old_id)
        new = await request_rematch(south, old_id)
    assert new["visibility"] == "FRIENDS_ONLY" and new["host"]["id"] == south.pid
    new_id = new["id"]
    # Friends of SOUTH, the new host, see it; of the old table's viewers only its
    # spectator keeps access: not one who lost it before, not a friend who never watched.
    assert (await table(fan, new_id))["rematchOf"] == old_id
    assert (await fan.watch(new_id))["id"] == new_id
    assert await refusal_code(former, SEE_TABLE, t=new_id) == "NOT_FOUND"
    assert await refusal_code(friend, SEE_TABLE, t=new_id) == "NOT_FOUND"
    assert new_id not in await friend.lobby_ids()


async def test_a_seeded_tables_rematch_deals_fresh_cards_from_a_seed_derived_from_its_own(
    server: LiveServer,
) -> None:
    alone = await Social.signed_up(server)
    first = str((await alone.create_table(seed=8))["id"])
    for seat in ("EAST", "SOUTH", "WEST"):
        await alone.add_bot(first, seat)
    first_hand = (await alone.game(first))["hand"]
    await play_to_game_over({"NORTH": alone}, first)
    second = await request_rematch(alone, first)
    rematch_hand = (await alone.game(second["id"]))["hand"]
    assert rematch_hand != first_hand  # not the old game dealt again
    # The seed is derived, not secret: a table created with it deals the same cards.
    again = str((await alone.create_table(seed=rematch_seed(8)))["id"])
    for seat in ("EAST", "SOUTH", "WEST"):
        await alone.add_bot(again, seat)
    assert (await alone.game(again))["hand"] == rematch_hand
