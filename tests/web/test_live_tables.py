"""Live tables in the browser: the turn clock's countdown and what happens when it runs
out, a table without a clock, a bot holding a seat until its player takes it back (after
timeouts, or a connection lost for longer than the reconnect window), presence, a closed
table, options changed before the start, and the list of blocked players.

The main server of this module runs turn clocks at 0.6 of real time: a 5-second clock
(the shortest a public table may have) runs out after 3 s, a 20-second one after 12 s.
Tables whose clock is not under test take 300 s turns (3 minutes here), which no test
waits for. Its bots take 150 ms a move, so that four bots cannot finish a game while a
test reloads a page. A second server, for the reconnect window, replaces a player whose
connection has been lost for 3 s (after 1 s of grace).
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.server import LiveServer
from tests.web import pages

CLOCK_SCALE = 0.6
SHORT = 5  # seconds per turn of the clock under test (3 s here)
MEDIUM = 20  # long enough to be announced at 10 and 5 seconds left (12 s here)
PHONE = {"viewport": {"width": 375, "height": 812}, "is_mobile": True, "has_touch": True}
LONG = 300  # seconds per turn where the clock is not under test
RECONNECT = 3  # seconds a lost connection has (after the grace) before a bot takes the seat


@pytest.fixture(scope="module")
def clock_server(tmp_path_factory: pytest.TempPathFactory, web_dist: Path) -> Iterator[LiveServer]:
    """A server with the client, bots that take 150 ms and clocks at 0.6 of real time."""
    live = LiveServer(
        tmp_path_factory.mktemp("live-web") / "spades.db",
        env={
            "SPADES_BOT_DELAY_MS": "150",
            "SPADES_WEB_DIST": str(web_dist),
            "SPADES_TURN_CLOCK_SCALE": str(CLOCK_SCALE),
        },
    )
    live.start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def reconnect_server(
    tmp_path_factory: pytest.TempPathFactory, web_dist: Path
) -> Iterator[LiveServer]:
    """A server that replaces a player whose connection is lost for RECONNECT seconds."""
    live = LiveServer(
        tmp_path_factory.mktemp("reconnect-web") / "spades.db",
        env={
            "SPADES_BOT_DELAY_MS": "150",
            "SPADES_WEB_DIST": str(web_dist),
            "SPADES_RECONNECT_SECONDS": str(RECONNECT),
            "SPADES_PRESENCE_GRACE_SECONDS": "1",
        },
    )
    live.start()
    yield live
    live.stop()


def against_bots(player: pages.Player, name: str, turn_seconds: int) -> str:
    """`player` creates a table with this clock and fills it with three bots: the game
    starts and North (the player) deals. The table's id."""
    table_id = pages.create_table(player, name, turn_seconds=turn_seconds)
    for seat in ("EAST", "SOUTH", "WEST"):
        pages.add_bot(player, seat)
    player.game().wait_for()
    return table_id


def open_table(player: pages.Player, table_id: str) -> None:
    """Go to a table's page by its address (a spectator starts watching)."""
    player.page.goto(f"{player.base}/table/{table_id}")
    player.page.locator(".table-page").wait_for()


def logged(player: pages.Player, event: str, timeout: float = 15_000) -> Any:
    """The newest line of the table's log for `event`, once it is there."""
    pages.show_panel(player, "Log")
    line = player.page.locator(f"[data-log] li[data-event={event}]").first
    line.wait_for(timeout=timeout)
    return line


def seat_box(player: pages.Player, seat: str) -> Any:
    return player.page.locator(f".board .seat[data-seat={seat}]")


