"""Quick play (docs/rules.md, Quick play) on one real server (SQLite): starting, the same
ticket again, ALREADY_SEATED, cancelling, the four-player match and the table it opens,
rated and unrated pools, blocks, rating windows and balanced partners, and a player who
sat down elsewhere while searching."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.client import Api
from tests.support.live import instant
from tests.support.quickplay import (
    LEGACY,
    TRANSPORT,
    cancel,
    cancel_all,
    humans,
    latest,
    searching,
    set_ratings,
    start,
    statuses,
    until_status,
    updates,
)
from tests.support.server import LiveServer
from tests.support.social import Social

# Waves every 0.3 s keep the tests short; the rules do not depend on it.
FAST_WAVES = {"SPADES_QUICKPLAY_WAVE_SECONDS": "0.3"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server for the module, bots after the default 15 s."""
    live = LiveServer(tmp_path_factory.mktemp("quickplay") / "spades.db", env=FAST_WAVES)
    live.start()
    yield live
    live.stop()


@pytest.fixture
async def players(server: LiveServer) -> AsyncIterator[list[Social]]:
    """Six signed-up players; whatever they still search is cancelled after the test, so
    that no ticket of one test meets the players of the next."""
    signed = list(await asyncio.gather(*(Social.signed_up(server) for _ in range(6))))
    yield signed
    await cancel_all(signed)


async def matched_table(api: Api, timeout: float = 10.0) -> dict[str, object]:
    """The table the caller's latest ticket was matched to (waiting for the match)."""
    ticket = await until_status(api, "MATCHED", timeout)
    table = ticket["table"]
    assert isinstance(table, dict)
    return table


async def test_signing_in_is_needed_for_quick_play(server: LiveServer) -> None:
    anonymous = Api(server)
    assert await anonymous.error("mutation { startQuickPlay { id } }") == "UNAUTHENTICATED"
    assert await anonymous.error("{ quickPlay { id } }") == "UNAUTHENTICATED"


async def test_a_new_player_has_no_ticket_and_cancelling_nothing_answers_null(
    players: list[Social],
) -> None:
    assert await latest(players[0]) is None
    assert await cancel(players[0]) is None


async def test_a_ticket_is_its_owners_alone(players: list[Social]) -> None:
    owner, other = players[0], players[1]
    async with updates(other) as watching:
        ticket = await start(owner, rated=True)
        assert await latest(other) is None
        assert await cancel(other) is None  # nothing of the owner's ends
        assert await watching.quiet(0.5) == []
    assert await latest(owner) == ticket


async def test_starting_again_while_searching_answers_the_same_ticket_unchanged(
    players: list[Social],
) -> None:
    first = await start(players[0], rated=True)
    assert first["status"] == "SEARCHING" and first["rated"] is True
    assert first["botsAt"] is None and first["table"] is None
    again = await start(players[0], rated=False)
    assert again == first
    assert await start(players[0]) == first
    assert await latest(players[0]) == first


async def test_an_unrated_ticket_says_when_bots_will_join(players: list[Social]) -> None:
    ticket = await start(players[0])
    assert ticket["rated"] is False
    assert instant(ticket["botsAt"]) - instant(ticket["startedAt"]) == pytest.approx(15, abs=0.01)
    assert abs(instant(ticket["startedAt"]) - time.time()) < 5


async def test_a_player_seated_at_a_waiting_or_playing_table_may_not_start(
    players: list[Social],
) -> None:
    host, guest = players[0], players[1]
    table_id = str((await host.create_table())["id"])
    assert await host.error("mutation { startQuickPlay { id } }") == "ALREADY_SEATED"
    await guest.join(table_id, "SOUTH")
    for seat in ("EAST", "WEST"):
        await host.add_bot(table_id, seat)
    for seated in (host, guest):  # the game has started: PLAYING
        assert await seated.error("mutation { startQuickPlay { id } }") == "ALREADY_SEATED"
    assert await latest(host) is None


