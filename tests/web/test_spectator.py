"""A spectator's page never holds an unplayed card: not in its DOM, not in any payload
it received (HTTP responses and WebSocket frames)."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.support.server import LiveServer
from tests.web import pages

SUITS = ["SPADES", "HEARTS", "CLUBS", "DIAMONDS"]
RANKS = ["TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN", "JACK",
         "QUEEN", "KING", "ACE"]  # fmt: skip
DECK = {f"{rank}-{suit}" for suit in SUITS for rank in RANKS}


def cards_in(value: Any) -> set[str]:
    """Every {suit, rank} object anywhere in a JSON value, as RANK-SUIT."""
    found: set[str] = set()
    if isinstance(value, dict):
        if isinstance(value.get("suit"), str) and isinstance(value.get("rank"), str):
            found.add(f"{value['rank']}-{value['suit']}")
        for item in value.values():
            found |= cards_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= cards_in(item)
    return found


def views_in(value: Any) -> list[dict[str, Any]]:
    """Every GameView-like object (one with legalPlays) in a JSON value."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if "legalPlays" in value:
            found.append(value)
        for item in value.values():
            found += views_in(item)
    elif isinstance(value, list):
        for item in value:
            found += views_in(item)
    return found


class Recorder:
    """Every JSON payload a page receives: HTTP response bodies and WebSocket frames."""

    def __init__(self, page: Any) -> None:
        self.payloads: list[Any] = []
        page.on("websocket", self._socket)
        page.on("response", self._response)

    def _socket(self, socket: Any) -> None:
        socket.on("framereceived", self._text)

    def _response(self, response: Any) -> None:
        if "graphql" in response.url:
            try:
                self._text(response.text())
            except Exception:  # a body Chromium no longer keeps (navigation): none to check
                return

    def _text(self, text: Any) -> None:
        try:
            self.payloads.append(json.loads(text))
        except (ValueError, TypeError):
            self.payloads.append(str(text))


def played_by_now(payloads: list[Any]) -> set[str]:
    """The cards a seated player has seen on the table (its every update)."""
    played: set[str] = set()
    for view in views_in(payloads):
        played |= cards_in(view.get("currentTrick")) | cards_in(view.get("lastTrick"))
    return played


def recorded_up_to(
    player: pages.Player, seen: Recorder, version: int, timeout: float = 10.0
) -> None:
    """Wait until the payloads recorded for `player`'s page hold a view of `version` (the
    page may show a frame before Playwright has handed it to the recorder; waiting through
    Playwright lets its loop deliver it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(view.get("version") == version for view in views_in(list(seen.payloads))):
            return
        player.page.wait_for_timeout(50)
    raise AssertionError(f"no payload of version {version} reached the recorder")


def test_a_spectator_page_holds_no_unplayed_card(browser: Any, web_server: LiveServer) -> None:
    recorders: list[Recorder] = []
    host = pages.sign_up(
        browser, web_server, "host", lambda page: recorders.append(Recorder(page)),
        viewport={"width": 1100, "height": 900},
    )  # fmt: skip
    host_seen = recorders[-1]
    table_id = pages.create_table(host, "Watched table", seed=5)
    for seat in ("EAST", "SOUTH", "WEST"):
        pages.add_bot(host, seat)
    host.game().wait_for()

    watcher = pages.sign_up(
        browser, web_server, "watch", lambda page: recorders.append(Recorder(page)),
        viewport={"width": 1100, "height": 900},
    )  # fmt: skip
    watched = recorders[-1]
    watcher.page.get_by_role("button", name="Watch Watched table").click()
    watcher.page.locator(".table-page[data-mode=spectator] .game").wait_for()
    assert watcher.page.locator(f".table-page[data-table-id='{table_id}']").count() == 1

    while True:
        pages.wait_turn(host)
        pages.act(host, 4)
        if len(played_by_now(host_seen.payloads)) >= 15:
            break
    # The host's turn: the bots have moved, nothing changes until the host does.
    pages.wait_turn(host)
    watcher.wait_version_at_least(host.version())
    recorded_up_to(host, host_seen, host.version())  # every card the host's page shows
    # Mid-trick, so the DOM holds a trick in progress as well.
    played = played_by_now(host_seen.payloads)
    unplayed = DECK - played
    assert len(unplayed) >= 20  # most of the hand is still unplayed

    # The payloads: cards only where played, no hand, no legal plays.
    received = cards_in(watched.payloads)
    assert received, "the spectator saw cards being played"
    assert not received & unplayed, f"unplayed cards reached the spectator: {received & unplayed}"
    views = views_in(watched.payloads)
    assert views, "the spectator received game views"
    assert all(v.get("hand") is None and v["legalPlays"] == [] for v in views)
    raw = json.dumps(watched.payloads)
    assert '"hand": [' not in raw

    # The DOM: no hand, and no unplayed card named in any attribute or text.
    page = watcher.page
    assert page.locator(".hand").count() == 0
    html = page.content()
    named = set(page.locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)"))
    assert named and not named & unplayed
    labels = (
        " ".join(
            page.locator("[aria-label]").evaluate_all(
                "els => els.map(e => e.getAttribute('aria-label'))"
            )
        ).lower()
        + page.inner_text("body").lower()
    )
    for card in unplayed:
        rank, suit = card.split("-")
        assert card not in html
        assert f"{rank.lower()} of {suit.lower()}" not in labels, card
    for player in (host, watcher):
        player.page.context.close()


FOCUSED_CARD = "() => document.activeElement?.dataset?.card ?? null"


def press(player: pages.Player, key: str, expect: str) -> None:
    """Press a key in the hand; focus must land on `expect`."""
    player.page.keyboard.press(key)
    player.page.wait_for_function(f"want => ({FOCUSED_CARD})() === want", arg=expect)


def chat_texts(player: pages.Player) -> list[str]:
    """The messages the chat shows now (its selected channel)."""
    return [str(t) for t in player.page.locator(".chat-log li").all_inner_texts()]


def live_chat(player: pages.Player, seen: Recorder, text: str, timeout: float = 10.0) -> None:
    """Wait until a chatMessages frame with this text reached the player's recorded page
    (waiting through Playwright, whose loop delivers the frames)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for payload in list(seen.payloads):
            if isinstance(payload, dict) and payload.get("type") == "next":
                message = ((payload.get("payload") or {}).get("data") or {}).get("chatMessages")
                if message and message.get("text") == text:
                    return
        player.page.wait_for_timeout(50)
    raise AssertionError(f"no live chat message {text!r} reached the page")


