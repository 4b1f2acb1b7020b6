"""Moderation in the web client: a player reports a chat message and a profile; a
moderator works through the queue (the message in its context; hide, mute, dismiss,
ban); the muted player sees why the chat box is closed and until when, and the banned
player is signed out with a clear message."""

from __future__ import annotations

import re
from typing import Any

from tests.support.moderation import grant
from tests.support.server import LiveServer
from tests.web import pages


def player_id(player: pages.Player) -> str:
    """The signed-in player's id, as the page keeps it."""
    return str(player.page.evaluate("JSON.parse(localStorage.getItem('spades.player')).id"))


def report_profile(reporter: pages.Player, reported: pages.Player, reason: str, note: str) -> None:
    """Open the reported player's profile and report them."""
    page = reporter.page
    page.goto(f"{reporter.base}/player/{reported.username}")
    page.locator("[data-ready=profile]").wait_for()
    page.get_by_role("button", name=f"Report {reported.username}").click()
    form = page.get_by_role("form", name=f"Report {reported.username}")
    form.get_by_label("Reason").select_option(label=reason)
    form.get_by_label("Note (optional)").fill(note)
    form.get_by_role("button", name="Send report").click()
    page.get_by_role("status").filter(has_text="Reported").wait_for()


def test_a_report_travels_from_the_chat_to_the_moderators_queue_and_back_as_a_sanction(
    browser: Any, web_server: LiveServer
) -> None:
    host = pages.sign_up(browser, web_server, "host")
    rude = pages.sign_up(browser, web_server, "troll")
    moderator = pages.sign_up(browser, web_server, "mod")
    grant(web_server, player_id(moderator), "MODERATOR")

    table_id = pages.create_table(host, "Civil table")
    rude.page.get_by_role("button", name="Sit South at Civil table").click()
    rude.page.locator(".table-page").wait_for()
    host.page.locator("li[data-seat=SOUTH]", has_text=rude.username).wait_for()
    talk = [(host, "good luck"), (rude, "you play like a potato"), (host, "mind your manners")]
    for author, text in talk:
        author.page.get_by_placeholder("Say something").fill(text)
        author.page.get_by_role("button", name="Send", exact=True).click()
        host.page.locator(".chat-log li", has_text=text).wait_for()

    # The host reports the message from the chat, and the player from their profile.
    host.page.get_by_role("button", name=f"Report message from {rude.username}").click()
    form = host.page.get_by_role("form", name=f"Report message from {rude.username}")
    assert form.get_by_label("Reason").input_value() == "ABUSIVE_CHAT"
    form.get_by_label("Note (optional)").fill("third time tonight")
    form.get_by_role("button", name="Send report").click()
    host.page.locator(".chat-log").get_by_role("status").filter(has_text="Reported").wait_for()
    assert host.page.get_by_role("button", name=f"Report message from {host.username}").count() == 0
    report_profile(host, rude, "Stalling", "waits out every clock")

    # The moderator's page: the reported message among its neighbours.
    assert host.page.get_by_role("link", name="Moderation").count() == 0
    moderator.page.reload()
    moderator.page.get_by_role("link", name="Moderation").click()
    moderator.page.locator("[data-ready=moderation]").wait_for()
    cards = moderator.page.locator("li[data-report]")
    cards.nth(1).wait_for()
    assert cards.count() == 2
    first = cards.first
    assert "Abusive chat" in first.inner_text() and "third time tonight" in first.inner_text()
    context = first.get_by_role("list", name="The reported message in context")
    assert context.locator("li").all_inner_texts() == [
        f"{host.username} good luck",
        f"{rude.username} you play like a potato",
        f"{host.username} mind your manners",
    ]
    assert context.locator("li[data-reported] mark").inner_text() == "you play like a potato"
    first.get_by_role("button", name="Hide message").click()
    first.get_by_role("button", name="Message hidden").wait_for()
    first.get_by_label("Reason given to the player").fill("insults in chat")
    first.get_by_label("Mute for").select_option(label="1 hour")
    first.get_by_role("button", name=f"Mute {rude.username}").click()
    cards.filter(has_text="third time tonight").wait_for(state="detached")
    cards.filter(has_text="waits out every clock").get_by_role("button", name="Dismiss").click()
    moderator.page.get_by_text("No open reports.").wait_for()

    # The muted player: a refused message tells why, until when, and closes the box.
    box = rude.page.get_by_placeholder("Say something")
    box.fill("can I still talk?")
    rude.page.get_by_role("button", name="Send", exact=True).click()
    notice = rude.page.locator(".muted-notice")
    notice.wait_for()
    assert "insults in chat" in notice.inner_text() and "muted you until" in notice.inner_text()
    assert notice.get_attribute("data-muted-until")
    assert box.is_disabled()
    # The hidden message has left the chat for everyone.
    host.page.goto(f"{host.base}/table/{table_id}")
    host.page.locator(".chat-log li", has_text="good luck").wait_for()
    assert "potato" not in host.page.locator(".chat-log").inner_text()

    # A ban from the queue signs the player out at once, with the reason on screen.
    report_profile(host, rude, "Other", "still at it")
    moderator.page.reload()
    card = moderator.page.locator("li[data-report]", has_text="still at it")
    card.get_by_label("Reason given to the player").fill("ban evasion")
    card.get_by_role("button", name=f"Ban {rude.username}").click()
    card.wait_for(state="detached")
    rude.page.get_by_role("alert").filter(has_text="banned this account").wait_for()
    assert rude.page.locator("[data-link]").get_attribute("data-link") == "idle"  # no retry
    rude.page.get_by_role("button", name="Sign in").first.click()
    rude.page.get_by_label("Username").fill(rude.username)
    rude.page.get_by_label("Password").fill("correct horse battery")
    rude.page.locator("form").get_by_role("button", name="Sign in").click()
    refusal = rude.page.get_by_role("alert").filter(has_text=re.compile("This account is banned"))
    refusal.wait_for()
    assert "ban evasion" in refusal.inner_text()