async def test_a_player_whose_table_closed_may_start(players: list[Social]) -> None:
    host = players[0]
    table_id = str((await host.create_table())["id"])
    await host.call("mutation($t: ID!) { leaveTable(tableId: $t) }", t=table_id)
    assert (await start(host))["status"] == "SEARCHING"


async def test_cancelling_ends_the_ticket_cancelled_and_a_new_start_makes_a_new_ticket(
    players: list[Social],
) -> None:
    first = await start(players[0])
    cancelled = await cancel(players[0])
    assert cancelled is not None
    assert (cancelled["id"], cancelled["status"]) == (first["id"], "CANCELLED")
    assert cancelled["botsAt"] is None
    assert await cancel(players[0]) == cancelled  # nothing searches: the latest, final
    second = await start(players[0])
    assert second["id"] != first["id"] and second["status"] == "SEARCHING"


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
async def test_updates_send_the_latest_ticket_then_each_state_on_either_protocol(
    players: list[Social], protocol: str
) -> None:
    owner = players[0]
    async with updates(owner, protocol) as stream:
        assert await stream.quiet(0.5) == []  # no ticket yet: nothing to send
        ticket = await start(owner)
        assert (await stream.next())["id"] == ticket["id"]
        await cancel(owner)
        ended = await stream.next()
        assert (ended["id"], ended["status"]) == (ticket["id"], "CANCELLED")
    async with updates(owner, protocol) as again:
        assert (await again.next())["status"] == "CANCELLED"  # the latest first


async def test_four_searching_players_are_seated_at_one_quick_play_table(
    players: list[Social],
) -> None:
    four = players[:4]
    async with updates(four[0]) as stream:
        tickets = [await start(p) for p in four]
        assert (await stream.next())["status"] == "SEARCHING"
        matched = await stream.until(lambda t: t["status"] == "MATCHED")
    table = matched["table"]
    assert set(humans(table)) == {p.player_id for p in four}
    for player, ticket in zip(four, tickets, strict=True):
        mine = await latest(player)
        assert mine is not None
        assert (mine["id"], mine["status"]) == (ticket["id"], "MATCHED")
        assert mine["table"]["id"] == table["id"] and mine["botsAt"] is None
    assert table["name"] == "Quick play"
    assert (table["visibility"], table["joinPolicy"], table["spectating"]) == (
        "PUBLIC",
        "INVITE_ONLY",
        True,
    )
    clock = (table["turnSeconds"], table["replacementBot"], table["rated"])
    assert clock == (30, "STANDARD", False)
    assert table["status"] == "PLAYING" and table["game"]["phase"] == "BIDDING"
    north = table["seats"][0]
    assert table["host"]["id"] == north["playerId"]
    # Seated now: starting again is refused; cancelling answers the MATCHED ticket.
    assert await four[1].error("mutation { startQuickPlay { id } }") == "ALREADY_SEATED"
    answer = await cancel(four[1])
    assert answer is not None and answer["status"] == "MATCHED"
    assert answer["table"]["id"] == table["id"]


async def test_the_host_of_a_quick_play_table_is_the_human_nearest_north(
    players: list[Social],
) -> None:
    four = players[:4]
    for player in four:
        await start(player, rated=True)
    table = await matched_table(four[0])
    assert table["rated"] is True
    assert table["host"]["id"] == table["seats"][0]["playerId"]


async def test_rated_and_unrated_tickets_never_share_a_table(players: list[Social]) -> None:
    for index, player in enumerate(players[:4]):
        await start(player, rated=index % 2 == 0)
    await asyncio.sleep(1.5)
    assert await statuses(players[:4]) == ["SEARCHING"] * 4


async def test_quick_play_searching_counts_the_searching_tickets(players: list[Social]) -> None:
    before = await searching(players[0])
    await start(players[0], rated=True)
    await start(players[1], rated=True)
    assert await searching(players[0]) == before + 2
    await cancel(players[1])
    assert await searching(players[2]) == before + 1


