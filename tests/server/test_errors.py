"""Every error code of the contract the server can answer, with the exact `extensions.code`,
a clear message, the contract's validation order, and nothing changed by a refused request.
GraphQL-level mistakes answer graphql-core's own errors; nothing ever leaks a traceback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import pytest
import pytest_asyncio
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from app.api.graphql.schema import schema
from tests.support.client import SIGN_UP, Api, ApiError
from tests.support.scenarios import (
    ADD_BOT,
    CREATE_TABLE,
    GAME,
    GAME_RECORD,
    GAME_UPDATES,
    JOIN_TABLE,
    LEAVE_TABLE,
    PASS_CARDS,
    PLACE_BID,
    PLAY_CARD,
    REVEAL_HAND,
    SEATS,
    SIGN_IN,
    TABLE,
    FastApi,
    SeatedTable,
    first_event,
    post_raw,
    seat_four_humans,
    signed_up,
    ws_answers,
)
from tests.support.server import LiveServer

INTERNAL = "Internal server error"
ACE_OF_SPADES = {"suit": "SPADES", "rank": "ACE"}
# Huge for any field, yet under the 64 KiB body limit (bigger bodies get 413: see
# tests/security/test_query_limits.py).
HUGE = 60_000


# ---------------------------------------------------------------------------- helpers


def assert_clear_message(error: ApiError) -> None:
    """A human-readable message: not empty, not the internal-error mask, no internals."""
    message = error.errors[0].get("message")
    assert isinstance(message, str) and 3 <= len(message) <= 300, message
    assert message != INTERNAL
    assert "Traceback" not in message and 'File "' not in message, message
    assert "Traceback" not in json.dumps(error.errors)


async def views_of(watchers: Sequence[Api], table_id: str | None) -> list[dict[str, Any]]:
    """Each watcher's view of the game, fetched concurrently."""
    if table_id is None:
        return []
    return list(await asyncio.gather(*(w.game(table_id) for w in watchers)))


async def assert_refused(
    caller: FastApi,
    code: str,
    query: str,
    *,
    table_id: str | None = None,
    watchers: Sequence[Api] = (),
    hint: str | None = None,
    **variables: Any,
) -> ApiError:
    """`query` answers `code` with a clear message, and the game every watcher sees (all
    seats, usually) is exactly the same before and after."""
    before = await views_of(watchers, table_id)
    error = await caller.refusal(query, **variables)
    assert error.code == code, (code, error.errors)
    assert_clear_message(error)
    if hint is not None:
        assert hint in str(error).lower(), (hint, str(error))
    assert await views_of(watchers, table_id) == before, "a refused request changed the game"
    return error


def seated(table: SeatedTable) -> list[FastApi]:
    """The four seated players, NORTH first."""
    return [table.players[s] for s in SEATS]


def card_key(card: dict[str, Any]) -> tuple[str, str]:
    """A hashable card."""
    return (card["suit"], card["rank"])


async def not_on_turn(table: SeatedTable) -> FastApi:
    """A seated player whose turn it is not."""
    turn = (await table.view())["turn"]
    return next(p for seat, p in table.players.items() if seat != turn)


@pytest.fixture(autouse=True, scope="module")
def no_traceback_in_server_log(server: LiveServer) -> Iterator[None]:
    """Nothing any test here sends makes the server log an unexpected error."""
    yield
    logs = server.logs()
    assert "Traceback" not in logs and "unexpected error" not in logs, logs[-3000:]


@pytest.fixture
async def bidding(server: LiveServer) -> SeatedTable:
    """Four humans, the game started: BIDDING, EAST to bid."""
    return await seat_four_humans(server, seed=7)


@pytest.fixture
async def playing(bidding: SeatedTable) -> SeatedTable:
    """Four humans, all bids placed: PLAYING, EAST to lead."""
    await bidding.bid_round({seat: ("TRICKS", 3) for seat in SEATS})
    return bidding


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stranger(server: LiveServer) -> FastApi:
    """A signed-in player who sits nowhere (shared: refusals change nothing)."""
    return await FastApi(server).sign_up()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_bidding(server: LiveServer) -> SeatedTable:
    """A started game shared by tests that only send refused requests (each checks that
    the game stayed the same)."""
    return await seat_four_humans(server, seed=7)


@pytest.fixture
async def waiting(server: LiveServer) -> tuple[str, FastApi, FastApi]:
    """A WAITING table: its host (NORTH) and a second player (EAST)."""
    host, east = await signed_up(server, 2)
    table = await host.create_table(name="waiting")
    await east.join(table["id"], "EAST")
    return table["id"], host, east


async def blind_nil_deal(server: LiveServer) -> SeatedTable:
    """Hand 2 of a game where NORTH_SOUTH trail by 100+: NORTH and SOUTH have their cards
    withheld (blind nil eligible); SOUTH bids first."""
    table = await seat_four_humans(server, seed=7)
    # NORTH_SOUTH bid 13 and fail (-130); EAST_WEST make 3 and more.
    await table.bid_round(
        {
            "EAST": ("TRICKS", 3),
            "SOUTH": ("TRICKS", 13),
            "WEST": ("TRICKS", 3),
            "NORTH": ("TRICKS", 13),
        }
    )
    view = await table.play_legal(52)
    assert (view["phase"], view["handNumber"], view["turn"]) == ("BIDDING", 2, "SOUTH")
    scores = {t["team"]: t["score"] for t in view["teams"]}
    assert scores["NORTH_SOUTH"] <= scores["EAST_WEST"] - 100, scores
    return table


# ---------------------------------------------------------------------------- UNAUTHENTICATED

