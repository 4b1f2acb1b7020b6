"""Two browsers play as partners against two bots, each seeing the other's moves live;
one of them drops off the network mid-hand and catches up without a reload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.server import LiveServer
from tests.web import pages

PHONE = {"viewport": {"width": 375, "height": 812}, "is_mobile": True, "has_touch": True}


def seat_up(
    browser: Any, server: LiveServer, name: str, seed: int
) -> tuple[pages.Player, pages.Player]:
    """North creates a table; South sees it appear in the live lobby and sits; the host
    adds two bots and the game starts."""
    north = pages.sign_up(browser, server, "north", viewport={"width": 1100, "height": 900})
    south = pages.sign_up(browser, server, "south", **PHONE)
    pages.create_table(north, name, seed=seed)
    # No reload: the table arrives in South's lobby through lobbyUpdates.
    south.page.get_by_role("button", name=f"Sit South at {name}").click()
    south.page.locator(".table-page").wait_for()
    north.page.locator("li[data-seat=SOUTH]", has_text=south.username).wait_for()
    pages.add_bot(north, "EAST")
    pages.add_bot(north, "WEST")
    north.game().wait_for()
    south.game().wait_for()
    return north, south


def partner_sees(viewer: pages.Player, seat: str, card: str, version: int) -> None:
    """`viewer`'s screen has reached `version` and shows `card` played by `seat`: on the
    felt or as the last trick, or (while the felt still holds the trick before a moment)
    in the table's log."""
    viewer.wait_version_at_least(version)
    rank, suit = card.lower().split("-")
    told = f"{seat.capitalize()} played the {rank.capitalize()} of {suit}."
    shown = viewer.page.locator(
        f".trick [data-played-by={seat}] [data-card='{card}'],"
        f" [data-last-trick] [data-card='{card}']"
    ).or_(viewer.page.locator("[data-log] li", has_text=told))
    shown.first.wait_for(state="attached", timeout=5_000)


def test_partners_see_each_others_moves_live(
    browser: Any, web_server: LiveServer, artifacts: Path
) -> None:
    north, south = seat_up(browser, web_server, "Partners table", seed=21)
    players = {"NORTH": north, "SOUTH": south}
    # Hand 1: North deals, so East, South, West, North bid: South bids first for the
    # team, North second enters the team total and sees South's bid and what it leaves.
    pages.wait_turn(south)
    pages.act(south, 3)
    pages.wait_turn(north)
    box = north.page.locator(".bid-box")
    assert "Your partner (South) bid 3. Enter your team's total." in box.inner_text()
    box.locator("button[data-bid='5']").click()
    hint = box.locator("[data-hint]").inner_text()
    assert "Your partner bid 3; your team total 5 means you need 2 tricks." in hint
    pages.act(north, 5)
    south.wait_version_at_least(north.version())
    assert south.page.locator("[data-bid-of=NORTH]").inner_text() == "5"

    # Table chat reaches the partner live.
    north.page.get_by_placeholder("Say something").fill("good luck, partner")
    north.page.get_by_role("button", name="Send", exact=True).click()
    pages.show_panel(south, "Chat")  # South's phone shows one panel at a time
    south.page.locator(".chat-log li", has_text="good luck, partner").wait_for()

    moves = 0
    while moves < 26 and north.game().get_attribute("data-phase") == "PLAYING":
        seat, card = pages.next_human_move(players)
        mover = players[seat]
        other = players["SOUTH" if seat == "NORTH" else "NORTH"]
        moves += 1
        if moves < 26:  # after the 26th the hand is scored and the next one dealt
            partner_sees(other, seat, card, mover.version())
        if moves == 5:
            south.page.screenshot(path=str(artifacts / "table-phone.png"), full_page=True)
            width = south.page.evaluate("document.documentElement.scrollWidth")
            assert width <= 375, f"the phone page is {width} px wide"
    assert moves == 26, "both humans played their 13 cards"
    north.wait_version_at_least(south.version())
    # The hand was scored on both screens alike.
    for player in (north, south):
        pages.show_panel(player, "Hands")
        player.page.locator("table.history tbody tr").nth(1).wait_for()  # bots may finish it
        assert player.page.locator("table.history tbody tr").count() == 2
    for player in (north, south):
        player.page.context.close()


def test_going_offline_mid_hand_and_back_misses_nothing(
    browser: Any, web_server: LiveServer
) -> None:
    north, south = seat_up(browser, web_server, "Offline table", seed=33)
    sent: list[str] = []
    sockets: list[Any] = []

    def on_socket(socket: Any) -> None:
        sockets.append(socket)
        socket.on("framesent", lambda payload: sent.append(str(payload)))

    south.page.on("websocket", on_socket)
    players = {"NORTH": north, "SOUTH": south}
    # Bid, play a few cards, then South's network goes away while North keeps playing.
    for _ in range(6):
        pages.next_human_move(players)
    while pages.next_human_move(players)[0] != "SOUTH":
        pass
    while not pages.my_turn(north):
        if pages.my_turn(south):
            pages.act(south, 3)
        north.page.wait_for_timeout(50)
    south.wait_version_at_least(north.version())  # up to date before the drop
    south.page.context.set_offline(True)
    south.page.locator("[data-link=reconnecting]").wait_for(timeout=15_000)
    before = south.version()
    missed = [pages.act(north, 0)]  # North plays; bots answer; South hears nothing
    assert north.version() > before
    assert south.version() == before, "an offline page got an update"

    south.page.context.set_offline(False)
    south.page.locator("[data-link=online]").wait_for(timeout=15_000)
    south.wait_version_at_least(north.version())
    partner_sees(south, "NORTH", missed[0], north.version())
    # It resubscribed with the version it had, not from scratch (no reload either).
    resubscribed = [
        json.loads(frame) for frame in sent if '"subscribe"' in frame and "gameUpdates" in frame
    ]
    # (Frames held back while offline may land before the old socket is dropped, so the
    # version it resubscribes from can be past `before`: never a fresh SNAPSHOT.)
    since = [f["payload"]["variables"].get("since") for f in resubscribed]
    assert since and all(v is not None and v >= before for v in since), (before, since)
    assert south.page.evaluate("performance.getEntriesByType('navigation').length") == 1
    # The game goes on from the caught-up screen: both play on.
    for _ in range(4):
        pages.next_human_move(players)
    north.wait_version_at_least(south.version())
    south.wait_version_at_least(north.version())
    for player in (north, south):
        player.page.context.close()
