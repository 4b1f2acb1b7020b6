"""Bot levels, rated tables, profiles and the leaderboard in the browser."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from tests.server.careers import LEADERBOARD, play_scripted_game
from tests.server.test_career_pages import seed_rating
from tests.support.client import Api
from tests.support.play import KeepAliveApi, kept_alive, sign_up_players
from tests.support.server import LiveServer
from tests.web import pages

T = TypeVar("T")


def in_thread(run: Callable[[], Awaitable[T]]) -> T:
    """Run API coroutines on their own event loop, away from Playwright's."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(run())).result()  # type: ignore[arg-type]


def test_the_host_chooses_each_bots_level_and_every_seat_shows_it(
    browser: Any, web_server: LiveServer
) -> None:
    host = pages.sign_up(browser, web_server, "botboss")
    page = host.page
    # Advanced: the level of a bot that would take an absent player's seat mid-game.
    page.locator("summary", has_text="Advanced").click()
    page.get_by_label("Level of a bot that takes an absent player's seat").select_option("EXPERT")
    table_id = pages.create_table(host, "Levels")
    token = host.token()

    async def replacement() -> str:
        found = await Api(web_server, token=token).call(
            "query($t: ID!) { table(id: $t) { replacementBot } }", t=table_id
        )
        return str(found["table"]["replacementBot"])

    assert in_thread(replacement) == "EXPERT"
    level = page.get_by_label("Level of the bots you add")
    for seat, choice in (("EAST", "EXPERT"), ("SOUTH", "STANDARD")):
        level.select_option(choice)
        pages.add_bot(host, seat)
    page.locator("li[data-seat=EAST]", has_text="Bot (Expert)").wait_for()
    page.locator("li[data-seat=SOUTH]", has_text="Bot (Standard)").wait_for()
    level.select_option("BASIC")
    pages.add_bot(host, "WEST")
    host.game().wait_for()
    # On the board, each seat's label (what a screen reader says) names the level.
    levels = {"EAST": "Bot (Expert)", "SOUTH": "Bot (Standard)", "WEST": "Bot (Basic)"}
    for seat, words in levels.items():
        label = page.locator(f".seat[data-seat={seat}]").get_attribute("aria-label") or ""
        assert words in label, (seat, label)


def test_a_rated_table_refuses_a_bot_and_says_why(browser: Any, web_server: LiveServer) -> None:
    host = pages.sign_up(browser, web_server, "ratedhost")
    host.page.get_by_label("Rated game").check()
    pages.create_table(host, "Ranked")
    assert "rated" in host.page.locator(".table-head").inner_text()
    pages.add_bot(host, "EAST")
    alert = host.page.get_by_role("alert")
    alert.wait_for()
    assert "bots cannot sit here" in alert.inner_text()
    assert host.page.locator("li[data-seat=EAST]", has_text="empty").count() == 1


def test_a_profile_shows_rating_stats_and_history_page_by_page(
    browser: Any, web_server: LiveServer
) -> None:
    player = pages.sign_up(browser, web_server, "career")
    token = player.token()

    async def two_games() -> list[str]:
        me = KeepAliveApi(web_server, token=token)
        others = await sign_up_players(web_server, 3)
        async with kept_alive(me, *others):
            rated = await play_scripted_game([me, *others], seed=11, rated=True)
            unrated = await play_scripted_game([me, *others], seed=12)
        return [rated, unrated, *(str(o.username) for o in others)]

    rated_id, unrated_id, east, _south, _west = in_thread(two_games)

    # From the player's own name in the header, the profile.
    page = player.page
    page.locator(".me").get_by_role("link", name=player.username).click()
    page.locator("[data-ready=profile]").wait_for()
    assert page.get_by_role("heading", name=player.username, level=1).is_visible()
    rating = page.locator(".rating").first
    assert rating.get_attribute("data-provisional") == "yes"
    assert "provisional" in rating.inner_text() and "±" in rating.inner_text()
    assert "after 1 rated game" in page.locator(".career").inner_text()
    games_stat = page.locator("[data-stat=Games] dd").inner_text()
    assert games_stat == "2"
    # Newest first: the unrated game, then the rated one with its rating change.
    rows = page.locator("table.history tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).get_attribute("data-game") == unrated_id
    assert "Unrated" in rows.nth(0).inner_text()
    assert rows.nth(1).get_attribute("data-game") == rated_id
    assert re.search(r"\d+ \([+-]\d+\)", rows.nth(1).inner_text())

    # One game per page: "Load more games" follows the cursor to the older one.
    page.goto(f"{player.base}/player/{player.username}?per=1")
    page.locator("[data-ready=profile]").wait_for()
    assert rows.count() == 1
    page.get_by_role("button", name="Load more games").click()
    page.locator(f"table.history tr[data-game='{rated_id}']").wait_for()
    assert rows.count() == 2
    assert page.get_by_role("button", name="Load more games").count() == 0

    # A name in the history opens that player's profile (the keyboard follows links too).
    rows.nth(0).get_by_role("link", name=east).focus()
    page.keyboard.press("Enter")
    page.get_by_role("heading", name=east, level=1).wait_for()
    assert page.url.endswith(f"/player/{east}")


def test_the_leaderboard_lists_established_players_best_first(
    browser: Any, web_server: LiveServer
) -> None:
    async def established() -> tuple[list[str], list[str]]:
        names = []
        for value in (1610, 1720):
            api = await Api(web_server).sign_up()
            seed_rating(web_server, {"id": str(api.player_id), "username": str(api.username)},
                        value, 12)  # fmt: skip
            names.append(str(api.username))
        board = (await api.call(LEADERBOARD, f=10, a=None))["leaderboard"]["edges"]
        return names, [edge["node"]["player"]["username"] for edge in board]

    (low, high), expected = in_thread(established)
    viewer = pages.sign_up(browser, web_server, "watcher")
    viewer.page.get_by_role("link", name="Leaderboard").click()
    viewer.page.locator("[data-ready=leaderboard]").wait_for()
    shown = viewer.page.locator("table.leaders tbody tr td:nth-child(2)").all_inner_texts()
    assert shown == expected
    assert shown.index(high) < shown.index(low)
    first = viewer.page.locator("table.leaders tbody tr").first
    assert first.get_attribute("data-rank") == "1"
    assert "provisional" not in first.inner_text()
    viewer.page.get_by_role("link", name=high).click()
    viewer.page.get_by_role("heading", name=high, level=1).wait_for()