# Every operation but signUp/signIn, as (document, variables); `TID` is replaced by a real
# table id so that only the missing sign-in can be the reason for the refusal.
TID = "<table>"
HTTP_OPERATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "me": ("{ me { id } }", {}),
    "lobby": ("{ lobby { id } }", {}),
    "table": (TABLE, {"t": TID}),
    "game": (GAME, {"t": TID}),
    "gameRecord": (GAME_RECORD, {"t": TID}),
    "createTable": (CREATE_TABLE, {"i": {"name": "x"}}),
    "joinTable": (JOIN_TABLE, {"t": TID, "s": "EAST"}),
    "addBot": (ADD_BOT, {"t": TID, "s": "EAST"}),
    "leaveTable": (LEAVE_TABLE, {"t": TID}),
    "revealHand": (REVEAL_HAND, {"t": TID}),
    "placeBid": (PLACE_BID, {"t": TID, "b": {"kind": "TRICKS", "tricks": 3}}),
    "passCards": (PASS_CARDS, {"t": TID, "c": [ACE_OF_SPADES, ACE_OF_SPADES]}),
    "playCard": (PLAY_CARD, {"t": TID, "c": ACE_OF_SPADES}),
    "signOut": ("mutation { signOut }", {}),
    "friends": ("{ friends { id } }", {}),
    "blockedPlayers": ("{ blockedPlayers { id } }", {}),
    "friendRequests": ("{ friendRequests { id } }", {}),
    "invitations": ("{ invitations { id } }", {}),
    "sendFriendRequest": (
        "mutation($u: String!) { sendFriendRequest(username: $u) { id } }",
        {"u": "somebody"},
    ),
    "respondToFriendRequest": (
        "mutation($r: ID!) { respondToFriendRequest(requestId: $r, accept: true) }",
        {"r": TID},
    ),
    "removeFriend": ("mutation($p: ID!) { removeFriend(playerId: $p) }", {"p": TID}),
    "blockPlayer": ("mutation($p: ID!) { blockPlayer(playerId: $p) }", {"p": TID}),
    "unblockPlayer": ("mutation($p: ID!) { unblockPlayer(playerId: $p) }", {"p": TID}),
    "invitePlayer": (
        "mutation($t: ID!, $u: String!) { invitePlayer(tableId: $t, username: $u) { id } }",
        {"t": TID, "u": "somebody"},
    ),
    "declineInvitation": (
        "mutation($i: ID!) { declineInvitation(invitationId: $i) }",
        {"i": TID},
    ),
    "createJoinLink": ("mutation($t: ID!) { createJoinLink(tableId: $t) }", {"t": TID}),
    "createSpectatorLink": (
        "mutation($t: ID!) { createSpectatorLink(tableId: $t) }",
        {"t": TID},
    ),
    "watchTable": ("mutation($t: ID!) { watchTable(tableId: $t) { id } }", {"t": TID}),
    "updateTable": (
        'mutation($t: ID!) { updateTable(tableId: $t, input: {name: "x"}) { id } }',
        {"t": TID},
    ),
    "transferHost": (
        "mutation($t: ID!, $p: ID!) { transferHost(tableId: $t, playerId: $p) { id } }",
        {"t": TID, "p": TID},
    ),
    "kickPlayer": (
        "mutation($t: ID!, $p: ID!) { kickPlayer(tableId: $t, playerId: $p) { id } }",
        {"t": TID, "p": TID},
    ),
    "serverTime": ("{ serverTime }", {}),
    "presence": ("query($t: ID!) { presence(tableId: $t) { seat } }", {"t": TID}),
    "reclaimSeat": ("mutation($t: ID!) { reclaimSeat(tableId: $t) { id } }", {"t": TID}),
    "chat": (
        "query($t: ID!) { chat(tableId: $t, channel: PLAYERS) { id } }",
        {"t": TID},
    ),
    "sendChat": (
        'mutation($t: ID!) { sendChat(tableId: $t, channel: PLAYERS, text: "hi") { id } }',
        {"t": TID},
    ),
    "requestRematch": ("mutation($t: ID!) { requestRematch(tableId: $t) { id } }", {"t": TID}),
    "profile": ('{ profile(username: "someone") { memberSince } }', {}),
    "leaderboard": ("{ leaderboard(first: 5) { pageInfo { hasNextPage } } }", {}),
    "myRole": ("{ myRole }", {}),
    "myMute": ("{ myMute { endsAt } }", {}),
    "reports": ("{ reports { edges { cursor } } }", {}),
    "sanctions": ("query($p: ID!) { sanctions(playerId: $p) { id } }", {"p": TID}),
    "reportPlayer": (
        "mutation($p: ID!) { reportPlayer(playerId: $p, reason: OTHER) { id } }",
        {"p": TID},
    ),
    "resolveReport": (
        "mutation($r: ID!) { resolveReport(reportId: $r, status: DISMISSED) { id } }",
        {"r": TID},
    ),
    "mutePlayer": (
        'mutation($p: ID!) { mutePlayer(playerId: $p, minutes: 5, reason: "x") { id } }',
        {"p": TID},
    ),
    "banPlayer": ('mutation($p: ID!) { banPlayer(playerId: $p, reason: "x") { id } }', {"p": TID}),
    "liftSanction": ("mutation($s: ID!) { liftSanction(sanctionId: $s) { id } }", {"s": TID}),
    "hideChatMessage": ("mutation($m: ID!) { hideChatMessage(messageId: $m) }", {"m": TID}),
    "quickPlay": ("{ quickPlay { id } }", {}),
    "quickPlaySearching": ("{ quickPlaySearching }", {}),
    "startQuickPlay": ("mutation { startQuickPlay { id } }", {}),
    "cancelQuickPlay": ("mutation { cancelQuickPlay { id } }", {}),
}
WS_OPERATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "gameUpdates": (GAME_UPDATES, {"t": TID}),
    "chatMessages": ("subscription($t: ID!) { chatMessages(tableId: $t) { id } }", {"t": TID}),
    "lobbyUpdates": ("subscription { lobbyUpdates { event tableId } }", {}),
    "notifications": ("subscription { notifications { event } }", {}),
    "presenceUpdates": (
        "subscription($t: ID!) { presenceUpdates(tableId: $t) { seat } }",
        {"t": TID},
    ),
    "quickPlayUpdates": ("subscription { quickPlayUpdates { id } }", {}),
}
BAD_TOKENS = {
    "no token": None,
    "unknown token": "x" * 43,
    "malformed token": "not a token!",
    "huge token": "y" * 100_000,
}


