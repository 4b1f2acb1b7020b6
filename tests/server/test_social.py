"""Friends, blocks, invitations, links, notifications and host powers, end to end
(docs/rules.md, Table access; docs/api.md, Social and table access)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio

from tests.support.server import LiveServer
from tests.support.social import (
    UPDATE_TABLE,
    Beacon,
    Social,
    befriend,
    lobby_stream,
    notification_stream,
    seat_of,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

_names = itertools.count(1)

TABLE_QUERY = "query($t: ID!) { table(id: $t) { id } }"
JOIN = (
    "mutation($t: ID!, $s: Seat!, $c: String) { joinTable(tableId: $t, seat: $s, code: $c) { id } }"
)
WATCH = "mutation($t: ID!, $c: String) { watchTable(tableId: $t, code: $c) { id } }"
SEND_REQUEST = "mutation($u: String!) { sendFriendRequest(username: $u) { id } }"
INVITE = "mutation($t: ID!, $u: String!) { invitePlayer(tableId: $t, username: $u) { id } }"


@pytest.fixture
def players(server: LiveServer) -> Callable[[int], Awaitable[list[Social]]]:
    """Fresh players for one test."""

    async def make(count: int) -> list[Social]:
        return [await Social.signed_up(server, f"member{next(_names)}") for _ in range(count)]

    return make


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pinger(server: LiveServer) -> Social:
    """The player whose friend requests mark points in notification streams."""
    return await Social.signed_up(server, "pinger")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def beacon(server: LiveServer) -> Beacon:
    return await Beacon.create(server)


Make = Callable[[int], Awaitable[list[Social]]]


async def started_game(host: Social, guest: Social) -> str:
    """A PUBLIC table of `host` where `guest` sits EAST and two bots fill it: the game is on."""
    table = await host.create_table()
    await guest.join(table["id"], "EAST")
    for seat in ("SOUTH", "WEST"):
        await host.add_bot(table["id"], seat)
    assert (await host.table(table["id"]))["game"]["phase"] == "BIDDING"
    return str(table["id"])


# ---------------------------------------------------------------------------- friends


async def test_a_friend_request_by_username_once_accepted_makes_both_friends(
    players: Make, pinger: Social
) -> None:
    alice, bob = await players(2)
    async with notification_stream(bob, pinger) as bobs:
        request = await alice.send_friend_request(bob.name.upper())  # usernames match any case
        assert request["from"]["id"] == alice.pid and request["to"]["id"] == bob.pid
        notices = await bobs.collect()
    assert [(n["event"], n["friendRequest"]["id"]) for n in notices] == [
        ("FRIEND_REQUEST", request["id"])
    ]
    incoming = await bob.friend_requests()
    assert [(r["id"], r["from"]["id"]) for r in incoming] == [(request["id"], alice.pid)]
    assert await alice.friend_requests() == []  # only incoming requests are listed
    async with notification_stream(alice, pinger) as alices:
        assert await bob.respond(request["id"], True)
        assert [n["event"] for n in await alices.collect()] == ["FRIEND_ACCEPTED"]
    assert await alice.friend_ids() == {bob.pid}
    assert await bob.friend_ids() == {alice.pid}
    assert await bob.friend_requests() == []


async def test_a_declined_friend_request_makes_no_friends_and_is_gone(players: Make) -> None:
    alice, bob = await players(2)
    request = await alice.send_friend_request(bob.name)
    assert await bob.respond(request["id"], False)
    assert await alice.friends() == [] and await bob.friends() == []
    assert await bob.friend_requests() == []
    answer = "mutation($r: ID!) { respondToFriendRequest(requestId: $r, accept: true) }"
    assert await bob.error(answer, r=request["id"]) == "NOT_FOUND"


async def test_only_the_addressee_may_answer_a_friend_request(players: Make) -> None:
    alice, bob, carol = await players(3)
    request = await alice.send_friend_request(bob.name)
    answer = "mutation($r: ID!) { respondToFriendRequest(requestId: $r, accept: true) }"
    assert await carol.error(answer, r=request["id"]) == "NOT_FOUND"
    assert await alice.error(answer, r=request["id"]) == "NOT_FOUND"
    assert await alice.friends() == []


async def test_asking_someone_who_already_asked_you_makes_you_both_friends(
    players: Make,
) -> None:
    alice, bob = await players(2)
    await alice.send_friend_request(bob.name)
    await bob.send_friend_request(alice.name)
    assert await alice.friend_ids() == {bob.pid}
    assert await bob.friend_ids() == {alice.pid}
    assert await alice.friend_requests() == [] and await bob.friend_requests() == []


async def test_friend_requests_to_yourself_unknown_players_or_friends_are_refused(
    players: Make,
) -> None:
    alice, bob = await players(2)
    assert await alice.error(SEND_REQUEST, u=alice.name) == "BAD_USER_INPUT"
    assert await alice.error(SEND_REQUEST, u="nobody-by-this-name") == "NOT_FOUND"
    await befriend(alice, bob)
    assert await alice.error(SEND_REQUEST, u=bob.name) == "BAD_USER_INPUT"


async def test_removing_a_friend_ends_the_friendship_for_both(players: Make) -> None:
    alice, bob, carol = await players(3)
    await befriend(alice, bob)
    await befriend(alice, carol)
    assert await alice.friend_ids() == {bob.pid, carol.pid}
    assert await bob.remove_friend(alice.pid)
    assert await alice.friend_ids() == {carol.pid}
    assert await bob.friends() == []
    remove = "mutation($p: ID!) { removeFriend(playerId: $p) }"
    assert await bob.error(remove, p=alice.pid) == "NOT_FOUND"


async def test_friends_are_listed_by_username(players: Make) -> None:
    alice, bob, carol = await players(3)
    await befriend(alice, carol)
    await befriend(bob, alice)
    assert [p["username"] for p in await alice.friends()] == sorted(
        [bob.name, carol.name], key=str.lower
    )


# ---------------------------------------------------------------------------- blocks


@pytest.mark.parametrize("direction", ["blocker asks", "blocked asks"])
async def test_a_block_refuses_friend_requests_both_ways(players: Make, direction: str) -> None:
    blocker, blocked = await players(2)
    assert await blocker.block(blocked.pid)
    sender, recipient = (blocker, blocked) if direction == "blocker asks" else (blocked, blocker)
    assert await sender.error(SEND_REQUEST, u=recipient.name) == "FORBIDDEN"
    assert await recipient.friend_requests() == []


@pytest.mark.parametrize("direction", ["blocker hosts", "blocked hosts"])
async def test_a_block_refuses_invitations_both_ways(players: Make, direction: str) -> None:
    blocker, blocked = await players(2)
    assert await blocker.block(blocked.pid)
    host, guest = (blocker, blocked) if direction == "blocker hosts" else (blocked, blocker)
    table = await host.create_table(visibility="PRIVATE")
    assert await host.error(INVITE, t=table["id"], u=guest.name) == "FORBIDDEN"
    assert await guest.invitations() == []
    assert await guest.error(TABLE_QUERY, t=table["id"]) == "NOT_FOUND"


async def test_a_block_ends_the_friendship_and_pending_requests_both_ways(
    players: Make,
) -> None:
    alice, bob, carol, dave = await players(4)
    await befriend(alice, bob)
    await carol.send_friend_request(alice.name)  # to the blocker
    await alice.send_friend_request(dave.name)  # from the blocker
    for other in (bob, carol, dave):
        assert await alice.block(other.pid)
    assert await alice.friends() == [] and await bob.friends() == []
    assert await alice.friend_requests() == []
    assert await dave.friend_requests() == []
    # Lifting the block restores neither the friendship nor the requests.
    assert await alice.unblock(bob.pid)
    assert await alice.friends() == [] and await bob.friends() == []
    # ...but lets requests through again.
    await befriend(bob, alice)
    assert await alice.friend_ids() == {bob.pid}


async def test_the_blocked_list_shows_whom_you_blocked_by_username_until_unblocked(
    players: Make,
) -> None:
    alice, bob, carol, dave = await players(4)
    assert await alice.block(carol.pid)
    assert await alice.block(bob.pid)
    assert await alice.block(bob.pid)  # blocking twice lists once
    assert await dave.block(alice.pid)
    names = [p["username"] for p in await alice.blocked_players()]
    assert names == sorted([bob.name, carol.name], key=str.lower)
    # Who blocked you is not yours to list.
    assert await bob.blocked_players() == []
    assert [p["id"] for p in await dave.blocked_players()] == [alice.pid]
    assert await alice.unblock(bob.pid)
    assert [p["id"] for p in await alice.blocked_players()] == [carol.pid]


async def test_the_blocked_list_needs_a_signed_in_player(server: LiveServer) -> None:
    anonymous = Social(server)
    assert await anonymous.error("{ blockedPlayers { id } }") == "UNAUTHENTICATED"


async def test_unblocking_someone_not_blocked_is_not_found(players: Make) -> None:
    alice, bob = await players(2)
    unblock = "mutation($p: ID!) { unblockPlayer(playerId: $p) }"
    assert await alice.error(unblock, p=bob.pid) == "NOT_FOUND"
    assert await bob.block(alice.pid)
    # Only the blocker can lift a block.
    assert await alice.error(unblock, p=bob.pid) == "NOT_FOUND"


# ---------------------------------------------------------------------------- invitations


async def test_only_the_host_may_invite(players: Make) -> None:
    host, guest, other = await players(3)
    table = await host.create_table(joinPolicy="INVITE_ONLY")
    await host.invite(table["id"], guest.name)
    await guest.join(table["id"], "EAST")
    for non_host in (guest, other):  # seated or not
        assert await non_host.error(INVITE, t=table["id"], u=host.name) == "FORBIDDEN"
    private = await host.create_table(visibility="PRIVATE")
    assert await other.error(INVITE, t=private["id"], u=guest.name) == "NOT_FOUND"


async def test_an_invitee_sees_the_invitation_listed_and_notified_and_may_sit_at_invite_only(
    players: Make, pinger: Social
) -> None:
    host, guest = await players(2)
    table = await host.create_table(visibility="PRIVATE", name="secret")
    assert await guest.error(JOIN, t=table["id"], s="EAST") == "NOT_FOUND"
    async with notification_stream(guest, pinger) as guests:
        invitation = await host.invite(table["id"], guest.name)
        notices = await guests.collect()
    assert [(n["event"], n["invitation"]["id"], n["tableId"]) for n in notices] == [
        ("INVITATION", invitation["id"], table["id"])
    ]
    assert notices[0]["invitation"]["from"]["id"] == host.pid
    listed = await guest.invitations()
    assert [(i["id"], i["table"]["id"], i["from"]["id"]) for i in listed] == [
        (invitation["id"], table["id"], host.pid)
    ]
    assert listed[0]["table"]["name"] == "secret"
    sat = await guest.join(table["id"], "EAST")
    assert seat_of(sat, guest.pid) == "EAST"
    assert await guest.invitations() == []  # used up by sitting


async def test_a_declined_invitation_tells_the_host_and_is_gone(
    players: Make, pinger: Social
) -> None:
    host, guest = await players(2)
    table = await host.create_table(visibility="PRIVATE")
    invitation = await host.invite(table["id"], guest.name)
    async with notification_stream(host, pinger) as hosts:
        assert await guest.decline(invitation["id"])
        notices = await hosts.collect()
    assert [(n["event"], n["tableId"], n["player"]["id"]) for n in notices] == [
        ("INVITATION_DECLINED", table["id"], guest.pid)
    ]
    assert await guest.invitations() == []
    assert await guest.error(JOIN, t=table["id"], s="EAST") == "NOT_FOUND"
    decline = "mutation($i: ID!) { declineInvitation(invitationId: $i) }"
    assert await guest.error(decline, i=invitation["id"]) == "NOT_FOUND"


async def test_only_the_invitee_may_decline_an_invitation(players: Make) -> None:
    host, guest, other = await players(3)
    table = await host.create_table(visibility="PRIVATE")
    invitation = await host.invite(table["id"], guest.name)
    decline = "mutation($i: ID!) { declineInvitation(invitationId: $i) }"
    assert await other.error(decline, i=invitation["id"]) == "NOT_FOUND"
    assert [i["id"] for i in await guest.invitations()] == [invitation["id"]]


async def test_invitations_expire_when_the_game_starts(players: Make) -> None:
    host, guest, late = await players(3)
    table = await host.create_table(visibility="PRIVATE")
    await host.invite(table["id"], guest.name)
    await host.invite(table["id"], late.name)
    await guest.join(table["id"], "EAST")
    assert [i["table"]["id"] for i in await late.invitations()] == [table["id"]]
    for seat in ("SOUTH", "WEST"):
        await host.add_bot(table["id"], seat)
    assert await late.invitations() == []
    assert await late.error(TABLE_QUERY, t=table["id"]) == "NOT_FOUND"
    assert await host.error(INVITE, t=table["id"], u=late.name) == "WRONG_PHASE"


# ---------------------------------------------------------------------------- links

URL_SAFE = re.compile(r"[A-Za-z0-9_-]+")
LINKS = {
    "join": "mutation($t: ID!) { createJoinLink(tableId: $t) }",
    "spectator": "mutation($t: ID!) { createSpectatorLink(tableId: $t) }",
}


@pytest.mark.parametrize("kind", LINKS)
async def test_only_the_host_may_create_links(players: Make, kind: str) -> None:
    host, guest, other = await players(3)
    table = await host.create_table()
    await guest.join(table["id"], "EAST")
    for non_host in (guest, other):
        assert await non_host.error(LINKS[kind], t=table["id"]) == "FORBIDDEN"
    private = await host.create_table(visibility="PRIVATE")
    assert await other.error(LINKS[kind], t=private["id"]) == "NOT_FOUND"


async def test_link_codes_carry_at_least_128_random_bits_and_differ_every_time(
    players: Make,
) -> None:
    (host,) = await players(1)
    tables = [(await host.create_table())["id"] for _ in range(2)]
    codes = [
        await create(table_id)
        for table_id in tables
        for create in (host.join_link, host.spectator_link, host.join_link, host.spectator_link)
    ]
    for code in codes:
        # 22 url-safe characters carry 132 bits.
        assert URL_SAFE.fullmatch(code) and len(code) >= 22, code
        assert len(set(code)) >= 10, code  # not a padded or repeated pattern
    assert len(set(codes)) == len(codes)


async def test_a_new_join_link_revokes_the_old_code_and_its_holders(players: Make) -> None:
    host, holder, latecomer = await players(3)
    table = await host.create_table(visibility="PRIVATE")
    old = await host.join_link(table["id"])
    await holder.table(table["id"], code=old)  # now holds it
    assert table["id"] in await holder.lobby_ids()
    new = await host.join_link(table["id"])
    assert new != old
    # The old code neither shows nor seats anyone, and its holder lost the table.
    assert await latecomer.error(JOIN, t=table["id"], s="EAST", c=old) == "NOT_FOUND"
    assert await holder.error(TABLE_QUERY, t=table["id"]) == "NOT_FOUND"
    assert table["id"] not in await holder.lobby_ids()
    # The new one works.
    assert seat_of(await latecomer.join(table["id"], "EAST", new), latecomer.pid) == "EAST"


async def test_a_new_spectator_link_revokes_the_old_code_and_its_holders(
    players: Make,
) -> None:
    host, holder, latecomer = await players(3)
    table = await host.create_table(visibility="PRIVATE")
    old = await host.spectator_link(table["id"])
    assert (await holder.watch(table["id"], old))["id"] == table["id"]
    new = await host.spectator_link(table["id"])
    assert await latecomer.error(WATCH, t=table["id"], c=old) == "NOT_FOUND"
    assert await holder.error(WATCH, t=table["id"]) == "NOT_FOUND"
    assert (await latecomer.watch(table["id"], new))["id"] == table["id"]


async def test_a_spectator_code_or_a_made_up_code_seats_nobody(players: Make) -> None:
    host, watcher, guesser = await players(3)
    table = await host.create_table(visibility="PRIVATE")
    spectator_code = await host.spectator_link(table["id"])
    await host.join_link(table["id"])
    # The spectator code shows the table (so the refusal is FORBIDDEN), but seats nobody.
    assert await watcher.error(JOIN, t=table["id"], s="EAST", c=spectator_code) == "FORBIDDEN"
    assert await guesser.error(JOIN, t=table["id"], s="EAST", c="made-up-code") == "NOT_FOUND"
    assert await guesser.error(WATCH, t=table["id"], c="x" * 32) == "NOT_FOUND"


async def test_a_join_link_cannot_be_made_once_the_game_started(players: Make) -> None:
    host, guest = await players(2)
    table_id = await started_game(host, guest)
    assert await host.error(LINKS["join"], t=table_id) == "WRONG_PHASE"
    # Spectators may still come.
    assert len(await host.spectator_link(table_id)) >= 22


# ---------------------------------------------------------------------------- notifications


async def test_notifications_reach_their_addressee_only(players: Make, pinger: Social) -> None:
    alice, bob, carol = await players(3)
    table = await alice.create_table(visibility="PRIVATE")
    async with (
        notification_stream(alice, pinger) as alices,
        notification_stream(bob, pinger) as bobs,
        notification_stream(carol, pinger) as carols,
    ):
        request = await alice.send_friend_request(bob.name)
        await bob.respond(request["id"], True)
        invitation = await alice.invite(table["id"], bob.name)
        await bob.decline(invitation["id"])
        await bob.remove_friend(alice.pid)
        assert await carols.collect() == []
        assert [n["event"] for n in await bobs.collect()] == ["FRIEND_REQUEST", "INVITATION"]
        assert [n["event"] for n in await alices.collect()] == [
            "FRIEND_ACCEPTED",
            "INVITATION_DECLINED",
            "FRIEND_REMOVED",
        ]


# ---------------------------------------------------------------------------- host powers


async def test_update_table_trims_the_name_and_refuses_one_over_50_characters(
    players: Make,
) -> None:
    (host,) = await players(1)
    table = await host.create_table(name="  first  ")
    assert table["name"] == "first"
    fifty = "x" * 50
    assert (await host.update_table(table["id"], name=f"   {fifty}\t"))["name"] == fifty
    update = UPDATE_TABLE
    assert await host.error(update, t=table["id"], i={"name": "y" * 51}) == "BAD_USER_INPUT"
    create = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
    assert await host.error(create, i={"name": "z" * 51}) == "BAD_USER_INPUT"
    after = await host.table(table["id"])
    assert after["name"] == fifty
    changed = await host.update_table(table["id"], spectating=False, joinPolicy="INVITE_ONLY")
    assert (changed["name"], changed["spectating"], changed["joinPolicy"]) == (
        fifty,
        False,
        "INVITE_ONLY",
    )


async def test_transfer_host_goes_to_a_seated_human_only(players: Make) -> None:
    host, guest, bystander = await players(3)
    table = await host.create_table()
    await guest.join(table["id"], "EAST")
    await host.add_bot(table["id"], "SOUTH")
    transfer = "mutation($t: ID!, $p: ID!) { transferHost(tableId: $t, playerId: $p) { id } }"
    for not_a_seated_human in ("bot:south", bystander.pid, "bot:west"):
        assert (
            await host.error(transfer, t=table["id"], p=not_a_seated_human) == "BAD_USER_INPUT"
        ), not_a_seated_human
    moved = await host.transfer_host(table["id"], guest.pid)
    assert moved["host"]["id"] == guest.pid
    # The old host has no host powers any more; the new one has.
    assert await host.error(transfer, t=table["id"], p=host.pid) == "FORBIDDEN"
    assert (await guest.update_table(table["id"], name="mine"))["name"] == "mine"


async def test_kicking_frees_the_seat_notifies_the_player_and_drops_their_invitation(
    players: Make, pinger: Social
) -> None:
    host, guest = await players(2)
    table = await host.create_table(visibility="PRIVATE")
    await host.invite(table["id"], guest.name)
    await guest.join(table["id"], "EAST")
    async with notification_stream(guest, pinger) as guests:
        kicked = await host.kick(table["id"], guest.pid)
        notices = await guests.collect()
    assert seat_of(kicked, guest.pid) is None
    assert next(s for s in kicked["seats"] if s["seat"] == "EAST")["playerId"] is None
    assert [(n["event"], n["tableId"], n["player"]["id"]) for n in notices] == [
        ("KICKED", table["id"], host.pid)
    ]
    assert await guest.invitations() == []
    assert await guest.error(TABLE_QUERY, t=table["id"]) == "NOT_FOUND"
    assert await guest.error(JOIN, t=table["id"], s="EAST") == "NOT_FOUND"


async def test_the_host_cannot_kick_themself_or_an_empty_seat(players: Make) -> None:
    host, bystander = await players(2)
    table = await host.create_table()
    kick = "mutation($t: ID!, $p: ID!) { kickPlayer(tableId: $t, playerId: $p) { id } }"
    assert await host.error(kick, t=table["id"], p=host.pid) == "BAD_USER_INPUT"
    assert await host.error(kick, t=table["id"], p=bystander.pid) == "BAD_USER_INPUT"


HOST_POWERS: dict[str, tuple[str, Callable[[str, Social], dict[str, Any]]]] = {
    "updateTable": (
        'mutation($t: ID!) { updateTable(tableId: $t, input: {name: "mine"}) { id } }',
        lambda table_id, target: {"t": table_id},
    ),
    "transferHost": (
        "mutation($t: ID!, $p: ID!) { transferHost(tableId: $t, playerId: $p) { id } }",
        lambda table_id, target: {"t": table_id, "p": target.pid},
    ),
    "kickPlayer": (
        "mutation($t: ID!, $p: ID!) { kickPlayer(tableId: $t, playerId: $p) { id } }",
        lambda table_id, target: {"t": table_id, "p": target.pid},
    ),
    "addBot": (
        "mutation($t: ID!) { addBot(tableId: $t, seat: WEST) { id } }",
        lambda table_id, target: {"t": table_id},
    ),
    "invitePlayer": (INVITE, lambda table_id, target: {"t": table_id, "u": target.name}),
    "createJoinLink": (LINKS["join"], lambda table_id, target: {"t": table_id}),
    "createSpectatorLink": (LINKS["spectator"], lambda table_id, target: {"t": table_id}),
}


@pytest.mark.parametrize("power", HOST_POWERS)
async def test_host_powers_are_forbidden_to_everyone_else(players: Make, power: str) -> None:
    host, guest, stranger = await players(3)
    table = await host.create_table()
    await guest.join(table["id"], "EAST")
    query, variables = HOST_POWERS[power]
    # A seated player acting on the host; a stranger acting on the seated player.
    assert await guest.error(query, **variables(table["id"], host)) == "FORBIDDEN"
    assert await stranger.error(query, **variables(table["id"], guest)) == "FORBIDDEN"
    after = await host.table(table["id"])
    assert after["host"]["id"] == host.pid and after["name"] is None
    assert seat_of(after, guest.pid) == "EAST" and seat_of(after, "bot:west") is None


@pytest.mark.parametrize(
    "power", ["updateTable", "transferHost", "kickPlayer", "invitePlayer", "createJoinLink"]
)
async def test_host_powers_end_when_the_game_starts(players: Make, power: str) -> None:
    host, guest, other = await players(3)
    table_id = await started_game(host, guest)
    query, variables = HOST_POWERS[power]
    target = other if power == "invitePlayer" else guest
    assert await host.error(query, **variables(table_id, target)) == "WRONG_PHASE"
    # A non-host is still told FORBIDDEN first.
    assert await guest.error(query, **variables(table_id, host)) == "FORBIDDEN"


async def test_a_host_who_leaves_passes_host_to_another_seated_human(
    players: Make, beacon: Beacon
) -> None:
    host, guest, watcher = await players(3)
    table = await host.create_table()
    await host.add_bot(table["id"], "EAST")
    await guest.join(table["id"], "WEST")
    async with lobby_stream(watcher, beacon) as stream:
        assert await host.leave(table["id"])
        events = [e for e in await stream.collect() if e["tableId"] == table["id"]]
    assert [e["event"] for e in events] == ["TABLE_UPDATED"]
    assert events[0]["table"]["host"]["id"] == guest.pid
    after = await guest.table(table["id"])
    assert after["host"]["id"] == guest.pid and seat_of(after, host.pid) is None
    assert (await guest.update_table(table["id"], name="taken over"))["name"] == "taken over"
    update = 'mutation($t: ID!) { updateTable(tableId: $t, input: {name: "back"}) { id } }'
    assert await host.error(update, t=table["id"]) == "FORBIDDEN"


async def test_the_last_human_leaving_closes_a_waiting_table(players: Make, beacon: Beacon) -> None:
    host, guest, watcher = await players(3)
    table = await host.create_table()
    await guest.join(table["id"], "EAST")
    await host.add_bot(table["id"], "SOUTH")
    async with lobby_stream(watcher, beacon) as stream:
        await guest.leave(table["id"])
        await host.leave(table["id"])
        events = [e for e in await stream.collect() if e["tableId"] == table["id"]]
    assert [e["event"] for e in events] == ["TABLE_UPDATED", "TABLE_REMOVED"]
    assert events[-1]["table"] is None
    assert table["id"] not in await watcher.lobby_ids()