def test_the_countdown_runs_out_and_the_server_plays_for_a_silent_player(
    browser: Any, clock_server: LiveServer
) -> None:
    north = pages.sign_up(browser, clock_server, "clocked")
    against_bots(north, "Clock table", MEDIUM)
    # East, South and West bid at once; North's bid turn shows its countdown.
    pages.wait_turn(north)
    clock = seat_box(north, "NORTH").get_by_role("timer")
    clock.wait_for()
    # Shown as "0:11", read out as "Time left: 0:11".
    assert re.fullmatch(r"Time left: 0:[01][0-9]", clock.text_content() or "")
    assert 0 < int(clock.get_attribute("data-clock") or "0") <= MEDIUM * CLOCK_SCALE
    # Screen readers hear it once at 10 seconds (not every second), before any urgency.
    expect_spoken(north, "Your turn: 10 seconds left.")
    assert seat_box(north, "NORTH").locator("[data-urgent]").count() == 0
    pages.act(north, 3)

    # The bots lead; North stays silent on the first trick. The last 5 seconds are urgent
    # and announced; then the server plays for North.
    pages.wait_turn(north)
    assert north.game().get_attribute("data-phase") == "PLAYING"
    seat_box(north, "NORTH").locator("[data-urgent]").wait_for()
    expect_spoken(north, "Your turn: 5 seconds left.")
    timed_out = logged(north, "TURN_TIMED_OUT")
    assert timed_out.inner_text() == "Time ran out for North: the server moves for them."
    played = north.page.locator("[data-log] li[data-event=CARD_PLAYED]", has_text="North played")
    played.first.wait_for()
    assert len(pages.hand_cards(north)) == 12
    # Timed-out lines come before what was played for the seat (newest first).
    lines = north.page.locator("[data-log] li").all_inner_texts()
    assert lines.index(played.first.inner_text()) < lines.index(timed_out.inner_text())


def expect_spoken(player: pages.Player, words: str) -> None:
    """Wait until the live region says `words`."""
    player.page.wait_for_function(
        "w => document.querySelector('[aria-live=polite][aria-atomic=true]')?.textContent === w",
        arg=words,
        timeout=10_000,
    )


CLOCKS = "[role=timer], [data-clock], [data-urgent]"


def frames_of(page: Any, into: list[str]) -> None:
    """Keep every WebSocket frame `page` receives, from its first socket on."""
    page.on("websocket", lambda socket: socket.on("framereceived", lambda f: into.append(str(f))))


def deadlines(frames: list[str], table_id: str) -> list[Any]:
    """The turnDeadline of every game update of this table in these frames."""
    found = []
    for frame in frames:
        message = json.loads(frame)
        update = ((message.get("payload") or {}).get("data") or {}).get("gameUpdates")
        if update and update["view"]["tableId"] == table_id:
            found.append(update["view"]["turnDeadline"])
    return found


def no_clock_anywhere(*players: pages.Player) -> None:
    """No countdown, urgent mark or "Time left" on any of these pages."""
    for player in players:
        assert player.page.locator(CLOCKS).count() == 0, player.username
        assert "Time left" not in player.page.locator("body").inner_text()