def with_table(variables: dict[str, Any], table_id: str) -> dict[str, Any]:
    """The variables with the placeholder table id replaced."""
    return {k: (table_id if v == TID else v) for k, v in variables.items()}


def test_the_unauthenticated_checks_cover_every_operation_of_the_schema() -> None:
    """A new operation must be added to the lists above (and so be checked)."""
    served = schema._schema
    assert served.query_type and served.mutation_type and served.subscription_type
    names = {
        *served.query_type.fields,
        *served.mutation_type.fields,
        *served.subscription_type.fields,
    }
    assert names - {"signUp", "signIn"} == set(HTTP_OPERATIONS) | set(WS_OPERATIONS)


@pytest.mark.parametrize("token", list(BAD_TOKENS.values()), ids=list(BAD_TOKENS))
@pytest.mark.parametrize("operation", list(HTTP_OPERATIONS))
async def test_every_operation_needs_a_valid_token(
    server: LiveServer, shared_bidding: SeatedTable, operation: str, token: str | None
) -> None:
    query, variables = HTTP_OPERATIONS[operation]
    table_id = shared_bidding.table_id
    anonymous = FastApi(server, token=token)
    await assert_refused(
        anonymous,
        "UNAUTHENTICATED",
        query,
        table_id=table_id,
        watchers=[shared_bidding.host],
        **with_table(variables, table_id),
    )


async def test_unauthenticated_comes_before_not_found(server: LiveServer) -> None:
    error = await FastApi(server).refusal(PLACE_BID, t="", b={"kind": "TRICKS", "tricks": 99})
    assert error.code == "UNAUTHENTICATED"


@pytest.mark.parametrize("operation", list(WS_OPERATIONS))
async def test_subscriptions_without_sign_in_are_unauthenticated(
    server: LiveServer, shared_bidding: SeatedTable, operation: str
) -> None:
    query, variables = WS_OPERATIONS[operation]
    answer = await first_event(server, query, **with_table(variables, shared_bidding.table_id))
    assert isinstance(answer, ApiError) and answer.code == "UNAUTHENTICATED", answer
    assert_clear_message(answer)


async def test_a_bad_upgrade_header_token_closes_the_websocket_with_4401(
    server: LiveServer,
) -> None:
    async with connect(
        server.ws_url,
        subprotocols=[Subprotocol("graphql-transport-ws")],
        additional_headers={"Authorization": "Bearer not-a-real-token"},
    ) as socket:
        await socket.send(json.dumps({"type": "connection_init", "payload": {}}))
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(socket.recv(), 10)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4401, "invalid or expired token")


# ---------------------------------------------------------------------------- NOT_FOUND

BAD_IDS = {
    "unknown": "0" * 32,
    "empty": "",
    "path": "../x",
    "10k chars": "a" * 10_000,
    "unicode": "tablé-日本-🂡",
    "sql": "x' OR '1'='1",
    "nul": "abc\x00def",
}
BY_ID: dict[str, tuple[str, dict[str, Any]]] = {
    name: HTTP_OPERATIONS[name]
    for name in (
        "table",
        "game",
        "gameRecord",
        "joinTable",
        "addBot",
        "leaveTable",
        "revealHand",
        "placeBid",
        "passCards",
        "playCard",
    )
}


@pytest.mark.parametrize("table_id", list(BAD_IDS.values()), ids=list(BAD_IDS))
@pytest.mark.parametrize("operation", list(BY_ID))
async def test_unknown_or_malformed_table_ids_are_not_found(
    stranger: FastApi, operation: str, table_id: str
) -> None:
    query, variables = BY_ID[operation]
    await assert_refused(
        stranger, "NOT_FOUND", query, hint="table", **with_table(variables, table_id)
    )


@pytest.mark.parametrize("table_id", list(BAD_IDS.values()), ids=list(BAD_IDS))
async def test_subscribing_to_an_unknown_table_is_not_found(
    server: LiveServer, stranger: FastApi, table_id: str
) -> None:
    answer = await first_event(
        server,
        GAME_UPDATES,
        init_payload={"Authorization": f"Bearer {stranger.token}"},
        t=table_id,
    )
    assert isinstance(answer, ApiError) and answer.code == "NOT_FOUND", answer


async def test_a_private_table_is_not_found_for_an_outsider(
    server: LiveServer, stranger: FastApi
) -> None:
    host = await FastApi(server).sign_up()
    table_id = (await host.create_table(visibility="PRIVATE"))["id"]
    for query, variables in (
        (TABLE, {}),
        (GAME, {}),
        (JOIN_TABLE, {"s": "EAST"}),
        (PLACE_BID, {"b": {"kind": "TRICKS", "tricks": 99}}),  # NOT_FOUND before FORBIDDEN
        (ADD_BOT, {"s": "EAST"}),
    ):
        await assert_refused(
            stranger,
            "NOT_FOUND",
            query,
            table_id=table_id,
            watchers=[host],
            t=table_id,
            **variables,
        )
    # Same answer, same message as for a table that does not exist at all.
    missing = await stranger.refusal(TABLE, t="f" * 32)
    hidden = await stranger.refusal(TABLE, t=table_id)
    assert missing.errors[0]["message"] == hidden.errors[0]["message"]


# ---------------------------------------------------------------------------- FORBIDDEN


