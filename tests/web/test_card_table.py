"""The table as a card table, in Chromium on a desktop (1366x900) and a phone (390x844):
the hand in view while bidding, the bid box over the felt, each card of a trick in front
of its player, a completed trick held a moment and gathered toward its winner, the summary
of a hand between hands; a reason on every disabled card, in the words of the server's
refusal; "Play against bots" in one click; sounds off until turned on, the turn's ring;
axe-core finding nothing serious on the lobby, the table and a profile; the JavaScript
budget.

The module's server lets bots move at once and runs turn clocks in real time (tables here
give 60 s a turn, which no test waits out). With `SPADES_SCREENSHOTS=1` the tests of a hand
also write the documentation's screenshots (tests/web/screens.py).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.server import LiveServer
from tests.web import pages
from tests.web.axe import assert_accessible
from tests.web.screens import (
    DESKTOP,
    DEVICES,
    PHONE,
    Box,
    assert_in_view,
    box,
    no_sideways_scroll,
    shoot,
)

TURN_SECONDS = 60
HAND_SEED = 11  # hand 1: East leads, so North's first turn to play has three cards before it
RULES_SEED = 84  # North is void in a side suit East holds: every ILLEGAL_PLAY rule comes up
JS_BUDGET = 150 * 1024  # bytes of JavaScript, gzipped
HAND = ".hand button.card-button"

# Records, in the page, each completed trick the felt shows: when it appeared, how many
# cards it had, its note, and when it began to be gathered (and toward which side).
HOLD_RECORDER = """() => {
  window.heldTricks = {};
  setInterval(() => {
    const trick = document.querySelector('.trick');
    if (!trick || trick.dataset.trick !== 'held') return;
    const now = performance.now();
    const seen = (window.heldTricks[trick.dataset.trickId] ??= {
      first: now, last: now, cards: 0, note: '', winner: trick.dataset.winner,
      gathered: null, gatherClass: '' });
    seen.last = now;
    seen.cards = Math.max(seen.cards, trick.querySelectorAll('.play').length);
    seen.note = trick.querySelector('[data-trick-note]')?.textContent ?? seen.note;
    if (trick.dataset.stage === 'gathering' && seen.gathered === null) {
      seen.gathered = now;
      seen.gatherClass = trick.className;
    }
  }, 20);
}"""


# The properties a card of the trick changes smoothly (a card put on the felt to look).
PLAY_TRANSITION = """() => {
  const play = document.createElement('div');
  play.className = 'play';
  document.querySelector('.trick').append(play);
  const moving = getComputedStyle(play).transitionProperty;
  play.remove();
  return moving;
}"""


@pytest.fixture(scope="module")
def table_server(tmp_path_factory: pytest.TempPathFactory, web_dist: Path) -> Iterator[LiveServer]:
    """A server with the client, bots that move at once and real-time turn clocks."""
    live = LiveServer(
        tmp_path_factory.mktemp("card-table") / "spades.db",
        env={
            "SPADES_BOT_DELAY_MS": "0",
            "SPADES_WEB_DIST": str(web_dist),
            "SPADES_TURN_CLOCK_SCALE": "1",
        },
    )
    live.start()
    yield live
    live.stop()


def against_bots(player: pages.Player, name: str, seed: int) -> str:
    """A seeded table of `player` (North) and three bots; its id, once the game is on."""
    table_id = pages.create_table(player, name, seed=seed, turn_seconds=TURN_SECONDS)
    for seat in ("EAST", "SOUTH", "WEST"):
        pages.add_bot(player, seat)
    player.game().wait_for()
    return table_id


def seat_plate(page: Any, seat: str) -> Any:
    return page.locator(f".board .seat[data-seat={seat}]")


def shown_trick(page: Any) -> str:
    """Wait until the felt shows the trick in progress (no completed trick held); its id."""
    page.wait_for_function("() => document.querySelector('.trick')?.dataset.trick === 'current'")
    return str(page.locator(".trick").get_attribute("data-trick-id"))


def assert_cards_toward_their_seats(page: Any) -> int:
    """Each card on the felt lies between the middle of the trick and the seat that played
    it, nearer that seat than any other; how many cards there are."""
    middle = box(page.locator(".trick")).centre
    seats = ("NORTH", "EAST", "SOUTH", "WEST")
    plates = {seat: box(seat_plate(page, seat)).centre for seat in seats}
    plays = page.locator(".trick .play").all()
    for play in plays:
        seat = str(play.get_attribute("data-played-by"))
        card = box(play.locator(".card")).centre
        plate = plates[seat]
        towards = (card[0] - middle[0]) * (plate[0] - middle[0]) + (card[1] - middle[1]) * (
            plate[1] - middle[1]
        )
        assert towards > 0, f"{seat}'s card at {card} is not on {seat}'s side of {middle}"
        nearest = min(plates, key=lambda s: distance(card, plates[s]))
        assert nearest == seat, f"{seat}'s card at {card} lies nearest {nearest}"
        assert play.locator(".play-seat").inner_text().strip().endswith(seat.capitalize())
    return len(plays)


def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    return float(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5)


def held(page: Any, trick_id: str) -> dict[str, Any]:
    """What the recorder saw of completed trick `trick_id` ("hand:number")."""
    seen = page.evaluate("id => window.heldTricks[id] ?? null", trick_id)
    assert seen is not None, f"trick {trick_id} was never held on the felt"
    return dict(seen)


def assert_held_a_second(page: Any, trick_id: str) -> None:
    """Trick `trick_id` stayed whole on the felt for a second or more, said who won it,
    and was gathered toward the winner's seat."""
    seen = held(page, trick_id)
    shown_for = (seen["gathered"] or seen["last"]) - seen["first"]
    assert seen["cards"] == 4, seen
    assert shown_for >= 1000, f"trick {trick_id} was shown {shown_for:.0f} ms"
    winner = str(seen["winner"])
    assert seen["note"] == f"{winner.capitalize()} wins", seen
    side = re.search(r"seat-(\w+)", seat_plate(page, winner).get_attribute("class") or "")
    assert side and f"gather-{side.group(1)}" in seen["gatherClass"], seen


