"""Friends and invitations in the browser: a friend request arrives live, is accepted,
and an invitation to a private table lets the friend sit."""

from __future__ import annotations

from typing import Any

from tests.support.server import LiveServer
from tests.web import pages


def test_a_friend_is_invited_to_a_private_table_and_sits(
    browser: Any, web_server: LiveServer
) -> None:
    host = pages.sign_up(browser, web_server, "hostess")
    guest = pages.sign_up(browser, web_server, "guest")

    host.page.get_by_role("link", name="Friends").click()
    # A refusal is told in words chosen by its extensions.code (NOT_FOUND here).
    host.page.get_by_label("Add a friend by username").fill("nobody-by-this-name")
    host.page.get_by_role("button", name="Send request").click()
    alert = host.page.get_by_role("alert")
    alert.wait_for()
    assert "does not exist, or you cannot see it" in alert.inner_text()
    host.page.get_by_label("Add a friend by username").fill(guest.username)
    host.page.get_by_role("button", name="Send request").click()
    host.page.get_by_text(f"Friend request sent to {guest.username}.").wait_for()

    # The guest is told at once (notifications), then accepts on the Friends page.
    guest.page.get_by_text(f"{host.username} sent you a friend request.").wait_for()
    guest.page.get_by_role("link", name="Friends").click()
    guest.page.get_by_role("button", name="Accept").click()
    guest.page.get_by_text(f"You and {host.username} are friends.").wait_for()
    host.page.get_by_text(f"{guest.username} accepted your friend request.").wait_for()

    host.page.get_by_role("link", name="Lobby").click()
    host.page.get_by_role("combobox", name="Who can see it").select_option("PRIVATE")
    pages.create_table(host, "Private game")
    host.page.get_by_label("Username").fill(guest.username)
    host.page.get_by_role("button", name="Invite", exact=True).click()
    host.page.get_by_text(f"{guest.username} is invited.").wait_for()

    # The invitation is in the guest's lobby and opens the private table.
    guest.page.get_by_role("link", name="Lobby").click()
    guest.page.get_by_text(f"{host.username} invited you to Private game.").wait_for()
    guest.page.locator(".invite").get_by_role("button", name="Open").click()
    guest.page.locator("li[data-seat=EAST]").get_by_role("button", name="Sit here").click()
    host.page.locator("li[data-seat=EAST]", has_text=guest.username).wait_for()

    # A host tool: a join link names this table.
    host.page.get_by_role("button", name="Create a join link").click()
    link = host.page.locator("input[data-link-kind=join]").input_value()
    assert "/table/" in link and "?code=" in link
    for player in (host, guest):
        player.page.context.close()