async def test_moves_of_a_player_without_a_seat_are_forbidden(
    playing: SeatedTable, stranger: FastApi
) -> None:
    view = await playing.view()
    turn_hand = (await playing.players[view["turn"]].game(playing.table_id))["hand"]
    for query, variables in (
        (PLACE_BID, {"b": {"kind": "TRICKS", "tricks": 3}}),
        (PLAY_CARD, {"c": turn_hand[0]}),
        (REVEAL_HAND, {}),
        (PASS_CARDS, {"c": turn_hand[:2]}),
        (LEAVE_TABLE, {}),
    ):
        await assert_refused(
            stranger,
            "FORBIDDEN",
            query,
            table_id=playing.table_id,
            watchers=seated(playing),
            t=playing.table_id,
            **variables,
        )


async def test_only_the_host_may_add_bots(
    waiting: tuple[str, FastApi, FastApi], stranger: FastApi
) -> None:
    table_id, host, east = waiting
    for caller in (east, stranger):
        await assert_refused(
            caller,
            "FORBIDDEN",
            ADD_BOT,
            table_id=table_id,
            watchers=[host],
            hint="host",
            t=table_id,
            s="WEST",
        )


async def test_a_spectator_bidding_on_a_waiting_table_is_forbidden_not_wrong_phase(
    waiting: tuple[str, FastApi, FastApi], stranger: FastApi
) -> None:
    table_id, host, _ = waiting
    await assert_refused(
        stranger,
        "FORBIDDEN",
        PLACE_BID,
        table_id=table_id,
        watchers=[host],
        t=table_id,
        b={"kind": "TRICKS", "tricks": 99},
    )


async def test_watching_a_table_without_spectating_is_forbidden(
    server: LiveServer, stranger: FastApi
) -> None:
    host = await FastApi(server).sign_up()
    table_id = (await host.create_table(spectating=False))["id"]
    await assert_refused(
        stranger, "FORBIDDEN", GAME, table_id=table_id, watchers=[host], t=table_id
    )
    answer = await first_event(
        server,
        GAME_UPDATES,
        init_payload={"Authorization": f"Bearer {stranger.token}"},
        t=table_id,
    )
    assert isinstance(answer, ApiError) and answer.code == "FORBIDDEN", answer


async def test_joining_an_invite_only_table_uninvited_is_forbidden(
    server: LiveServer, stranger: FastApi
) -> None:
    host = await FastApi(server).sign_up()
    table_id = (await host.create_table(joinPolicy="INVITE_ONLY"))["id"]
    await assert_refused(
        stranger,
        "FORBIDDEN",
        JOIN_TABLE,
        table_id=table_id,
        watchers=[host],
        t=table_id,
        s="EAST",
    )


# ---------------------------------------------------------------------------- WRONG_PHASE


async def test_bidding_while_waiting_is_wrong_phase(waiting: tuple[str, FastApi, FastApi]) -> None:
    table_id, host, east = waiting
    for caller in (host, east):
        await assert_refused(
            caller,
            "WRONG_PHASE",
            PLACE_BID,
            table_id=table_id,
            watchers=[host, east],
            t=table_id,
            b={"kind": "TRICKS", "tricks": 3},
        )


async def test_game_moves_out_of_their_phase_are_wrong_phase(
    waiting: tuple[str, FastApi, FastApi],
) -> None:
    table_id, host, east = waiting
    for query, variables in (
        (PLAY_CARD, {"c": ACE_OF_SPADES}),
        (REVEAL_HAND, {}),
        (PASS_CARDS, {"c": [ACE_OF_SPADES, ACE_OF_SPADES]}),
        (GAME_RECORD, {}),
    ):
        await assert_refused(
            host,
            "WRONG_PHASE",
            query,
            table_id=table_id,
            watchers=[host, east],
            t=table_id,
            **variables,
        )


async def test_playing_a_card_during_bidding_is_wrong_phase_even_on_turn(
    shared_bidding: SeatedTable,
) -> None:
    view = await shared_bidding.view()
    for seat, player in shared_bidding.players.items():
        hand = (await player.game(shared_bidding.table_id))["hand"]
        await assert_refused(
            player,
            "WRONG_PHASE",
            PLAY_CARD,
            table_id=shared_bidding.table_id,
            watchers=seated(shared_bidding),
            t=shared_bidding.table_id,
            c=hand[0],
        )
        if seat == view["turn"]:
            await assert_refused(
                player,
                "WRONG_PHASE",
                PASS_CARDS,
                table_id=shared_bidding.table_id,
                watchers=seated(shared_bidding),
                t=shared_bidding.table_id,
                c=hand[:2],
            )


async def test_bidding_passing_or_revealing_during_play_is_wrong_phase(
    playing: SeatedTable,
) -> None:
    player = await playing.on_turn()
    hand = (await player.game(playing.table_id))["hand"]
    for query, variables in (
        (PLACE_BID, {"b": {"kind": "TRICKS", "tricks": 3}}),
        (PLACE_BID, {"b": {"kind": "TRICKS", "tricks": 14}}),  # malformed: phase first
        (PASS_CARDS, {"c": hand[:2]}),
        (PASS_CARDS, {"c": hand[:1]}),  # wrong count: phase first
        (REVEAL_HAND, {}),
    ):
        await assert_refused(
            player,
            "WRONG_PHASE",
            query,
            table_id=playing.table_id,
            watchers=seated(playing),
            t=playing.table_id,
            **variables,
        )


# ---------------------------------------------------------------------------- NOT_YOUR_TURN


async def test_bidding_out_of_turn_is_not_your_turn_even_when_malformed(
    shared_bidding: SeatedTable,
) -> None:
    player = await not_on_turn(shared_bidding)
    for bid in (
        {"kind": "TRICKS", "tricks": 3},
        {"kind": "TRICKS", "tricks": 14},
        {"kind": "TRICKS"},
        {"kind": "NIL", "tricks": 2},
        {"kind": "BLIND_NIL"},
    ):
        await assert_refused(
            player,
            "NOT_YOUR_TURN",
            PLACE_BID,
            table_id=shared_bidding.table_id,
            watchers=seated(shared_bidding),
            hint="turn",
            t=shared_bidding.table_id,
            b=bid,
        )