def test_a_table_without_a_clock_shows_none_while_a_timed_one_does(
    browser: Any, clock_server: LiveServer
) -> None:
    north_frames: list[str] = []
    south_frames: list[str] = []
    north = pages.sign_up(
        browser, clock_server, "unhurried", on_page=lambda p: frames_of(p, north_frames)
    )
    south = pages.sign_up(
        browser, clock_server, "leisurely", on_page=lambda p: frames_of(p, south_frames)
    )
    # Untimed (0) is allowed on a private table; the guest sits through a join link.
    north.page.get_by_role("combobox", name="Who can see it").select_option("PRIVATE")
    untimed = pages.create_table(north, "No clock", turn_seconds=0)
    assert "no turn clock" in north.page.locator("[data-options]").inner_text()
    north.page.get_by_role("button", name="Create a join link").click()
    south.page.goto(north.page.locator("input[data-link-kind=join]").input_value())
    south.page.locator("li[data-seat=SOUTH]").get_by_role("button", name="Sit here").click()
    south.page.locator(".table-page[data-mode=player]").wait_for()
    assert "no turn clock" in south.page.locator("[data-options]").inner_text()
    pages.add_bot(north, "EAST")
    pages.add_bot(north, "WEST")

    # Each human's turn (South bids after East, North after West, then a card each):
    # nothing counts down, on the seat on turn or anywhere else, on either page.
    players = {"NORTH": north, "SOUTH": south}
    for _ in range(4):
        seat = pages.human_on_turn(players)
        for viewer in (north, south):
            seat_box(viewer, seat).locator(".turn-flag").wait_for()  # "to act", and no clock
        no_clock_anywhere(north, south)
        pages.act(players[seat], 3)
    no_clock_anywhere(north, south)
    untimed_deadlines = deadlines(north_frames, untimed) + deadlines(south_frames, untimed)
    assert untimed_deadlines and not any(untimed_deadlines), "an untimed table sent a deadline"

    # The same two at a timed table: the seat on turn counts down, on both pages.
    north.page.get_by_role("link", name="Lobby").click()
    north.page.get_by_role("combobox", name="Who can see it").select_option("PUBLIC")
    timed = pages.create_table(north, "With a clock", turn_seconds=LONG)
    assert "5 min per turn" in north.page.locator("[data-options]").inner_text()
    south.page.get_by_role("link", name="Lobby").click()
    south.page.get_by_role("button", name="Sit South at With a clock").click()
    south.page.locator(".table-page[data-mode=player]").wait_for()
    pages.add_bot(north, "EAST")
    pages.add_bot(north, "WEST")
    pages.wait_turn(south)  # East (a bot) bids first, then South
    for viewer in (north, south):
        clock = seat_box(viewer, "SOUTH").get_by_role("timer")
        clock.wait_for()
        assert re.fullmatch(r"Time left: [0-3]:[0-5][0-9]", clock.text_content() or "")
    assert any(deadlines(north_frames, timed)) and any(deadlines(south_frames, timed))


def test_after_two_timeouts_a_bot_holds_the_seat_until_its_player_takes_it_back(
    browser: Any, clock_server: LiveServer, artifacts: Path
) -> None:
    north = pages.sign_up(browser, clock_server, "sleepy")
    table_id = against_bots(north, "Sleepy table", SHORT)
    # Silent twice in a row (the bid, then the first card): a bot takes the seat.
    replaced = logged(north, "PLAYER_REPLACED", timeout=20_000)
    assert "took the North seat while" in replaced.inner_text()
    assert north.username in replaced.inner_text()
    panel = north.page.locator("[data-away=NORTH]")
    panel.wait_for()
    assert north.page.locator(".table-page").get_attribute("data-mode") == "away"
    assert north.page.locator(".hand").count() == 0
    assert north.username in seat_box(north, "NORTH").inner_text()  # "for <name> (away)"

    # From a reload too: the page finds the seat held for this player.
    open_table(north, table_id)
    north.page.locator("[data-away=NORTH]").wait_for()
    north.page.screenshot(path=str(artifacts / "table-away.png"), full_page=True)
    north.page.get_by_role("button", name="Take my seat back").click()
    north.page.locator(".table-page[data-mode=player]").wait_for()
    north.page.locator(".game[data-viewer=NORTH] .hand").wait_for()
    assert north.page.locator("[data-away]").count() == 0
    logged(north, "SEAT_RECLAIMED")

    # Seated again, North plays on: their cards are their own. (The bots went on playing
    # meanwhile, so the hand may be over, or nearly: bid through a new deal, and judge a
    # card played from a hand it does not empty, which no new deal can replace.)
    while True:
        phase = pages.wait_turn(north)
        assert phase != "GAME_OVER"
        before = pages.hand_cards(north)
        done = pages.act(north, 3)
        if phase == "PLAYING" and len(before) >= 2:
            break
    after = pages.hand_cards(north)
    assert done in before and done not in after
    assert len(after) == len(before) - 1


class Line:
    """A TCP relay between one browser and the server that a test can cut: a network
    going away, as both ends see it. Cut, every connection through it ends at once (the
    server sees its WebSocket close, the page sees its own drop) and new ones are refused
    until it is back. (Chromium's offline mode would not do: it holds an open socket's
    frames instead of closing it, and the server notices only through its own pings,
    20 to 40 s later.) The page is loaded through the relay: its origin is the relay's."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.up = True
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:  # the listener is closed
                return
            if not self.up:
                near.close()
                continue
            far = socket.create_connection(("127.0.0.1", self.target_port))
            with self.lock:
                self.open += [near, far]
            for source, sink in ((near, far), (far, near)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """The network goes away: every connection ends, and nothing new connects."""
        self.up = False
        with self.lock:
            ends, self.open = self.open, []
        for end in ends:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)  # wakes the pumps blocked on it
            end.close()

    def restore(self) -> None:
        """The network is back: the page's next retry connects."""
        self.up = True

    def close(self) -> None:
        self.cut()
        self.listener.close()


