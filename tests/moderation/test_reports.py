"""Roles and reports (docs/rules.md, Moderation) on a real server: every account a PLAYER
until the operator says more, the one FORBIDDEN before anything else for non-moderators,
reports with an optional message the reporter could read, one report per message, the
limit of 10 an hour, and the moderators' queue in cursor pages."""

from __future__ import annotations

import sqlite3

from tests.support.client import Api, ApiError
from tests.support.moderation import (
    BAN,
    HIDE,
    LIFT,
    MUTE,
    MY_ROLE,
    RESOLVE,
    SANCTIONS,
    all_reports,
    refusal,
    report,
    reports,
    resolve,
)
from tests.support.server import LiveServer
from tests.support.social import Social
from tests.support.table_talk import send_chat

UNKNOWN = "0" * 32


async def seated_pair(server: LiveServer) -> tuple[Social, Social, str]:
    """Two players at one PRIVATE table (nobody else sees it), the game not started."""
    host, guest = Social(server), Social(server)
    await host.sign_up()
    await guest.sign_up()
    table = await host.create_table(visibility="PRIVATE")
    link = await host.call("mutation($t: ID!) { createJoinLink(tableId: $t) }", t=table["id"])
    await guest.join(table["id"], "SOUTH", code=link["createJoinLink"])
    return host, guest, str(table["id"])


async def test_every_account_is_a_player_until_the_operator_makes_it_more(
    server: LiveServer, moderator: Social, admin: Social
) -> None:
    player = await Social.signed_up(server)
    assert (await player.call(MY_ROLE))["myRole"] == "PLAYER"
    assert (await moderator.call(MY_ROLE))["myRole"] == "MODERATOR"
    assert (await admin.call(MY_ROLE))["myRole"] == "ADMIN"
    assert await refusal(Api(server).call(MY_ROLE)) == "UNAUTHENTICATED"


async def test_every_moderator_operation_answers_forbidden_to_a_player_before_anything_else(
    server: LiveServer,
) -> None:
    player = await Social.signed_up(server)
    unknown = {
        "reports": player.call("{ reports { edges { cursor } } }"),
        "bad page": player.call('{ reports(first: 0, after: "x") { edges { cursor } } }'),
        "sanctions": player.call(SANCTIONS, p=UNKNOWN),
        "resolve": player.call(RESOLVE, r=UNKNOWN, s="OPEN"),
        "mute": player.call(MUTE, p=UNKNOWN, m=0, r=""),
        "ban": player.call(BAN, p=UNKNOWN, r=""),
        "lift": player.call(LIFT, s=UNKNOWN),
        "hide": player.call(HIDE, m=UNKNOWN),
    }
    for name, call in unknown.items():
        assert await refusal(call) == "FORBIDDEN", name
    anonymous = Api(server)
    assert await refusal(anonymous.call(BAN, p=UNKNOWN, r="x")) == "UNAUTHENTICATED"


async def test_unknown_players_reports_sanctions_and_messages_are_not_found(
    server: LiveServer, moderator: Social
) -> None:
    player = await Social.signed_up(server)
    assert await refusal(report(player, UNKNOWN)) == "NOT_FOUND"
    assert await refusal(moderator.call(SANCTIONS, p=UNKNOWN)) == "NOT_FOUND"
    assert await refusal(moderator.call(RESOLVE, r=UNKNOWN, s="DISMISSED")) == "NOT_FOUND"
    assert await refusal(moderator.call(MUTE, p=UNKNOWN, m=5, r="x")) == "NOT_FOUND"
    assert await refusal(moderator.call(BAN, p=UNKNOWN, r="x")) == "NOT_FOUND"
    assert await refusal(moderator.call(LIFT, s=UNKNOWN)) == "NOT_FOUND"
    assert await refusal(moderator.call(HIDE, m=UNKNOWN)) == "NOT_FOUND"


async def test_a_player_reports_another_with_a_note_of_at_most_500_characters_never_themselves(
    server: LiveServer,
) -> None:
    reporter, other = await Social.signed_up(server), await Social.signed_up(server)
    assert await refusal(report(reporter, reporter.pid)) == "BAD_USER_INPUT"
    assert await refusal(report(reporter, other.pid, note="x" * 501)) == "BAD_USER_INPUT"
    made = await report(reporter, other.pid, "STALLING", note="y" * 500)
    assert made["reporter"] == {"id": reporter.pid, "username": reporter.name}
    assert made["reported"] == {"id": other.pid, "username": other.name}
    assert (made["reason"], made["status"], made["note"]) == ("STALLING", "OPEN", "y" * 500)
    assert made["message"] is None and made["tableId"] is None and made["resolvedBy"] is None
    assert made["createdAt"].endswith("Z")