async def test_playing_out_of_turn_is_not_your_turn_even_with_a_card_not_held(
    playing: SeatedTable,
) -> None:
    views = await playing.views()
    turn = views["NORTH"]["turn"]
    for seat, player in playing.players.items():
        if seat == turn:
            continue
        own = views[seat]["hand"][0]
        other = views[turn]["hand"][0]  # held by the seat on turn, not by this one
        for card in (own, other):
            await assert_refused(
                player,
                "NOT_YOUR_TURN",
                PLAY_CARD,
                table_id=playing.table_id,
                watchers=seated(playing),
                hint="turn",
                t=playing.table_id,
                c=card,
            )


# ---------------------------------------------------------------------------- INVALID_BID


@pytest.mark.parametrize(
    "bid",
    [
        {"kind": "TRICKS", "tricks": 14},
        {"kind": "TRICKS", "tricks": -1},
        {"kind": "TRICKS", "tricks": 2**31 - 1},
        {"kind": "TRICKS", "tricks": -(2**31)},
        {"kind": "TRICKS"},
        {"kind": "TRICKS", "tricks": None},
        {"kind": "NIL", "tricks": 0},
        {"kind": "NIL", "tricks": 3},
        {"kind": "BLIND_NIL", "tricks": 0},
    ],
    ids=[
        "14",
        "-1",
        "int-max",
        "int-min",
        "tricks-missing",
        "tricks-null",
        "nil-0",
        "nil-3",
        "blind-nil-0",
    ],
)
async def test_malformed_bids_on_turn_are_invalid_bid(
    shared_bidding: SeatedTable, bid: dict[str, Any]
) -> None:
    player = await shared_bidding.on_turn()
    await assert_refused(
        player,
        "INVALID_BID",
        PLACE_BID,
        table_id=shared_bidding.table_id,
        watchers=seated(shared_bidding),
        t=shared_bidding.table_id,
        b=bid,
    )


# ---------------------------------------------------------------------------- CARD_NOT_IN_HAND


async def test_playing_a_card_not_held_is_card_not_in_hand(playing: SeatedTable) -> None:
    views = await playing.views()
    turn = views["NORTH"]["turn"]
    player = playing.players[turn]
    for seat, view in views.items():
        if seat != turn:
            await assert_refused(
                player,
                "CARD_NOT_IN_HAND",
                PLAY_CARD,
                table_id=playing.table_id,
                watchers=seated(playing),
                t=playing.table_id,
                c=view["hand"][-1],
            )


async def test_playing_a_card_already_played_is_card_not_in_hand(playing: SeatedTable) -> None:
    leader = await playing.on_turn()
    own = await leader.game(playing.table_id)
    led = own["legalPlays"][0]
    view = await leader.play(playing.table_id, led)
    while view["turn"] != own["viewerSeat"]:  # play on until the leader's turn comes again
        view = await playing.play_legal(1)
    await assert_refused(
        leader,
        "CARD_NOT_IN_HAND",
        PLAY_CARD,
        table_id=playing.table_id,
        watchers=seated(playing),
        t=playing.table_id,
        c=led,
    )


# ---------------------------------------------------------------------------- ILLEGAL_PLAY


async def test_a_card_outside_the_legal_plays_is_illegal_play(playing: SeatedTable) -> None:
    """Plays legal cards until the seat on turn holds cards it may not play, then tries them:
    leading a spade on the first trick, and not following the led suit."""
    refused = {"lead": 0, "follow": 0}
    for _ in range(52):
        player = await playing.on_turn()
        own = await player.game(playing.table_id)
        legal = {card_key(c) for c in own["legalPlays"]}
        illegal = [c for c in own["hand"] if card_key(c) not in legal]
        kind = "follow" if own["currentTrick"] else "lead"
        for card in illegal[:2]:
            await assert_refused(
                player,
                "ILLEGAL_PLAY",
                PLAY_CARD,
                table_id=playing.table_id,
                watchers=seated(playing),
                t=playing.table_id,
                c=card,
            )
            refused[kind] += 1
        if min(refused.values()) >= 2:
            break
        await player.play(playing.table_id, own["legalPlays"][0])
    assert min(refused.values()) >= 2, refused


# ---------------------------------------------------------------------------- NOT_ELIGIBLE


async def test_revealing_a_hand_that_is_not_withheld_is_not_eligible(
    shared_bidding: SeatedTable,
) -> None:
    for player in seated(shared_bidding):  # revealHand needs no turn
        await assert_refused(
            player,
            "NOT_ELIGIBLE",
            REVEAL_HAND,
            table_id=shared_bidding.table_id,
            watchers=seated(shared_bidding),
            t=shared_bidding.table_id,
        )


async def test_blind_nil_without_trailing_by_100_is_not_eligible(
    shared_bidding: SeatedTable,
) -> None:
    player = await shared_bidding.on_turn()
    await assert_refused(
        player,
        "NOT_ELIGIBLE",
        PLACE_BID,
        table_id=shared_bidding.table_id,
        watchers=seated(shared_bidding),
        t=shared_bidding.table_id,
        b={"kind": "BLIND_NIL"},
    )


