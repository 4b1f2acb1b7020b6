"""What a player does in the web client, in the words of the UI (roles and labels)."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.server import LiveServer

_names = itertools.count(1)
# Every page signed up during the current test (screenshots on failure, then closed).
OPEN: list[Player] = []

Page = Any  # playwright.sync_api.Page (imported lazily: missing Playwright must fail cleanly)


def unique_name(prefix: str) -> str:
    """A username nobody has used on this server yet."""
    return f"{prefix}{int(time.time() * 1000) % 10**7}{next(_names)}"


@dataclass
class Player:
    """One browser page signed in as one user."""

    page: Page
    username: str
    server: LiveServer
    # What the page's console reported about the Content-Security-Policy (must stay empty).
    csp_reports: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def token(self) -> str:
        return str(self.page.evaluate("localStorage.getItem('spades.token')"))

    def game(self) -> Any:
        """The table's root element (data-version, data-phase, data-turn)."""
        return self.page.locator(".game")

    def version(self) -> int:
        return int(self.game().get_attribute("data-version") or "-1")

    def wait_version_at_least(self, version: int, timeout: float = 10_000) -> None:
        self.page.wait_for_function(
            "v => Number(document.querySelector('.game')?.dataset.version ?? -1) >= v",
            arg=version,
            timeout=timeout,
        )


def sign_up(
    browser: Any,
    server: LiveServer,
    prefix: str,
    on_page: Callable[[Page], object] | None = None,
    username: str | None = None,
    **context_args: Any,
) -> Player:
    """A new browser context whose user signs up through the form (`on_page` sees the
    page before it loads, e.g. to record its traffic; `username`: this name rather than
    a new one made from `prefix`)."""
    context = browser.new_context(**context_args)
    page = context.new_page()
    reports: list[str] = []
    page.on(
        "console",
        lambda message: (
            reports.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    if on_page is not None:
        on_page(page)
    username = username or unique_name(prefix)
    page.goto(f"http://127.0.0.1:{server.port}/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign up").click()
    # (On a phone the header folds the player's name into its menu: there, not shown.)
    page.locator(f"[data-me='{username}']").wait_for(state="attached")
    page.locator("[data-ready=lobby]").wait_for()
    player = Player(page, username, server, reports)
    OPEN.append(player)
    return player


def create_table(
    player: Player, name: str, seed: int | None = None, turn_seconds: int | None = None
) -> str:
    """Create a table from the lobby form (`turn_seconds`: its clock, else the form's
    default); the id of the new table (the page opens it)."""
    page = player.page
    page.get_by_role("textbox", name="Name (optional)").fill(name)
    if turn_seconds is not None:
        page.get_by_role("spinbutton", name="Seconds per turn").fill(str(turn_seconds))
    if seed is not None:
        page.locator("summary", has_text="Advanced").click()
        page.get_by_label(re.compile("Deal seed")).fill(str(seed))
    page.get_by_role("button", name="Create table").click()
    page.locator(".table-page").wait_for()
    return str(page.locator(".table-page").get_attribute("data-table-id"))


def add_bot(player: Player, seat: str) -> None:
    """The host fills a seat with a bot."""
    player.page.get_by_role("button", name=f"Add a bot {seat.capitalize()}").click()


def show_panel(player: Player, name: str) -> None:
    """Show the table's side panel `name` ("Score", "Hands", "Log", "Chat"): on a narrow
    screen one shows at a time, chosen by its button; on a wide one all show."""
    button = player.page.locator(".side-tabs button", has_text=name)
    if button.is_visible():
        button.click()


def play_any_card(player: Player) -> str:
    """Click the first playable card of the hand; its data-card."""
    card = player.page.locator(".hand-play button.card-button:not([disabled])").first
    key = str(card.get_attribute("data-card"))
    card.click()
    return key


def bid(player: Player, tricks: int) -> None:
    """Choose a number in the bid box and confirm it."""
    box = player.page.locator(".bid-box")
    box.locator(f"button[data-bid='{tricks}']").click()
    box.locator("button[data-action=place-bid]").click()


MY_TURN_OR_OVER = """() => {
  const g = document.querySelector('.game');
  return !!g && (g.dataset.phase === 'GAME_OVER' || g.dataset.turn === g.dataset.viewer);
}"""


def wait_turn(player: Player, timeout: float = 30_000) -> str:
    """Wait until it is this player's turn (or the game is over); the phase."""
    player.page.wait_for_function(MY_TURN_OR_OVER, timeout=timeout)
    return str(player.game().get_attribute("data-phase"))


def hand_cards(player: Player) -> list[str]:
    """The data-card of every card in the hand, in screen order."""
    return [
        str(c)
        for c in player.page.locator(".hand button.card-button").evaluate_all(
            "els => els.map(e => e.dataset.card)"
        )
    ]


def playable_cards(player: Player) -> list[str]:
    """The cards of the hand that are enabled now."""
    return [
        str(c)
        for c in player.page.locator(".hand button.card-button:not([disabled])").evaluate_all(
            "els => els.map(e => e.dataset.card)"
        )
    ]


def act(player: Player, tricks: int, keyboard: bool = False) -> str:
    """Take this player's turn: reveal a withheld hand and bid `tricks`, or play the first
    legal card (with the keyboard: the focused card and Enter). What was done."""
    page = player.page
    phase = str(player.game().get_attribute("data-phase"))
    version = player.version()
    if phase == "BIDDING":
        reveal = page.locator("[data-action=reveal]")
        if reveal.count():
            reveal.click()
            version += 1
            player.wait_version_at_least(version)
        bid(player, tricks)
        done = f"bid {tricks}"
    elif phase == "PLAYING":
        if keyboard:
            # When the turn comes, focus is on the first playable card: Enter plays it.
            page.wait_for_function(
                "() => document.activeElement?.matches("
                "'.hand-play button.card-button:not([disabled])')"
            )
            done = str(page.evaluate("document.activeElement.dataset.card"))
            page.keyboard.press("Enter")
        else:
            done = play_any_card(player)
    else:
        raise AssertionError(f"unexpected turn in phase {phase}")
    player.wait_version_at_least(version + 1)
    return done


def my_turn(player: Player) -> bool:
    """Whether this player's own page says it is their turn now (not game over)."""
    return bool(
        player.page.evaluate(
            """() => { const g = document.querySelector('.game');
                 return !!g && g.dataset.phase !== 'GAME_OVER'
                   && g.dataset.turn === g.dataset.viewer; }"""
        )
    )


def human_on_turn(players: dict[str, Player], timeout: float = 30_000) -> str:
    """Wait until one of these players' own page says it is their turn (another page may
    lag behind); their seat."""
    deadline = time.monotonic() + timeout / 1000
    while time.monotonic() < deadline:
        for seat, player in players.items():
            if my_turn(player):
                return seat
        time.sleep(0.05)
    raise AssertionError("no seated human got the turn")


def next_human_move(players: dict[str, Player], timeout: float = 30_000) -> tuple[str, str]:
    """Wait until one of these players has the turn, let them act (play a card, or bid
    3); their seat and what they did."""
    seat = human_on_turn(players, timeout)
    return seat, act(players[seat], 3)