@dataclass
class Relayed:
    """The reconnect server as reached through a Line (`server.port` is the line's)."""

    server: LiveServer
    line: Line


@pytest.fixture
def relayed(reconnect_server: LiveServer) -> Iterator[Relayed]:
    """The reconnect server behind a Line of its own."""
    relay = Line(reconnect_server.port)
    through = copy.copy(reconnect_server)  # the same server process, another address
    through.port = relay.port
    yield Relayed(through, relay)
    relay.close()


def test_a_player_offline_past_the_reconnect_window_is_replaced_then_takes_the_seat_back(
    browser: Any, reconnect_server: LiveServer, relayed: Relayed, artifacts: Path
) -> None:
    north = pages.sign_up(browser, reconnect_server, "anchored")
    east = pages.sign_up(browser, reconnect_server, "steady")
    south = pages.sign_up(browser, relayed.server, "tunnel", **PHONE)  # through the line
    pages.create_table(north, "Tunnel table", turn_seconds=LONG)
    for guest, seat in ((east, "East"), (south, "South")):
        guest.page.get_by_role("button", name=f"Sit {seat} at Tunnel table").click()
        guest.page.locator(".table-page[data-mode=player]").wait_for()
    pages.add_bot(north, "WEST")
    for player in (north, east, south):
        player.game().wait_for()
    seat_box(north, "SOUTH").locator("[data-presence=connected]").wait_for()

    # South's network goes away (the page stays open) for longer than the window: the
    # others see South disconnected, then a bot in the seat, named as holding it for South.
    relayed.line.cut()
    south.page.locator("[data-link=reconnecting]").wait_for(timeout=15_000)
    seat_box(north, "SOUTH").locator("[data-presence=disconnected]").wait_for(timeout=10_000)
    for other in (north, east):
        box = seat_box(other, "SOUTH")
        box.locator(f"[data-away-player='{south.username}']").wait_for(timeout=20_000)
        assert box.locator(".seat-name").inner_text().startswith("South Basic bot")
        assert f"for {south.username}, who is away" in (box.get_attribute("aria-label") or "")
        assert box.locator("[data-presence]").count() == 0  # a bot is always there
        assert logged(other, "PLAYER_REPLACED").inner_text() == (
            f"Bot (Basic) took the South seat while {south.username} is away."
        )
    other_versions = north.version()

    # Back online, without a reload, South's page learns that a bot holds the seat.
    relayed.line.restore()
    south.page.locator("[data-link=online]").wait_for(timeout=15_000)
    south.page.locator("[data-away=SOUTH]").wait_for(timeout=15_000)
    south.wait_version_at_least(other_versions)
    assert south.page.locator(".table-page").get_attribute("data-mode") == "away"
    assert south.page.locator(".hand").count() == 0
    assert logged(south, "PLAYER_REPLACED")
    assert south.page.evaluate("performance.getEntriesByType('navigation').length") == 1
    south.page.screenshot(path=str(artifacts / "table-away-offline-phone.png"), full_page=True)

    south.page.get_by_role("button", name="Take my seat back").click()
    south.page.locator(".table-page[data-mode=player]").wait_for()
    south.page.locator(".game[data-viewer=SOUTH] .hand").wait_for()
    assert south.page.locator("[data-away]").count() == 0
    for other in (north, east):
        box = seat_box(other, "SOUTH")
        box.locator("[data-presence=connected]").wait_for()
        assert box.locator("[data-away-player]").count() == 0
        assert box.locator(".seat-name").inner_text().startswith(f"South {south.username}")
        assert logged(other, "SEAT_RECLAIMED").inner_text() == (
            f"{south.username} took the South seat back."
        )

    # The humans play on, South's moves its own: each bids, then a card each.
    players = {"NORTH": north, "EAST": east, "SOUTH": south}
    moved: set[str] = set()
    while "SOUTH" not in moved or len(moved) < 3:
        seat, _ = pages.next_human_move(players)
        moved.add(seat)
    assert south.page.locator("[data-bid-of=SOUTH]").inner_text() == "3"


