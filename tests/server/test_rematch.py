"""Rematch (RULES.md, Rematch) on a real server: every seated human asks after GAME_OVER,
bots agree, and one new table opens with the same options, occupants, seats and host,
its game started; the old table's last change names it, and the old table's spectators
and link holders follow it there."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.client import next_update
from tests.support.scenarios import assert_log_without_gaps
from tests.support.server import LiveServer
from tests.support.social import Beacon, Social, lobby_stream
from tests.support.table_talk import (
    REMATCH_UPDATES,
    REQUEST_REMATCH,
    play_to_game_over,
    rematch_watch,
    request_rematch,
    table,
)


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
