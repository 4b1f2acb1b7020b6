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
    host.page.locator(".host-tools").wait_for(state="detached")
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


def lobby_titles(player: pages.Player) -> list[str]:
    """The titles of the table cards the lobby shows now, in order."""
    return [str(t) for t in player.page.locator(".table-card h3").all_inner_texts()]


def wait_lobby_titles(player: pages.Player, titles: list[str]) -> None:
    """Wait until the lobby shows exactly these table cards (in any order)."""
    player.page.wait_for_function(
        """want => {
          const shown = [...document.querySelectorAll('.table-card h3')].map(e => e.textContent);
          return shown.length === want.length && want.every(t => shown.includes(t));
        }""",
        arg=titles,
    )


def test_lobby_filters_leaving_before_the_start_declining_an_invitation_and_unfriending(
    browser: Any, web_server: LiveServer
) -> None:
    host = pages.sign_up(browser, web_server, "filterer")
    guest = pages.sign_up(browser, web_server, "drifter")
    # A word only this test's tables hold: the other tests' tables on this server never match.
    token = pages.unique_name("zq")
    alpha, beta = f"{token} alpha", f"{token} beta"

    # Friends first (the host removes the guest at the end).
    host.page.get_by_role("link", name="Friends").click()
    host.page.get_by_label("Add a friend by username").fill(guest.username)
    host.page.get_by_role("button", name="Send request").click()
    # Sent (stored) before the guest's page reads its requests, so the Accept button does
    # not hang on the guest's notification subscription being live already.
    host.page.get_by_text(f"Friend request sent to {guest.username}.").wait_for()
    guest.page.get_by_role("link", name="Friends").click()
    guest.page.get_by_role("button", name="Accept").click()
    guest.page.get_by_text(f"You and {host.username} are friends.").wait_for()

    # Declining an invitation: it leaves the guest's lists, and the host is told.
    host.page.get_by_role("link", name="Lobby").click()
    pages.create_table(host, alpha)
    host.page.get_by_label("Username").fill(guest.username)
    host.page.get_by_role("button", name="Invite", exact=True).click()
    host.page.get_by_text(f"{guest.username} is invited.").wait_for()
    guest.page.get_by_role("link", name="Lobby").click()
    invite = guest.page.locator(".invite", has_text=f"{host.username} invited you to {alpha}.")
    invite.get_by_role("button", name="Decline").click()
    host.page.get_by_text(f"{guest.username} declined your invitation.").wait_for()
    invite.wait_for(state="detached")
    guest.page.get_by_role("link", name="Friends").click()
    invitations = guest.page.locator("section[aria-labelledby=inv-title]")
    invitations.get_by_text("None pending.").wait_for()
    guest.page.reload()  # the server forgot it too
    guest.page.locator("section[aria-labelledby=inv-title]").get_by_text("None pending.").wait_for()

    # Leaving before the start: the seat is free again, for everyone, live.
    guest.page.get_by_role("link", name="Lobby").click()
    guest.page.get_by_role("button", name=f"Sit East at {alpha}").click()
    guest.page.locator(".table-page[data-mode=player]").wait_for()
    host.page.locator("li[data-seat=EAST]", has_text=guest.username).wait_for()
    guest.page.get_by_role("button", name="Leave table", exact=True).click()
    guest.page.locator("[data-ready=lobby]").wait_for()
    host.page.locator("li[data-seat=EAST]", has_text="empty").wait_for()
    assert host.page.locator(".game").count() == 0  # nothing started
    card = guest.page.locator(".table-card", has_text=alpha)
    card.get_by_role("button", name=f"Sit East at {alpha}").wait_for()
    assert card.get_by_role("button", name="Watch").count() == 1  # no longer seated there

    # The filters: a case-insensitive part of the name, then open seats only, kept live.
    host.page.get_by_role("link", name="Lobby").click()
    host.page.locator("[data-ready=lobby]").wait_for()
    host.page.get_by_role("searchbox", name="Search by name").fill(token.upper())
    wait_lobby_titles(host, [alpha])
    host.page.get_by_label("Open seats only").check()
    pages.create_table(guest, beta, turn_seconds=300)  # beta appears live: it has open seats
    wait_lobby_titles(host, [alpha, beta])
    for seat in ("EAST", "SOUTH", "WEST"):
        pages.add_bot(guest, seat)
    guest.game().wait_for()  # beta is full and playing: it leaves the filtered lobby live
    wait_lobby_titles(host, [alpha])
    host.page.get_by_label("Open seats only").uncheck()
    wait_lobby_titles(host, [alpha, beta])
    host.page.get_by_role("searchbox", name="Search by name").fill(f"{token} BETA")
    wait_lobby_titles(host, [beta])
    assert "Playing" in host.page.locator(".table-card", has_text=beta).inner_text()
    host.page.get_by_role("searchbox", name="Search by name").fill(f"{token} gamma")
    host.page.get_by_text("No tables yet: create one.").wait_for()
    assert lobby_titles(host) == []

    # Removing a friend: gone from both lists, and the other is told.
    host.page.get_by_role("link", name="Friends").click()
    friends = host.page.locator("section[aria-labelledby=friends-title]")
    friends.locator("li", has_text=guest.username).get_by_role("button", name="Remove").click()
    host.page.get_by_text(f"{guest.username} removed.").wait_for()
    friends.get_by_text("No friends yet.").wait_for()
    guest.page.get_by_text(f"{host.username} removed you as a friend.").wait_for()
    guest.page.get_by_role("link", name="Friends").click()
    guest.page.locator("section[aria-labelledby=friends-title]").get_by_text(
        "No friends yet."
    ).wait_for()
    for player in (host, guest):
        player.page.context.close()