async def test_refusals_around_blind_nil_and_its_card_exchange(
    server: LiveServer, stranger: FastApi
) -> None:
    """One game set up so NORTH_SOUTH trail by 100+ (hand 1 costs a whole hand of plays):
    the withheld-hand bids, then every wrong pass in the exchange (BAD_USER_INPUT is only
    reachable there)."""
    table = await blind_nil_deal(server)
    tid = table.table_id
    north, east, south, west = (table.players[s] for s in SEATS)
    everyone = seated(table)
    # A withheld seat must reveal before any bid but BLIND_NIL...
    for bid in ({"kind": "TRICKS", "tricks": 3}, {"kind": "TRICKS", "tricks": 0}, {"kind": "NIL"}):
        await assert_refused(
            south, "INVALID_BID", PLACE_BID, table_id=tid, watchers=everyone, t=tid, b=bid
        )
    # ... but the turn is checked first, and a malformed bid is still malformed.
    await assert_refused(
        north,
        "NOT_YOUR_TURN",
        PLACE_BID,
        table_id=tid,
        watchers=everyone,
        t=tid,
        b={"kind": "BLIND_NIL"},
    )
    await assert_refused(
        south,
        "INVALID_BID",
        PLACE_BID,
        table_id=tid,
        watchers=everyone,
        t=tid,
        b={"kind": "TRICKS", "tricks": 14},
    )
    # The other team sees its cards: nothing to reveal.
    await assert_refused(east, "NOT_ELIGIBLE", REVEAL_HAND, table_id=tid, watchers=everyone, t=tid)
    # SOUTH bids blind nil: NORTH gets its cards and can neither reveal nor bid blind nil.
    await south.bid(tid, "BLIND_NIL")
    await assert_refused(south, "NOT_ELIGIBLE", REVEAL_HAND, table_id=tid, watchers=everyone, t=tid)
    await assert_refused(north, "NOT_ELIGIBLE", REVEAL_HAND, table_id=tid, watchers=everyone, t=tid)
    await west.bid(tid, "TRICKS", 3)
    await assert_refused(
        north,
        "NOT_ELIGIBLE",
        PLACE_BID,
        table_id=tid,
        watchers=everyone,
        t=tid,
        b={"kind": "BLIND_NIL"},
    )
    await north.bid(tid, "TRICKS", 5)
    await east.bid(tid, "TRICKS", 4)

    # The exchange: SOUTH passes first.
    views = await table.views()
    assert (views["SOUTH"]["phase"], views["SOUTH"]["turn"]) == ("EXCHANGE", "SOUTH")
    hand = views["SOUTH"]["hand"]
    for cards in ([], hand[:1], hand[:3], hand[:5], [hand[0], hand[0]]):
        await assert_refused(
            south, "BAD_USER_INPUT", PASS_CARDS, table_id=tid, watchers=everyone, t=tid, c=cards
        )
    await assert_refused(
        south,
        "CARD_NOT_IN_HAND",
        PASS_CARDS,
        table_id=tid,
        watchers=everyone,
        t=tid,
        c=[hand[0], views["EAST"]["hand"][0]],
    )
    for seat in ("NORTH", "EAST"):
        await assert_refused(
            table.players[seat],
            "NOT_YOUR_TURN",
            PASS_CARDS,
            table_id=tid,
            watchers=everyone,
            t=tid,
            c=views[seat]["hand"][:2],
        )
    await assert_refused(
        stranger, "FORBIDDEN", PASS_CARDS, table_id=tid, watchers=everyone, t=tid, c=hand[:2]
    )
    await assert_refused(
        south, "WRONG_PHASE", PLAY_CARD, table_id=tid, watchers=everyone, t=tid, c=hand[0]
    )
    await assert_refused(
        south,
        "WRONG_PHASE",
        PLACE_BID,
        table_id=tid,
        watchers=everyone,
        t=tid,
        b={"kind": "TRICKS", "tricks": 1},
    )
    # The right pass is accepted.
    after = await south.pass_cards(tid, hand[:2])
    assert after["version"] == views["SOUTH"]["version"] + 1


# ---------------------------------------------------------------------------- BAD_USER_INPUT


@pytest.mark.parametrize(
    "username",
    ["ab", "a" * 21, "bad name", "bad!", "tab\tname", "日本語名前", "", "x" * HUGE],
    ids=["too-short", "too-long", "space", "punctuation", "tab", "unicode", "empty", "60KB"],
)
async def test_sign_up_refuses_bad_usernames(server: LiveServer, username: str) -> None:
    await assert_refused(
        FastApi(server), "BAD_USER_INPUT", SIGN_UP, hint="username", u=username, p="password123"
    )


@pytest.mark.parametrize("password", ["", "short", "1234567", "p" * HUGE])
async def test_sign_up_refuses_bad_passwords(server: LiveServer, password: str) -> None:
    await assert_refused(
        FastApi(server), "BAD_USER_INPUT", SIGN_UP, hint="password", u="goodname", p=password
    )
    # Nothing was created: the name is still free.
    await FastApi(server).sign_up(f"ok{len(password)}x")


async def test_sign_up_refuses_a_username_taken_in_another_case(server: LiveServer) -> None:
    await FastApi(server).sign_up("Dup_Name")
    for variant in ("Dup_Name", "dup_name", "DUP_NAME"):
        await assert_refused(
            FastApi(server), "BAD_USER_INPUT", SIGN_UP, hint="taken", u=variant, p="password123"
        )


@pytest.mark.parametrize(
    "options",
    [
        {"name": "n" * 51},
        {"name": "n" * HUGE},
        {"visibility": "PRIVATE", "joinPolicy": "OPEN"},
        {"visibility": "PRIVATE", "joinPolicy": "FRIENDS_ONLY"},
        {"visibility": "FRIENDS_ONLY", "joinPolicy": "OPEN"},
    ],
    ids=["name-51", "name-60KB", "private-open", "private-friends", "friends-open"],
)
async def test_create_table_refuses_bad_options(stranger: FastApi, options: dict[str, Any]) -> None:
    lobby_before = await stranger.call("{ lobby { id } }")
    await assert_refused(stranger, "BAD_USER_INPUT", CREATE_TABLE, i=options)
    assert await stranger.call("{ lobby { id } }") == lobby_before


async def test_a_table_name_is_trimmed_to_fit_50_characters(stranger: FastApi) -> None:
    table = await stranger.create_table(name="  " + "n" * 50 + "  ")
    assert table["name"] == "n" * 50


# ---------------------------------------------------------------------------- seats


