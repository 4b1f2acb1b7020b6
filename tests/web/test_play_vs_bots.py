"""A player signs up and plays a whole game against three bots, in Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.server import LiveServer
from tests.web import pages

SUIT_ORDER = ["SPADES", "HEARTS", "CLUBS", "DIAMONDS"]
RANK_ORDER = ["ACE", "KING", "QUEEN", "JACK", "TEN", "NINE", "EIGHT", "SEVEN", "SIX", "FIVE",
              "FOUR", "THREE", "TWO"]  # fmt: skip


def sort_key(card: str) -> tuple[int, int]:
    rank, suit = card.split("-")
    return SUIT_ORDER.index(suit), RANK_ORDER.index(rank)


def led_suit(player: pages.Player) -> str | None:
    """The suit of the first card of the trick in progress, if any."""
    first = player.page.locator(".trick[data-trick=current] .play [data-card]").first
    if not first.count():
        return None
    return str(first.get_attribute("data-card")).split("-")[1]


def test_a_player_plays_a_whole_game_against_three_bots(
    browser: Any, web_server: LiveServer, artifacts: Path
) -> None:
    player = pages.sign_up(browser, web_server, "solo", viewport={"width": 1200, "height": 900})
    player.page.screenshot(path=str(artifacts / "lobby.png"), full_page=True)

    # The four-colour deck is a display preference kept in the browser.
    html = player.page.locator("html")
    player.page.get_by_label("Four-colour deck").check()
    assert "four-colour" in (html.get_attribute("class") or "")

    pages.create_table(player, "Against the bots", seed=11)
    for seat in ("EAST", "SOUTH", "WEST"):
        pages.add_bot(player, seat)
    player.game().wait_for()

    # Bid 13 as the second bidder of North-South (a team total nobody makes): set twice,
    # the team drops below -250 after two hands and the game is over.
    bids = 0
    plays = 0
    checked_follow_suit = False
    shot_mid_hand = False
    while (phase := pages.wait_turn(player)) != "GAME_OVER":
        if phase == "BIDDING":
            player.page.locator(".bid-box").wait_for()
            if player.page.locator("[data-action=reveal]").count() == 0:
                box = player.page.locator(".bid-box")
                assert "Enter your team's total" in box.inner_text()
                box.locator("button[data-bid='13']").click()
                hint = box.locator("[data-hint]").inner_text()
                assert "your team total 13 means you need" in hint
            pages.act(player, 13)
            bids += 1
            continue
        hand = pages.hand_cards(player)
        assert hand == sorted(hand, key=sort_key), "the hand is shown sorted"
        if plays == 0:
            colours = player.page.evaluate(
                """() => Object.fromEntries(['spades', 'hearts', 'clubs', 'diamonds'].map(s => {
                     const card = document.querySelector(`.card.suit-${s}`);
                     return [s, card ? getComputedStyle(card).color : null]; }))"""
            )
            shown = [c for c in colours.values() if c is not None]
            assert len(set(shown)) == len(shown), f"four suits, four colours: {colours}"
        playable = pages.playable_cards(player)
        assert playable and set(playable) <= set(hand)
        suit = led_suit(player)
        if suit is not None and any(c.endswith(suit) for c in hand):
            # Follow suit: exactly the cards of the led suit are enabled.
            assert set(playable) == {c for c in hand if c.endswith(suit)}
            checked_follow_suit = checked_follow_suit or len(playable) < len(hand)
        if plays == 6 and not shot_mid_hand:
            player.page.screenshot(path=str(artifacts / "table-mid-hand.png"), full_page=True)
            shot_mid_hand = True
        pages.act(player, 13, keyboard=plays % 3 == 1)  # every third card with the keyboard
        plays += 1

    over = player.page.locator("[data-game-over]")
    over.wait_for()
    assert "East\N{EN DASH}West win" in over.inner_text()
    assert "You lost" in over.inner_text()
    assert bids == 2 and plays == 26
    assert checked_follow_suit, "some turn had cards disabled by the follow-suit rule"
    history = player.page.locator("table.history tbody tr")
    assert history.count() == 4  # two hands, two teams
    north_south = player.page.locator("tr[data-team=NORTH_SOUTH] [data-score]").inner_text()
    assert int(north_south) <= -250
    player.page.screenshot(path=str(artifacts / "game-over.png"), full_page=True)

    # Rematch: the only human asks, the bots agree, a new table opens and its game starts.
    old_url = player.page.url
    player.page.locator("[data-action=rematch]").click()
    player.page.wait_for_url(lambda url: url != old_url)
    player.page.locator(".table-page .game[data-phase=BIDDING]").wait_for()
    assert "Rematch" in player.page.locator(".table-head").inner_text()
    player.page.context.close()


def test_blind_nil_is_bid_unseen_and_two_cards_are_exchanged(
    browser: Any, web_server: LiveServer
) -> None:
    player = pages.sign_up(browser, web_server, "blind", viewport={"width": 1200, "height": 900})
    pages.create_table(player, "Blind nil", seed=11)
    for seat in ("EAST", "SOUTH", "WEST"):
        pages.add_bot(player, seat)
    player.game().wait_for()
    # Hand 1: bid 13 and get set, so North-South are 100+ behind when hand 2 is dealt.
    while pages.wait_turn(player) != "GAME_OVER":
        if player.page.locator("[data-action=blind-nil]").count():
            break
        pages.act(player, 13)
    player.page.locator("[data-action=blind-nil]:not([disabled])").wait_for()

    # Hand 2: the cards are withheld; bid Blind Nil without seeing them.
    assert player.page.locator(".hand").count() == 0
    assert "face down" in player.page.locator(".withheld").inner_text()
    version = player.version()
    player.page.locator("[data-action=blind-nil]").click()
    player.wait_version_at_least(version + 1)
    assert player.page.locator("[data-bid-of=NORTH]").inner_text() == "Blind Nil"

    # The exchange: North passes two cards to South, then gets two back.
    assert pages.wait_turn(player) == "EXCHANGE"
    hand = pages.hand_cards(player)
    assert len(hand) == 13
    passed = hand[-2:]
    for card in passed:
        player.page.locator(f".hand button[data-card='{card}']").click()
    assert player.page.locator(".hand button[aria-pressed=true]").count() == 2
    version = player.version()
    player.page.locator("[data-action=pass]").click()
    player.page.wait_for_function(
        "() => ['PLAYING', 'GAME_OVER'].includes(document.querySelector('.game').dataset.phase)"
    )
    # (Hand 1's last trick may still be on the felt for a moment: wait for hand 2's.)
    player.page.locator(".trick[data-trick=current]").wait_for()
    after = pages.hand_cards(player)
    on_felt = player.page.locator(".trick[data-trick=current] [data-played-by=NORTH]").all()
    assert len(after) + len(on_felt) == 13
    assert not set(passed) & set(after), "the passed cards left the hand"
    assert after == sorted(after, key=sort_key)
    player.page.context.close()