def hand_in_view(page: Any) -> list[Box]:
    """All 13 (or fewer) cards of the hand lie inside the window."""
    return assert_in_view(page, HAND, "a card of the hand")


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_hand_at_the_card_table(browser: Any, table_server: LiveServer, device: str) -> None:
    requests: list[str] = []
    player = pages.sign_up(
        browser, table_server, "felt", username=f"ada_{device}",
        on_page=lambda page: page.on("request", lambda r: requests.append(r.url)),
        # The phone's player asked for less motion: cards fade, nothing flies.
        reduced_motion="reduce" if device == "phone" else "no-preference",
        **DEVICES[device],
    )  # fmt: skip
    page = player.page
    against_bots(player, "Friday spades", HAND_SEED)
    page.evaluate(HOLD_RECORDER)

    # Bidding: the bid box lies over the felt and the whole hand stays in view.
    assert pages.wait_turn(player) == "BIDDING"
    bid_box = box(page.locator(".bid-box"))
    felt = box(page.locator(".board"))
    assert felt.contains(bid_box.centre), f"the bid box {bid_box} is not over the felt {felt}"
    assert len(hand_in_view(page)) == 13
    assert_in_view(page, ".bid-box button[data-action=place-bid]", "the bid button")
    if device == "phone":
        assert box(page.locator("header.top")).height <= 64, "the header is one row"
        no_sideways_scroll(page)
    page.locator(".bid-box button[data-bid='4']").click()
    assert "means you need" in page.locator(".bid-box [data-hint]").inner_text()
    assert_accessible(page, f"the table while bidding ({device})")
    shoot(page, f"{device}-bidding")
    leave = box(page.get_by_role("button", name="Leave table (a bot takes your seat)"))
    # A card's name is the card in words, from its content (its face is shown as "J♠").
    first_card = pages.hand_cards(player)[0]
    rank, suit = first_card.lower().split("-")
    named = page.get_by_role("button", name=f"{rank.capitalize()} of {suit}", exact=True)
    assert named.get_attribute("data-card") == first_card
    assert named.get_attribute("aria-label") is None
    pages.act(player, 4)

    # North's first turn to play: East, South and West have played, each card in front
    # of its player; on a phone the trick and the hand share the window.
    assert pages.wait_turn(player) == "PLAYING"
    first = shown_trick(page)
    assert first == "1:1"
    assert assert_cards_toward_their_seats(page) == 3
    assert_in_view(page, ".trick .play", "a card of the trick")
    cards = hand_in_view(page)
    if device == "phone":
        no_sideways_scroll(page)
        playable = page.locator(".hand button.card-button:not([disabled])").all()
        for target in (box(card) for card in playable):
            assert target.width >= 44 and target.height >= 44, f"a card is {target}: under 44 px"
        assert len({round(c.y) for c in cards}) <= 2, "the hand takes one or two rows"
    assert_accessible(page, f"the table mid-trick ({device})")
    shoot(page, f"{device}-mid-trick")

    # North's card ends the trick: it stays a second, then goes to its winner.
    pages.act(player, 4)
    page.wait_for_function("() => window.heldTricks['1:1']?.gathered != null")
    shown_trick(page)
    assert_held_a_second(page, "1:1")

    # The rest of the hand, played at once (a card played gathers the last trick early).
    while player.game().get_attribute("data-phase") == "PLAYING" and pages.hand_cards(player):
        pages.wait_turn(player)
        if player.game().get_attribute("data-phase") != "PLAYING":
            break
        pages.act(player, 4)

    # The hand's last trick is held like the others, then the summary shows: each team's
    # target, tricks, points, bags and score, as the hands' history has them.
    summary = page.locator("[data-hand-summary='1']")
    summary.wait_for(timeout=10_000)
    assert_held_a_second(page, "1:13")
    history = page.locator("table.history tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )
    for number, team, target, tricks, points, _bags, score in history:
        assert number == "1"
        column = "NORTH_SOUTH" if "North" in team else "EAST_WEST"

        def cell(row: str, column: str = column) -> str:
            found = summary.locator(f"tr[data-row='{row}'] td[data-team={column}]")
            return str(found.text_content())

        assert (cell("Target"), cell("Tricks"), cell("Score")) == (target, tricks, score)
        assert cell("Points") == points
    if device == "desktop":  # the history's every column shows in its side panel
        region = page.locator(".scroll[role=region]")
        assert region.evaluate("r => r.scrollWidth <= r.clientWidth"), "the history scrolls"
    # The next hand's bidding goes on beside it (East deals: North bids third); the new
    # hand is in view.
    assert pages.wait_turn(player) == "BIDDING"
    page.locator(".bid-box").wait_for()
    hand_in_view(page)
    assert_accessible(page, f"the table with a hand's summary ({device})")
    shoot(page, f"{device}-hand-summary")
    summary.get_by_role("button", name="Continue").click()
    assert summary.count() == 0
    # "Leave table" stayed where it was all hand long (no misclick after the last card).
    assert box(page.get_by_role("button", name="Leave table (a bot takes your seat)")) == leave
    # What a card of the trick animates: its place too, unless less motion was asked for.
    moving = str(page.evaluate(PLAY_TRANSITION))
    assert ("transform" in moving) == (device == "desktop"), moving

    origin = f"http://127.0.0.1:{table_server.port}/"
    elsewhere = [url for url in requests if not url.startswith((origin, "data:"))]
    assert not elsewhere, f"requests to another origin: {elsewhere}"


PLAY = "mutation($t: ID!, $c: CardInput!) { playCard(tableId: $t, card: $c) { version } }"


def refusal(player: pages.Player, table_id: str, card: str) -> tuple[str, str]:
    """Play `card` ("QUEEN-HEARTS") through the API as `player`: the error's code and
    message (the server must refuse it)."""
    rank, suit = card.split("-")
    answer = httpx.post(
        player.server.http_url,
        json={"query": PLAY, "variables": {"t": table_id, "c": {"suit": suit, "rank": rank}}},
        headers={"Authorization": f"Bearer {player.token()}"},
        timeout=10,
    ).json()
    errors = answer.get("errors")
    assert errors, f"the server let {card} be played: {answer}"
    return str(errors[0]["extensions"]["code"]), str(errors[0]["message"])


def disabled_cards(player: pages.Player) -> list[dict[str, str]]:
    """Each disabled card of the hand: its card, tooltip, reason and description."""
    found: list[dict[str, str]] = player.page.locator(f"{HAND}[disabled]").evaluate_all(
        """els => els.map(e => ({
             card: e.dataset.card, title: e.title, reason: e.dataset.reason ?? '',
             described:
               document.getElementById(e.getAttribute('aria-describedby'))?.textContent ?? '',
           }))"""
    )
    return found


def test_every_disabled_card_says_why_in_the_words_of_the_servers_refusal(
    browser: Any, table_server: LiveServer
) -> None:
    north = pages.sign_up(browser, table_server, "rules", **DESKTOP)
    east = pages.sign_up(browser, table_server, "rules", **PHONE)
    table_id = pages.create_table(north, "By the rules", seed=RULES_SEED, turn_seconds=TURN_SECONDS)
    east.page.get_by_role("button", name="Sit East at By the rules").click()
    east.page.locator(".table-page[data-mode=player]").wait_for()
    for seat in ("SOUTH", "WEST"):
        pages.add_bot(north, seat)
    players = {"NORTH": north, "EAST": east}
    rules: set[str] = set()
    waiting_told = tapped = False
    while len(rules) < 4:
        seat = pages.human_on_turn(players)
        player, other = players[seat], players["EAST" if seat == "NORTH" else "NORTH"]
        assert player.game().get_attribute("data-phase") != "GAME_OVER"
        if player.game().get_attribute("data-phase") != "PLAYING":
            pages.act(player, 3)
            continue
        # Each card the server's legal plays leave out is disabled, with a reason that
        # is the server's own when the card is played anyway.
        legal = set(pages.playable_cards(player))
        for card in disabled_cards(player):
            assert card["card"] not in legal
            assert card["title"] == card["reason"] == card["described"], card
            code, message = refusal(player, table_id, card["card"])
            assert code == "ILLEGAL_PLAY"
            assert card["reason"].lower().rstrip(".") == message.lower(), (card, message)
            rules.add(message.split(" (")[0])
            if seat == "EAST" and not tapped:
                # A touch on a disabled card shows its reason under the hand.
                east.page.touchscreen.tap(
                    *box(east.page.locator(f"{HAND}[data-card='{card['card']}']")).centre
                )
                east.page.locator(".hand-hint", has_text=card["reason"]).wait_for()
                tapped = True
        # The other player's cards wait for their turn, and say so.
        if not waiting_told and other.page.locator(HAND).count():
            other.page.wait_for_function(
                "s => document.querySelector('.game')?.dataset.turn === s", arg=seat
            )
            told = {card["reason"] for card in disabled_cards(other)}
            assert told == {f"Wait for your turn: {seat.capitalize()} is to play."}, told
            waiting_told = True
        # East leads the first trick (13 cards in hand): a suit North lacks, if any.
        leads_first = seat == "EAST" and len(pages.hand_cards(east)) == 13
        card = first_suit_north_lacks(north, player) if leads_first else None
        if card is None:
            pages.act(player, 3)
        else:
            version = player.version()
            player.page.locator(f"{HAND}[data-card='{card}']").click()
            player.wait_version_at_least(version + 1)
    assert rules == {
        "you must follow suit",
        "no spade on the first trick while you hold another suit",
        "no spade lead on the first trick unless your hand is all spades",
        "spades are not broken: lead another suit",
    }
    assert waiting_told and tapped


def first_suit_north_lacks(north: pages.Player, leader: pages.Player) -> str | None:
    """A card `leader` may lead in a side suit North does not hold (so North, void, meets
    the first trick's rule on spades), if there is one."""
    held = {card.split("-")[1] for card in pages.hand_cards(north)}
    return next(
        (c for c in pages.playable_cards(leader) if c.split("-")[1] not in held | {"SPADES"}), None
    )


def test_play_against_bots_takes_one_click_and_sign_up_tells_its_rules_first(
    browser: Any, table_server: LiveServer
) -> None:
    # Before anything is sent, the sign-up form says what a name and a password need.
    context = browser.new_context(**DESKTOP)
    form = context.new_page()
    form.goto(f"http://127.0.0.1:{table_server.port}/")
    password = form.get_by_label("Password")
    assert password.get_attribute("minlength") == "8"
    assert form.locator(f"#{password.get_attribute('aria-describedby')}").inner_text() == (
        "At least 8 characters."
    )
    assert "3 to 20 letters" in form.locator("#username-rule").inner_text()
    # Signing in asks for no such rule (an old account's name may predate it).
    form.get_by_role("button", name="Sign in").click()
    assert form.get_by_label("Password").get_attribute("minlength") is None
    assert form.get_by_label("Username").get_attribute("pattern") is None
    assert form.get_by_label("Username").get_attribute("maxlength") is None
    context.close()

    player = pages.sign_up(browser, table_server, "solo", **DESKTOP)
    quick = player.page.locator(".play-bots")
    assert quick.get_by_label("Bot level").input_value() == "STANDARD"
    quick.get_by_role("button", name="Play against bots").click()
    player.game().wait_for()
    assert player.game().get_attribute("data-phase") in ("BIDDING", "PLAYING")
    for seat in ("EAST", "SOUTH", "WEST"):
        assert "Bot (Standard)" in (seat_plate(player.page, seat).get_attribute("aria-label") or "")
    options = player.page.locator("[data-options]").inner_text()
    assert "Private" in options and "no turn clock" in options
    assert pages.wait_turn(player) == "BIDDING"
    assert player.page.locator("#table-status").inner_text() == "Your turn to bid."


TONES = """
  window.tones = [];
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function (...args) {
    window.tones.push(Math.round(this.frequency.value));
    return start.apply(this, args);
  };
"""
TURN_CUE = [660, 880]
TRICK_CUES = {"won": [523, 659, 784], "lost": [392, 311]}


def tones(player: pages.Player) -> list[int]:
    return [int(t) for t in player.page.evaluate("window.tones")]


def test_sounds_are_off_until_turned_on_and_the_turn_ring_runs_down(
    browser: Any, table_server: LiveServer
) -> None:
    player = pages.sign_up(
        browser, table_server, "ears", on_page=lambda page: page.add_init_script(TONES), **DESKTOP
    )
    against_bots(player, "Chimes", HAND_SEED)
    assert pages.wait_turn(player) == "BIDDING"
    # The turn came and nothing sounded: sounds are off by default.
    assert tones(player) == []
    sounds = player.page.get_by_label("Sounds")
    assert not sounds.is_checked()

    # The ring around North's clock empties as the turn's time runs out.
    ring = seat_plate(player.page, "NORTH").locator("[role=timer] .ring-left")
    before = float(ring.get_attribute("data-left") or "0")
    player.page.wait_for_timeout(1300)
    after = float(ring.get_attribute("data-left") or "0")
    assert 0 < after < before <= 100

    # Turned on, sounds chime for the turn and for each trick, won or lost.
    sounds.check()
    assert tones(player) == TURN_CUE  # the toggle's own chime
    pages.act(player, 4)
    assert pages.wait_turn(player) == "PLAYING"
    player.page.wait_for_function("n => window.tones.length >= n", arg=2 * len(TURN_CUE))
    assert tones(player) == TURN_CUE * 2
    pages.act(player, 4)  # the trick's fourth card
    winner = str(player.page.locator(".trick[data-trick=held]").get_attribute("data-winner"))
    cue = TRICK_CUES["won" if winner in ("NORTH", "SOUTH") else "lost"]
    player.page.wait_for_function("n => window.tones.length >= n", arg=4 + len(cue))
    assert tones(player)[4 : 4 + len(cue)] == cue

    # The choice is kept in this browser.
    player.page.reload()
    player.game().wait_for()
    assert player.page.get_by_label("Sounds").is_checked()
    assert player.page.evaluate("localStorage.getItem('spades.sounds')") == "1"


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_lobby_and_a_profile_pass_axe(
    browser: Any, table_server: LiveServer, device: str
) -> None:
    player = pages.sign_up(browser, table_server, "axe", **DEVICES[device])
    assert_accessible(player.page, f"the lobby ({device})")
    player.page.goto(f"{player.base}/player/{player.username}")
    player.page.locator("[data-ready=profile]").wait_for()
    assert_accessible(player.page, f"a profile ({device})")


def test_the_client_keeps_its_javascript_budget(web_dist: Path) -> None:
    scripts = list((web_dist / "assets").glob("*.js"))
    assert scripts
    gzipped = sum(len(gzip.compress(script.read_bytes())) for script in scripts)
    assert gzipped <= JS_BUDGET, f"{gzipped / 1024:.1f} KB of gzipped JavaScript"