async def test_taking_an_occupied_seat_is_seat_taken(
    waiting: tuple[str, FastApi, FastApi], stranger: FastApi
) -> None:
    table_id, host, east = waiting
    for seat in ("NORTH", "EAST"):
        await assert_refused(
            stranger,
            "SEAT_TAKEN",
            JOIN_TABLE,
            table_id=table_id,
            watchers=[host, east],
            t=table_id,
            s=seat,
        )
        await assert_refused(
            host,
            "SEAT_TAKEN",
            ADD_BOT,
            table_id=table_id,
            watchers=[host, east],
            t=table_id,
            s=seat,
        )


async def test_sitting_twice_is_already_seated(waiting: tuple[str, FastApi, FastApi]) -> None:
    table_id, host, east = waiting
    for player, seat in ((host, "SOUTH"), (east, "WEST"), (east, "EAST"), (host, "EAST")):
        await assert_refused(
            player,
            "ALREADY_SEATED",
            JOIN_TABLE,
            table_id=table_id,
            watchers=[host, east],
            t=table_id,
            s=seat,
        )


async def test_joining_or_adding_a_bot_to_a_started_game_is_table_full(
    shared_bidding: SeatedTable, stranger: FastApi
) -> None:
    for seat in SEATS:
        await assert_refused(
            stranger,
            "TABLE_FULL",
            JOIN_TABLE,
            table_id=shared_bidding.table_id,
            watchers=seated(shared_bidding),
            t=shared_bidding.table_id,
            s=seat,
        )
    await assert_refused(
        shared_bidding.host,
        "TABLE_FULL",
        ADD_BOT,
        table_id=shared_bidding.table_id,
        watchers=seated(shared_bidding),
        t=shared_bidding.table_id,
        s="EAST",
    )


# ---------------------------------------------------------------------------- CONFLICT


async def test_a_stale_expected_version_is_a_conflict(playing: SeatedTable) -> None:
    player = await playing.on_turn()
    own = await player.game(playing.table_id)
    version = own["version"]
    card = own["legalPlays"][0]
    for stale in (version - 1, version + 1, 0, -5):
        await assert_refused(
            player,
            "CONFLICT",
            PLAY_CARD,
            table_id=playing.table_id,
            watchers=seated(playing),
            t=playing.table_id,
            c=card,
            v=stale,
        )
    answer = await player.call(PLAY_CARD, t=playing.table_id, c=card, v=version)
    assert answer["playCard"]["version"] == version + 1


async def test_a_stale_expected_version_on_a_bid_or_reveal_is_a_conflict(
    bidding: SeatedTable,
) -> None:
    player = await bidding.on_turn()
    version = (await bidding.view())["version"]
    await assert_refused(
        player,
        "CONFLICT",
        PLACE_BID,
        table_id=bidding.table_id,
        watchers=seated(bidding),
        t=bidding.table_id,
        b={"kind": "TRICKS", "tricks": 2},
        v=version - 1,
    )
    await assert_refused(
        player,
        "CONFLICT",
        REVEAL_HAND,
        table_id=bidding.table_id,
        watchers=seated(bidding),
        t=bidding.table_id,
        v=version - 1,
    )
    answer = await player.call(
        PLACE_BID, t=bidding.table_id, b={"kind": "TRICKS", "tricks": 2}, v=version
    )
    assert answer["placeBid"]["version"] == version + 1


# ---------------------------------------------------------------------------- sign-in


async def test_sign_in_does_not_tell_unknown_usernames_from_wrong_passwords(
    server: LiveServer,
) -> None:
    await FastApi(server).sign_up("known_user", "password123")
    anonymous = FastApi(server)
    answers = [
        await assert_refused(anonymous, "UNAUTHENTICATED", SIGN_IN, u=u, p=p)
        for u, p in (
            ("nobody_here", "password123"),
            ("known_user", "wrong-password"),
            ("known_user", ""),
            ("x" * HUGE, "password123"),
            ("known_user", "p" * HUGE),
        )
    ]
    assert len({a.errors[0]["message"] for a in answers}) == 1, answers


# ---------------------------------------------------------------------------- GraphQL level


GRAPHQL_MISTAKES: dict[str, tuple[dict[str, Any], str]] = {
    "unknown field": ({"query": "{ me { id nope } }"}, "Cannot query field 'nope'"),
    "unknown root field": ({"query": "{ tables { id } }"}, "Cannot query field 'tables'"),
    "wrong enum literal": (
        {"query": 'mutation { joinTable(tableId: "x", seat: NORTHEAST) { id } }'},
        "NORTHEAST",
    ),
    "wrong enum variable": (
        {"query": JOIN_TABLE, "variables": {"t": "x", "s": "UP"}},
        "'UP' does not exist in 'Seat' enum",
    ),
    "wrong enum in input": (
        {"query": PLACE_BID, "variables": {"t": "x", "b": {"kind": "MISERE"}}},
        "MISERE",
    ),
    "missing argument": (
        {"query": 'mutation { addBot(tableId: "x") { id } }'},
        "is required, but it was not provided",
    ),
    "missing variable": ({"query": GAME, "variables": {}}, "non-null type 'ID!'"),
    "wrong type literal": (
        {
            "query": 'mutation { placeBid(tableId: "x", bid: {kind: TRICKS, tricks: "3"}) '
            "{ version } }"
        },
        "Int cannot represent",
    ),
    "wrong type variable": (
        {"query": PLACE_BID, "variables": {"t": "x", "b": {"kind": "TRICKS", "tricks": 3.5}}},
        "Int cannot represent",
    ),
    "huge int literal": (
        {
            "query": 'mutation { placeBid(tableId: "x", bid: {kind: TRICKS, tricks: 2147483648}) '
            "{ version } }"
        },
        "non 32-bit signed integer",
    ),
    "huge int variable": (
        {"query": PLACE_BID, "variables": {"t": "x", "b": {"kind": "TRICKS", "tricks": 2**63}}},
        "non 32-bit signed integer",
    ),
    "huge expected version": (
        {"query": PLAY_CARD, "variables": {"t": "x", "c": ACE_OF_SPADES, "v": 10**30}},
        "non 32-bit signed integer",
    ),
    "huge seed": (
        {"query": CREATE_TABLE, "variables": {"i": {"seed": 2**40}}},
        "non 32-bit signed integer",
    ),
    "unknown input field": (
        {"query": CREATE_TABLE, "variables": {"i": {"colour": "red"}}},
        "colour",
    ),
    "null for non-null": (
        {"query": JOIN_TABLE, "variables": {"t": None, "s": "EAST"}},
        "non-null type 'ID!'",
    ),
    "syntax error": ({"query": "{ me { id }"}, "Syntax Error"),
    "subscription over plain http": (
        {"query": "subscription { lobbyUpdates { event } }"},
        "subscriptions are served over WebSocket only",
    ),
    "unknown operation name": ({"query": "query A { me { id } }", "operationName": "B"}, "B"),
    "empty document": ({"query": ""}, ""),
    "fragment cycle": (
        {"query": "query { me { ...A } } fragment A on Player { id ...A }"},
        "Cannot spread fragment 'A' within itself",
    ),
}