async def test_two_players_of_whom_one_blocked_the_other_are_never_matched(
    players: list[Social],
) -> None:
    blocker, blocked, *others = players[:5]
    await blocker.block(str(blocked.player_id))
    for player in (blocker, blocked, *others[:2]):
        await start(player)
    await asyncio.sleep(1.5)
    assert await statuses(players[:4]) == ["SEARCHING"] * 4
    await start(others[2])  # a fifth: one table, without one of the two
    table = await matched_table(others[2])
    seated = set(humans(table))
    assert not {blocker.player_id, blocked.player_id} <= seated
    assert len(seated) == 4


async def test_ratings_outside_the_window_wait_for_it_to_widen(
    server: LiveServer, players: list[Social]
) -> None:
    four = players[:4]
    ratings = dict(zip([p.player_id for p in four], (1500, 1500, 1500, 1640), strict=True))
    set_ratings(server.database, {str(k): v for k, v in ratings.items()})
    started = time.monotonic()
    for player in four:
        await start(player, rated=True)
    # 140 apart: outside +/-100 until the windows reach 140, 4 s after the starts.
    await asyncio.sleep(max(0.0, 2.5 - (time.monotonic() - started)))
    assert await statuses(four[3:]) == ["SEARCHING"]
    table = await matched_table(four[3], timeout=10)
    assert time.monotonic() - started >= 3.5
    assert set(humans(table)) == {p.player_id for p in four}


async def test_partners_are_chosen_so_that_the_team_totals_differ_least(
    server: LiveServer, players: list[Social]
) -> None:
    four = players[:4]
    values = (1700, 1690, 1610, 1600)
    set_ratings(server.database, {str(p.player_id): v for p, v in zip(four, values, strict=True)})
    for player in four:
        await start(player, rated=True)
    table = await matched_table(four[0])
    rating = {str(p.player_id): v for p, v in zip(four, values, strict=True)}
    seats = {s["seat"]: rating[s["playerId"]] for s in table["seats"]}
    assert {seats["NORTH"] + seats["SOUTH"], seats["EAST"] + seats["WEST"]} == {3300}


async def test_a_player_who_sat_down_elsewhere_while_searching_is_not_matched(
    players: list[Social],
) -> None:
    wanderer, *others = players[:5]
    await start(wanderer)
    await wanderer.create_table()  # seated at a WAITING table now
    for player in others[:3]:
        await start(player)
    await asyncio.sleep(1.5)
    assert await statuses(others[:3]) == ["SEARCHING"] * 3
    await start(others[3])
    table = await matched_table(others[3])
    assert wanderer.player_id not in humans(table)
    assert await statuses([wanderer]) == ["SEARCHING"]


async def test_a_cancel_racing_a_match_either_wins_or_loses_and_its_answer_says_which(
    players: list[Social],
) -> None:
    for attempt in range(2):
        four = players[:4] if attempt % 2 == 0 else players[2:6]
        for player in four[:3]:
            await start(player)
        # The fourth start lets the next wave match; the third player cancels meanwhile.
        await start(four[3])
        answer = await cancel(four[2])
        assert answer is not None and answer["status"] in ("CANCELLED", "MATCHED")
        await asyncio.sleep(1.0)
        others = await statuses([four[0], four[1], four[3]])
        if answer["status"] == "MATCHED":
            assert four[2].player_id in humans(answer["table"])
            assert others == ["MATCHED"] * 3
        else:
            assert others == ["SEARCHING"] * 3
        await cancel_all(players)
        if answer["status"] == "MATCHED":
            for player in four:  # leave the table so that the next round may start
                table_id = answer["table"]["id"]
                await player.call("mutation($t: ID!) { leaveTable(tableId: $t) }", t=table_id)