def test_a_partner_closing_the_page_shows_disconnected_then_connected_on_return(
    browser: Any, clock_server: LiveServer, artifacts: Path
) -> None:
    north = pages.sign_up(browser, clock_server, "stayer", **PHONE)
    south = pages.sign_up(browser, clock_server, "leaver")
    table_id = pages.create_table(north, "Presence table", turn_seconds=LONG)
    open_table(south, table_id)
    south.page.locator("li[data-seat=SOUTH]").get_by_role("button", name="Sit here").click()
    # Before the game too, each human seat says whether its player is here.
    waiting = north.page.locator("li[data-seat=SOUTH] [data-presence=connected]")
    waiting.wait_for()
    assert waiting.inner_text().strip() == "● connected"
    pages.add_bot(north, "EAST")
    pages.add_bot(north, "WEST")
    north.game().wait_for()
    presence = seat_box(north, "SOUTH").locator("[data-presence]")
    seat_box(north, "SOUTH").locator("[data-presence=connected]").wait_for()

    context = south.page.context
    south.page.close()
    seat_box(north, "SOUTH").locator("[data-presence=disconnected]").wait_for(timeout=10_000)
    assert "disconnected" in presence.inner_text()
    assert "disconnected" in (seat_box(north, "SOUTH").get_attribute("aria-label") or "")
    north.page.screenshot(path=str(artifacts / "table-presence-phone.png"), full_page=True)
    width = north.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the phone page scrolls sideways ({width} px)"

    south.page = context.new_page()
    open_table(south, table_id)
    south.game().wait_for()
    seat_box(north, "SOUTH").locator("[data-presence=connected]").wait_for(timeout=10_000)
    assert "disconnected" not in (seat_box(north, "SOUTH").get_attribute("aria-label") or "")
    # Bots are always there: their seats say nothing about it.
    assert seat_box(north, "EAST").locator("[data-presence]").count() == 0


def test_a_closed_table_is_shown_closed_with_the_way_back_and_no_moves(
    browser: Any, clock_server: LiveServer
) -> None:
    host = pages.sign_up(browser, clock_server, "quitter")
    watcher = pages.sign_up(browser, clock_server, "watcher")
    table_id = against_bots(host, "Short-lived table", LONG)
    open_table(watcher, table_id)
    watcher.page.locator(".table-page[data-mode=spectator] .game").wait_for()

    # The only human leaves mid-game: nobody could come back, so the table closes.
    host.page.once("dialog", lambda dialog: dialog.accept())
    host.page.get_by_role("button", name="Leave table (a bot takes your seat)").click()
    host.page.locator("[data-ready=lobby]").wait_for()

    closed = watcher.page.locator("[data-closed]")
    closed.wait_for()
    assert "This table is closed" in closed.inner_text()
    assert watcher.page.locator(".table-page").get_attribute("data-status") == "CLOSED"
    assert logged(watcher, "TABLE_CLOSED").inner_text() == "The table is closed: no more moves."
    assert watcher.page.locator("[data-status]").filter(has_text="The table is closed.").count()
    assert watcher.page.locator(".bid-box, .hand-play, [data-action=reveal]").count() == 0
    assert watcher.page.locator(".chat").count() == 0  # nor chat

    # A reload shows it closed as well; the button leads back to the lobby.
    open_table(watcher, table_id)
    watcher.page.locator("[data-closed]").wait_for()
    watcher.page.get_by_role("button", name="Back to the lobby").click()
    watcher.page.locator("[data-ready=lobby]").wait_for()
    assert watcher.page.locator(f"[data-table-id='{table_id}']").count() == 0


