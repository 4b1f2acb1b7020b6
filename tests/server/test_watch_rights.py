"""A spectator's live game stream ends when their right to watch goes away."""

from __future__ import annotations

import asyncio

from tests.support.client import ApiError, next_update
from tests.support.server import LiveServer
from tests.support.social import Social, befriend

WATCH = "subscription($t: ID!) { gameUpdates(tableId: $t) { event view { version } } }"


async def _ends_with(queue: asyncio.Queue[object], code: str, timeout: float = 10.0) -> None:
    """Read updates until the stream answers an error; it must carry `code`."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        assert remaining > 0, f"the stream did not end with {code}"
        try:
            await next_update(queue, timeout=remaining)  # type: ignore[arg-type]
        except ApiError as error:
            assert error.code == code
            return


async def test_revoking_a_spectator_link_ends_its_holders_stream(server: LiveServer) -> None:
    host = await Social.signed_up(server)
    watcher = await Social.signed_up(server)
    table = await host.create_table(visibility="PRIVATE")
    code = await host.spectator_link(table["id"])
    await watcher.watch(table["id"], code)
    async with watcher.subscribe(WATCH, t=table["id"]) as updates:
        assert (await next_update(updates))["gameUpdates"]["event"] == "SNAPSHOT"
        await host.spectator_link(table["id"])  # a new code revokes the old one
        await _ends_with(updates, "NOT_FOUND")


async def test_an_ended_friendship_ends_the_watch_of_a_friends_only_table(
    server: LiveServer,
) -> None:
    host = await Social.signed_up(server)
    friend = await Social.signed_up(server)
    await befriend(host, friend)
    table = await host.create_table(visibility="FRIENDS_ONLY")
    async with friend.subscribe(WATCH, t=table["id"]) as updates:
        assert (await next_update(updates))["gameUpdates"]["event"] == "SNAPSHOT"
        await host.remove_friend(friend.pid)
        await _ends_with(updates, "NOT_FOUND")


async def test_turning_spectating_off_ends_a_spectators_stream(server: LiveServer) -> None:
    host = await Social.signed_up(server)
    watcher = await Social.signed_up(server)
    table = await host.create_table()
    async with watcher.subscribe(WATCH, t=table["id"]) as updates:
        assert (await next_update(updates))["gameUpdates"]["event"] == "SNAPSHOT"
        await host.update_table(table["id"], spectating=False)
        await _ends_with(updates, "FORBIDDEN")