async def test_a_report_names_a_message_of_the_reported_player_that_the_reporter_could_read(
    server: LiveServer,
) -> None:
    host, guest, table_id = await seated_pair(server)
    stranger = await Social.signed_up(server)
    insult = await send_chat(guest, table_id, "PLAYERS", "you play like a bot")
    own = await send_chat(host, table_id, "PLAYERS", "be nice")

    made = await report(host, guest.pid, message_id=insult["id"], note="rude")
    assert made["message"] == insult and made["tableId"] == table_id
    # A message of someone else than the reported player, or one the reporter could not
    # read (a PRIVATE table they never saw), or none at all: NOT_FOUND.
    assert await refusal(report(host, guest.pid, message_id=own["id"])) == "NOT_FOUND"
    assert await refusal(report(stranger, guest.pid, message_id=insult["id"])) == "NOT_FOUND"
    assert await refusal(report(host, guest.pid, message_id=UNKNOWN)) == "NOT_FOUND"
    # Reporting the same message again answers the first report, as it was.
    again = await report(host, guest.pid, "OTHER", message_id=insult["id"], note="again")
    assert again == made


async def test_at_most_ten_stored_reports_per_player_per_hour_whatever_the_rate_limits_say(
    server: LiveServer,
) -> None:
    # The test server runs with SPADES_RATE_LIMITS=0: this limit is a rule, not a limit.
    host, guest, table_id = await seated_pair(server)
    message = await send_chat(guest, table_id, "PLAYERS", "spam")
    first = await report(host, guest.pid, message_id=message["id"])
    for _ in range(9):
        # Refused reports do not count.
        assert await refusal(report(host, host.pid)) == "BAD_USER_INPUT"
        await report(host, guest.pid, "STALLING")
    try:
        await report(host, guest.pid, "CHEATING")
    except ApiError as exc:
        assert exc.code == "RATE_LIMITED"
        assert 3500 < exc.errors[0]["extensions"]["retryAfter"] <= 3600
    else:
        raise AssertionError("an eleventh report in the hour was stored")
    # A repeated report is answered (it stores nothing, so it does not count either).
    assert await report(host, guest.pid, message_id=message["id"]) == first
    # The limit is the reporter's own: others still report.
    assert (await report(guest, host.pid))["status"] == "OPEN"


async def test_the_queue_is_oldest_first_in_cursor_pages_and_a_resolution_records_who_and_when(
    server: LiveServer, moderator: Social
) -> None:
    reporter, target = await Social.signed_up(server), await Social.signed_up(server)
    made = [await report(reporter, target.pid, "OTHER", note=f"n{i}") for i in range(4)]
    everything = [edge["node"]["id"] for edge in (await reports(moderator, first=100))["edges"]]
    queue = await all_reports(moderator, first=3)
    assert [r["id"] for r in queue] == everything  # in pages: the same order, no repeat
    ours = [r["id"] for r in queue if r["id"] in {m["id"] for m in made}]
    assert ours == [m["id"] for m in made]

    page = await reports(moderator, "OPEN", 1)
    assert page["pageInfo"]["hasNextPage"] and len(page["edges"]) == 1
    cursor = page["pageInfo"]["endCursor"]
    assert await refusal(reports(moderator, "DISMISSED", 1, cursor)) == "BAD_USER_INPUT"
    assert await refusal(reports(moderator, "OPEN", 1, cursor[:-2] + "xx")) == "BAD_USER_INPUT"
    assert await refusal(reports(moderator, "OPEN", 0)) == "BAD_USER_INPUT"
    assert await refusal(reports(moderator, "OPEN", 101)) == "BAD_USER_INPUT"

    done = await resolve(moderator, made[1]["id"], "ACTIONED")
    assert done["status"] == "ACTIONED" and done["resolvedAt"].endswith("Z")
    assert done["resolvedBy"] == {"id": moderator.pid, "username": moderator.name}
    assert await resolve(moderator, made[1]["id"], "ACTIONED") == done  # unchanged
    assert await refusal(resolve(moderator, made[1]["id"], "DISMISSED")) == "BAD_USER_INPUT"
    assert await refusal(resolve(moderator, made[2]["id"], "OPEN")) == "BAD_USER_INPUT"
    await resolve(moderator, made[2]["id"], "DISMISSED")

    open_ids = {r["id"] for r in await all_reports(moderator, "OPEN", 50)}
    assert made[0]["id"] in open_ids and made[3]["id"] in open_ids
    assert not {made[1]["id"], made[2]["id"]} & open_ids
    assert made[1]["id"] in {r["id"] for r in await all_reports(moderator, "ACTIONED", 50)}
    assert made[2]["id"] in {r["id"] for r in await all_reports(moderator, "DISMISSED", 50)}
    # Paging on resolves nothing away: nothing is deleted.
    with sqlite3.connect(server.database) as db:
        (count,) = db.execute(
            "SELECT count(*) FROM reports WHERE reporter_id = ?", (reporter.pid,)
        ).fetchone()
    assert count == 4