def test_option_changes_before_the_start_reach_everyone_at_the_table_live(
    browser: Any, clock_server: LiveServer
) -> None:
    host = pages.sign_up(browser, clock_server, "tweaker")
    guest = pages.sign_up(browser, clock_server, "seated")
    watcher = pages.sign_up(browser, clock_server, "onlooker")
    table_id = pages.create_table(host, "Before", turn_seconds=45)
    open_table(guest, table_id)
    guest.page.locator("li[data-seat=EAST]").get_by_role("button", name="Sit here").click()
    guest.page.locator(".table-page[data-mode=player]").wait_for()
    open_table(watcher, table_id)
    watcher.page.locator(".table-page[data-mode=spectator]").wait_for()
    for viewer in (guest, watcher):
        options = viewer.page.locator("[data-options]")
        assert "45 s per turn" in options.inner_text()
        assert "absent players: Basic bot" in options.inner_text()

    tools = host.page.locator(".host-tools")
    tools.get_by_role("textbox", name="Name", exact=True).fill("After")
    tools.get_by_role("spinbutton", name="Seconds per turn").fill("120")
    stand_in = "Level of a bot that takes an absent player's seat"
    tools.get_by_role("combobox", name=stand_in).select_option("EXPERT")
    tools.get_by_role("button", name="Save options").click()
    host.page.get_by_text("Table updated.").wait_for()

    # No reload: the seated guest and the spectator see the new options (TABLE_UPDATED).
    for viewer in (guest, watcher):
        viewer.page.get_by_role("heading", name="After", level=1).wait_for()
        options = viewer.page.locator("[data-options]")
        assert "2 min per turn" in options.inner_text()
        assert "absent players: Expert bot" in options.inner_text()
        told = logged(viewer, "TABLE_UPDATED").inner_text()
        assert told == "The host changed the table's options."


def test_blocked_players_are_listed_by_the_server_and_unblocked_from_the_list(
    browser: Any, clock_server: LiveServer
) -> None:
    blocker = pages.sign_up(browser, clock_server, "blocker")
    pest = pages.sign_up(browser, clock_server, "pest")
    pest.page.get_by_role("link", name="Friends").click()
    pest.page.get_by_label("Add a friend by username").fill(blocker.username)
    pest.page.get_by_role("button", name="Send request").click()
    pest.page.get_by_text(f"Friend request sent to {blocker.username}.").wait_for()

    blocker.page.get_by_role("link", name="Friends").click()
    blocker.page.get_by_text("You have not blocked anyone.").wait_for()
    blocker.page.locator(".people li", has_text=pest.username).get_by_role(
        "button", name="Block"
    ).click()
    blocker.page.get_by_text(f"{pest.username} is blocked.").wait_for()
    listed = blocker.page.locator(f"[data-blocked] li[data-player='{pest.username}']")
    listed.wait_for()

    # The list is the server's: a fresh browser of the same player shows it too.
    again = browser.new_context()
    page = again.new_page()
    page.goto(f"{blocker.base}/")
    remembered = blocker.page.evaluate("localStorage.getItem('spades.player')")
    page.evaluate(
        "([t, p]) => { localStorage.setItem('spades.token', t);"
        " localStorage.setItem('spades.player', p); }",
        [blocker.token(), remembered],
    )
    page.goto(f"{blocker.base}/friends")
    page.locator(f"[data-blocked] li[data-player='{pest.username}']").wait_for()
    again.close()

    # Blocked, the pest's requests are refused; unblocked, they go through again.
    pest.page.get_by_label("Add a friend by username").fill(blocker.username)
    pest.page.get_by_role("button", name="Send request").click()
    assert "not allowed" in pest.page.get_by_role("alert").inner_text()
    blocker.page.get_by_role("button", name=f"Unblock {pest.username}").click()
    blocker.page.get_by_text(f"{pest.username} is unblocked.").wait_for()
    blocker.page.get_by_text("You have not blocked anyone.").wait_for()
    assert listed.count() == 0
    pest.page.get_by_label("Add a friend by username").fill(blocker.username)
    pest.page.get_by_role("button", name="Send request").click()
    pest.page.get_by_text(f"Friend request sent to {blocker.username}.").wait_for()