@pytest.mark.parametrize("body", list(GRAPHQL_MISTAKES.values()), ids=list(GRAPHQL_MISTAKES))
async def test_graphql_mistakes_answer_validation_errors_not_internal_ones(
    server: LiveServer, stranger: FastApi, body: tuple[dict[str, Any], str]
) -> None:
    payload, expected = body
    response = await post_raw(server, payload, stranger.token)
    assert "Traceback" not in response.text and INTERNAL not in response.text, response.text
    assert response.status_code in (200, 400), response.status_code
    if response.headers.get("content-type", "").startswith("application/json"):
        answer = response.json()
        assert answer.get("errors") or answer.get("data") is not None, answer
        if expected:
            assert any(expected in e["message"] for e in answer["errors"]), answer
    else:
        assert expected == "" or expected in response.text, response.text


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"{",
        b"[]",
        b'{"query": 5}',
        b'{"query": "{ me { id } }", "variables": 3}',
        b"\xff\xfe\x00",
        b'{"query": "\xff"}',
    ],
    ids=[
        "text",
        "truncated",
        "array",
        "query-not-string",
        "variables-not-object",
        "binary",
        "not-utf8",
    ],
)
async def test_malformed_request_bodies_are_refused_without_internals(
    server: LiveServer, stranger: FastApi, content: bytes
) -> None:
    response = await post_raw(server, None, stranger.token, content=content)
    assert response.status_code in (200, 400), (response.status_code, response.text)
    assert "Traceback" not in response.text and INTERNAL not in response.text, response.text


async def test_the_server_still_answers_after_every_mistake(stranger: FastApi) -> None:
    """Run last in this module: nothing above took the server down or wedged it."""
    results = await asyncio.gather(*(stranger.call("{ me { id } }") for _ in range(5)))
    assert all(r["me"]["id"] == stranger.player_id for r in results)


# ---------------------------------------------------------------------------- WebSocket level


def subscribe_message(payload: Any, message_id: Any = "1") -> str:
    """A graphql-transport-ws subscribe message."""
    return json.dumps({"type": "subscribe", "id": message_id, "payload": payload})


LOBBY = "subscription { lobbyUpdates { event } }"
WS_MISTAKES: dict[str, str | bytes] = {
    "not json": "{",
    "binary frame": b"\xff\xfe",
    "a list": json.dumps([1, 2]),
    "a string": json.dumps("subscribe"),
    "unknown type": json.dumps({"type": "nope"}),
    "type not a string": json.dumps({"type": ["subscribe"]}),
    "id not a string": subscribe_message({"query": LOBBY}, {"a": 1}),
    "no id": json.dumps({"type": "subscribe", "payload": {"query": LOBBY}}),
    "null payload": subscribe_message(None),
    "query not a string": subscribe_message({"query": 5}),
    "variables not an object": subscribe_message({"query": LOBBY, "variables": "x"}),
    "operationName not a string": subscribe_message({"query": LOBBY, "operationName": 5}),
    "syntax error": subscribe_message({"query": "subscription {"}),
}


@pytest.mark.parametrize("message", list(WS_MISTAKES.values()), ids=list(WS_MISTAKES))
async def test_malformed_websocket_messages_close_with_4400(
    server: LiveServer, stranger: FastApi, message: str | bytes
) -> None:
    answers, code = await ws_answers(server, stranger.token, [message])
    assert (answers, code) == ([], 4400)


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"query": "subscription { nope }"}, "Cannot query field 'nope'"),
        ({"query": GAME_UPDATES, "variables": {"t": 5.5}}, "ID cannot represent"),
        ({"query": GAME_UPDATES, "variables": {"t": "x", "s": 2**40}}, "non 32-bit"),
        ({"query": GAME_UPDATES, "variables": {}}, "non-null type 'ID!'"),
    ],
    ids=["unknown-field", "wrong-type", "huge-int", "missing-variable"],
)
async def test_invalid_subscriptions_answer_validation_errors(
    server: LiveServer, stranger: FastApi, payload: dict[str, Any], expected: str
) -> None:
    answers, code = await ws_answers(server, stranger.token, [subscribe_message(payload)])
    assert code is None and answers[0]["type"] == "error", answers
    messages = [e["message"] for e in answers[0]["payload"]]
    assert any(expected in m for m in messages), messages
    assert INTERNAL not in json.dumps(answers)


async def test_a_mutation_over_get_is_refused_and_changes_nothing(
    server: LiveServer, stranger: FastApi
) -> None:
    lobby = await stranger.call("{ lobby { id } }")
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(
            server.http_url,
            params={"query": 'mutation { createTable(input: {name: "via get"}) { id } }'},
            headers={"Authorization": f"Bearer {stranger.token}"},
        )
    assert response.status_code in (400, 405), response.text
    assert "Traceback" not in response.text and INTERNAL not in response.text
    assert await stranger.call("{ lobby { id } }") == lobby
