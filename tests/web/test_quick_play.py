"""Quick play in Chromium: "Play now" on the lobby, the waiting panel, Cancel, and the page
going to the table by itself once matched (four players together; one alone with bots
after the wait, shortened here by SPADES_QUICKPLAY_BOT_SECONDS)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.server import LiveServer
from tests.web import pages

BOT_SECONDS = 4


@pytest.fixture(scope="module")
def quick_server(tmp_path_factory: pytest.TempPathFactory, web_dist: Path) -> Iterator[LiveServer]:
    """A server with the client, bots after 4 s and quick waves."""
    live = LiveServer(
        tmp_path_factory.mktemp("web_quickplay") / "spades.db",
        env={
            "SPADES_BOT_DELAY_MS": "0",
            "SPADES_WEB_DIST": str(web_dist),
            "SPADES_QUICKPLAY_BOT_SECONDS": str(BOT_SECONDS),
            "SPADES_QUICKPLAY_WAVE_SECONDS": "0.3",
        },
    )
    live.start()
    yield live
    live.stop()


def table_id(player: pages.Player, timeout: float = 15_000) -> str:
    """The table the page went to by itself."""
    player.page.locator(".table-page").wait_for(timeout=timeout)
    return str(player.page.locator(".table-page").get_attribute("data-table-id"))


def test_four_players_press_play_now_and_land_at_one_table(
    browser: Any, quick_server: LiveServer, artifacts: Path
) -> None:
    four = [pages.sign_up(browser, quick_server, "quick") for _ in range(4)]
    for player in four:
        player.page.get_by_role("button", name="Play now").click()
    four[0].page.locator("[data-quickplay=searching]").or_(
        four[0].page.locator(".table-page")
    ).first.wait_for()
    tables = {table_id(player) for player in four}
    assert len(tables) == 1
    (table,) = tables
    for player in four:
        assert player.page.url.endswith(f"/table/{table}")
        player.game().wait_for()
    four[0].page.screenshot(path=str(artifacts / "quick-play-table.png"), full_page=True)
    seats = four[0].page.locator(".game").inner_text()
    for player in four:
        assert player.username in seats


def test_one_player_alone_waits_sees_the_bots_coming_and_plays_them(
    browser: Any, quick_server: LiveServer, artifacts: Path
) -> None:
    alone = pages.sign_up(browser, quick_server, "alone")
    page = alone.page
    page.screenshot(path=str(artifacts / "quick-play-lobby.png"), full_page=True)
    page.get_by_role("button", name="Play now").click()
    waiting = page.locator("[data-quickplay=searching]")
    waiting.wait_for()
    assert "Finding a game" in waiting.inner_text()
    page.locator("[data-searching]").wait_for()
    assert int(page.locator("[data-searching]").get_attribute("data-searching") or "0") >= 1
    bots = page.locator("[data-bots]").get_attribute("data-bots")
    assert bots is not None and 0 < int(bots) <= BOT_SECONDS
    assert re.search(r"Bots take the empty seats in \d+ s", waiting.inner_text())
    page.wait_for_function(
        "() => Number(document.querySelector('[data-waited]')?.dataset.waited ?? 0) >= 1"
    )
    page.screenshot(path=str(artifacts / "quick-play-waiting.png"), full_page=True)
    table_id(alone)
    alone.game().wait_for()
    plates = [
        alone.page.locator(f".board .seat[data-seat={seat}]").get_attribute("aria-label") or ""
        for seat in ("EAST", "SOUTH", "WEST")
    ]
    assert all("Bot (Standard)" in plate for plate in plates), plates  # STANDARD bots


def test_a_rated_search_can_be_cancelled_and_says_no_bots_come(
    browser: Any, quick_server: LiveServer
) -> None:
    player = pages.sign_up(browser, quick_server, "rated")
    page = player.page
    page.get_by_role("button", name="Play rated").click()
    waiting = page.locator("[data-quickplay=searching]")
    waiting.wait_for()
    assert "Finding a rated game" in waiting.inner_text()
    assert page.locator("[data-bots]").get_attribute("data-bots") == "never"
    page.get_by_role("button", name="Cancel").click()
    page.locator("[data-quickplay=idle] [data-last=CANCELLED]").wait_for()
    page.locator("[data-quickplay=idle] button.primary:enabled", has_text="Play now").wait_for()