def test_arrow_keys_walk_the_playable_cards_and_spectators_chat_among_themselves(
    browser: Any, web_server: LiveServer
) -> None:
    recorders: list[Recorder] = []
    host = pages.sign_up(
        browser, web_server, "keys", lambda page: recorders.append(Recorder(page)),
        viewport={"width": 1100, "height": 900},
    )  # fmt: skip
    host_seen = recorders[-1]
    pages.create_table(host, "Keys and whispers", seed=7)
    for seat in ("EAST", "SOUTH", "WEST"):
        pages.add_bot(host, seat)
    host.game().wait_for()

    # Arrow keys move focus between the playable cards only (disabled ones are skipped,
    # the ends hold), Home and End jump, Enter plays the focused card.
    while True:
        phase = pages.wait_turn(host)
        assert phase != "GAME_OVER"
        if phase == "PLAYING" and len(pages.playable_cards(host)) >= 3:
            break
        pages.act(host, 3)
    playable = pages.playable_cards(host)
    hand = pages.hand_cards(host)
    # Seed 7: the host follows clubs, with unplayable cards on either side to skip.
    assert hand.index(playable[0]) > 0 and hand.index(playable[-1]) < len(hand) - 1
    host.page.wait_for_function(f"want => ({FOCUSED_CARD})() === want", arg=playable[0])
    press(host, "ArrowLeft", playable[0])
    press(host, "ArrowRight", playable[1])
    press(host, "ArrowRight", playable[2])
    press(host, "ArrowLeft", playable[1])
    press(host, "End", playable[-1])
    press(host, "ArrowRight", playable[-1])
    press(host, "Home", playable[0])
    press(host, "ArrowRight", playable[1])
    version = host.version()
    host.page.keyboard.press("Enter")
    host.wait_version_at_least(version + 1)
    host.page.wait_for_function(
        "n => document.querySelectorAll('.hand button.card-button').length === n",
        arg=len(hand) - 1,
    )
    assert playable[1] not in pages.hand_cards(host)
    assert set(pages.hand_cards(host)) == set(hand) - {playable[1]}

    # The Spectators channel: one spectator writes, another reads; no seated player does.
    watchers = [pages.sign_up(browser, web_server, "rail") for _ in range(2)]
    for watcher in watchers:
        watcher.page.get_by_role("button", name="Watch Keys and whispers").click()
        watcher.page.locator(".table-page[data-mode=spectator] .chat").wait_for()
    writer, reader = watchers
    channels = writer.page.get_by_role("group", name="Chat channel")
    assert channels.get_by_role("button").all_inner_texts() == ["Table", "Spectators"]
    assert channels.get_by_role("button", name="Spectators").get_attribute("aria-pressed") == "true"
    writer.page.get_by_role("textbox", name="Message").fill("whisper from the rail")
    writer.page.get_by_role("button", name="Send").click()
    reader.page.locator(
        ".chat-log[data-chat=SPECTATORS] li", has_text="whisper from the rail"
    ).wait_for()
    reader.page.get_by_role("group", name="Chat channel").get_by_role(
        "button", name="Table"
    ).click()
    reader.page.locator(".chat-log[data-chat=PLAYERS]").wait_for()
    assert "whisper from the rail" not in " ".join(chat_texts(reader))

    # The seated player has the Table channel only. A Table message sent after the whisper
    # reaches the host's page through its subscription (in order) with the whisper absent.
    assert host.page.locator(".chat [aria-label='Chat channel']").count() == 0
    host.page.get_by_role("textbox", name="Message").fill("the table speaks")
    host.page.get_by_role("button", name="Send").click()
    reader.page.locator(".chat-log[data-chat=PLAYERS] li", has_text="the table speaks").wait_for()
    live_chat(host, host_seen, "the table speaks")
    # The frame reached the page; its rendering may still be on the way (strict: a
    # duplicate line fails the wait).
    host.page.locator(".chat-log[data-chat=PLAYERS] li", has_text="the table speaks").wait_for()
    assert not [p for p in host_seen.payloads if "whisper from the rail" in str(p)]
    assert (
        host.page.locator(".chat-log[data-chat=PLAYERS]").inner_text().count("the table speaks")
        == 1
    )
    assert "whisper from the rail" not in host.page.locator(".chat").inner_text()
    for player in (host, *watchers):
        player.page.context.close()
