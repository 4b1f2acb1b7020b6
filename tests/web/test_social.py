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


def test_host_tools_hand_over_kick_and_a_spectator_link_for_one_who_signs_in(
    browser: Any, web_server: LiveServer
) -> None:
    host = pages.sign_up(browser, web_server, "handover")
    guest = pages.sign_up(browser, web_server, "heir")
    host.page.get_by_role("combobox", name="Who can see it").select_option("PRIVATE")
    pages.create_table(host, "Back room")
    host.page.get_by_role("button", name="Create a join link").click()
    guest.page.goto(host.page.locator("input[data-link-kind=join]").input_value())
    guest.page.locator("li[data-seat=EAST]").get_by_role("button", name="Sit here").click()
    host.page.locator("li[data-seat=EAST]", has_text=guest.username).wait_for()

    # The host hands the table over; the guest's page gains the host tools, live.
    host.page.locator("li[data-seat=EAST]").get_by_role("button", name="Make host").click()
    host.page.get_by_role("status").filter(has_text=f"{guest.username} is now the host.").wait_for()
    guest.page.locator(".host-tools").wait_for()
    assert host.page.locator(".host-tools").count() == 0
    assert "host" in guest.page.locator("li[data-seat=EAST] .badge").all_inner_texts()

    # The new host frees the old host's seat.
    guest.page.locator("li[data-seat=NORTH]").get_by_role("button", name="Kick").click()
    guest.page.locator("li[data-seat=NORTH]", has_text="empty").wait_for()
    # The kicked player's page is told, and leaves the table for the lobby.
    host.page.get_by_text("The host removed you from a table.").wait_for()
    host.page.locator("[data-ready=lobby]").wait_for()

    # A spectator link lets one who signs in (not up) on another browser watch only.
    watcher = pages.sign_up(browser, web_server, "peeker")
    guest.page.get_by_role("button", name="Create a spectator link").click()
    watch_link = guest.page.locator("input[data-link-kind=watch]").input_value()
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{web_server.port}/")
    page.get_by_role("button", name="Sign in").click()  # switch the form to signing in
    page.get_by_label("Username").fill(watcher.username)
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.locator(f"[data-me='{watcher.username}']").wait_for()
    page.goto(watch_link)
    page.locator(".table-page[data-mode=spectator]").wait_for()
    context.close()
