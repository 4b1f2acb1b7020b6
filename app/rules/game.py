"""The game state machine: a state plus moves, each move checked then applied.

`Game.apply` checks a move completely before it changes anything, so a
refused move (a `RuleError`) leaves the game exactly as it was. An accepted
move returns the events it caused, one per change (a fourth card may cause
CARD_PLAYED, TRICK_WON, HAND_SCORED and HAND_DEALT or GAME_OVER).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from app.rules.bidding import Bid, BidKind, checked_bid, team_target
from app.rules.cards import Card, Suit, sort_hand, sort_key
from app.rules.dealing import deal_hands, new_secret_seed
from app.rules.errors import ErrorCode, RuleError
from app.rules.moves import (
    Event,
    EventKind,
    Move,
    PassCards,
    PlaceBid,
    PlayCard,
    ReplacePlayer,
    RevealHand,
)
from app.rules.play import legal_plays, trick_winner
from app.rules.scoring import TeamHandResult, game_winner, score_team
from app.rules.seats import SEATS, TEAMS, Seat, Team, seats_from

BLIND_NIL_MARGIN = 100
TRICKS_PER_HAND = 13

Deal = tuple[tuple[Card, ...], ...]


class Phase(StrEnum):
    """Where the game stands. WAITING belongs to a table whose seats are not all filled."""

    WAITING = "WAITING"
    BIDDING = "BIDDING"
    EXCHANGE = "EXCHANGE"
    PLAYING = "PLAYING"
    GAME_OVER = "GAME_OVER"


# On Python 3.11 every `Phase.X`-style lookup goes through EnumType.__getattr__ (about
# 0.1 us each); the per-move paths below use these module-level aliases instead.
_BIDDING, _EXCHANGE, _PLAYING = Phase.BIDDING, Phase.EXCHANGE, Phase.PLAYING
_SPADES = Suit.SPADES
_CARD_PLAYED, _TRICK_WON = EventKind.CARD_PLAYED, EventKind.TRICK_WON


@dataclass(frozen=True, slots=True)
class Exchange:
    """Two cards passed from one partner to the other."""

    giver: Seat
    receiver: Seat
    cards: tuple[Card, Card]


@dataclass(frozen=True, slots=True)
class Trick:
    """A finished trick: who led, the four plays in order, who won."""

    leader: Seat
    plays: tuple[tuple[Seat, Card], ...]
    winner: Seat


@dataclass(slots=True)
class HandState:
    """Everything about the hand being played (and, once finished, its record)."""

    number: int
    dealer: Seat
    deal: Deal
    hands: list[list[Card]]
    withheld: list[bool]
    bids: list[Bid | None] = field(default_factory=lambda: [None] * 4)
    bid_order: list[Seat] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    tricks: list[Trick] = field(default_factory=list)
    current: list[tuple[Seat, Card]] = field(default_factory=list)
    leader: Seat = Seat.NORTH
    spades_broken: bool = False
    tricks_won: list[int] = field(default_factory=lambda: [0] * 4)
    players_changed: bool = False

    def copy(self) -> HandState:
        """An independent copy (finished tricks and exchanges are immutable and shared)."""
        return HandState(
            number=self.number,
            dealer=self.dealer,
            deal=self.deal,
            hands=[list(h) for h in self.hands],
            withheld=list(self.withheld),
            bids=list(self.bids),
            bid_order=list(self.bid_order),
            exchanges=list(self.exchanges),
            tricks=list(self.tricks),
            current=list(self.current),
            leader=self.leader,
            spades_broken=self.spades_broken,
            tricks_won=list(self.tricks_won),
            players_changed=self.players_changed,
        )

    @property
    def first_bidder(self) -> Seat:
        """The seat to the dealer's left, who bids first and leads the first trick."""
        return self.dealer.left

    @property
    def blind_nil_seat(self) -> Seat | None:
        """The seat that bid BLIND_NIL this hand, if any (at most one can)."""
        for seat in self.bid_order:
            bid = self.bids[seat]
            if bid is not None and bid.kind is BidKind.BLIND_NIL:
                return seat
        return None

    def target(self, team: Team) -> int | None:
        """The team's target: None until both partners bid, and for double nil."""
        order = [s for s in self.bid_order if s.team is team]
        if len(order) < 2:
            return None
        return team_target(self.bids[order[0]], self.bids[order[1]])


@dataclass(frozen=True, slots=True)
class FinishedHand:
    """A scored hand, kept for history and game records."""

    state: HandState
    results: tuple[TeamHandResult, TeamHandResult]
    players: tuple[str, ...] | None  # set when a seat changed hands during the hand


@dataclass(frozen=True, slots=True)
class Step:
    """One event of an applied move, with the game as it stood right after it."""

    event: Event
    state: Game


@dataclass(slots=True)
class Game:
    """A game of partnership spades from its first deal to its winner."""

    seed: int
    seed_public: bool
    players: list[str]
    start_players: tuple[str, ...]
    hand: HandState
    phase: Phase = Phase.BIDDING
    scores: list[int] = field(default_factory=lambda: [0, 0])
    bags: list[int] = field(default_factory=lambda: [0, 0])
    finished: list[FinishedHand] = field(default_factory=list)
    winner: Team | None = None
    forced_deals: Mapping[int, Deal] | None = None
    _steps: list[Step] | None = None
    _events: list[Event] = field(default_factory=list)

    # ----------------------------------------------------------------- creation

    @classmethod
    def start(
        cls,
        players: Sequence[str],
        seed: int | None = None,
        forced_deals: Mapping[int, Deal] | None = None,
    ) -> tuple[Game, Event]:
        """Deal the first hand (NORTH deals). Without a seed, a secret one is drawn."""
        if len(players) != 4:
            raise RuleError(ErrorCode.BAD_USER_INPUT, "a game needs exactly four players")
        game = cls(
            seed=new_secret_seed() if seed is None else seed,
            seed_public=seed is not None,
            players=list(players),
            start_players=tuple(players),
            hand=_placeholder_hand(),
            forced_deals=forced_deals,
        )
        game.hand = game._new_hand(1, Seat.NORTH)
        return game, Event(EventKind.GAME_STARTED, seat=Seat.NORTH)

    def copy(self) -> Game:
        """An independent copy of the game (the finished record is shared, being immutable)."""
        return Game(
            seed=self.seed,
            seed_public=self.seed_public,
            players=list(self.players),
            start_players=self.start_players,
            hand=self.hand.copy(),
            phase=self.phase,
            scores=list(self.scores),
            bags=list(self.bags),
            finished=list(self.finished),
            winner=self.winner,
            forced_deals=self.forced_deals,
        )

    # ----------------------------------------------------------------- queries

    @property
    def turn(self) -> Seat | None:
        """The seat expected to act now: bidder, passer or player; None when over."""
        hand = self.hand
        phase = self.phase
        if phase is _PLAYING:
            current = hand.current
            if not current:
                # None once the 13th trick is won, until the hand is scored.
                return hand.leader if len(hand.tricks) < TRICKS_PER_HAND else None
            # None on a complete trick (the step of its 4th card), until it is won.
            return current[-1][0].left if len(current) < 4 else None
        if phase is _BIDDING:
            return seats_from(hand.first_bidder)[len(hand.bid_order)]
        if phase is _EXCHANGE:
            bidder = hand.blind_nil_seat
            assert bidder is not None
            return bidder if not hand.exchanges else bidder.partner
        return None

    def legal_plays(self, seat: Seat) -> list[Card]:
        """The cards `seat` may play now: empty unless it is that seat's turn to play."""
        if self.phase is not _PLAYING or self.turn is not seat:
            return []
        hand = self.hand
        led = hand.current[0][1].suit if hand.current else None
        return legal_plays(hand.hands[seat], led, not hand.tricks, hand.spades_broken)

    def blind_nil_eligible(self, seat: Seat) -> bool:
        """True while `seat` may still bid BLIND_NIL (its hand is then withheld from it)."""
        return self.phase is Phase.BIDDING and self.hand.withheld[seat]

    @property
    def history(self) -> list[TeamHandResult]:
        """Every finished hand's results, NORTH_SOUTH then EAST_WEST, oldest first."""
        return [r for f in self.finished for r in f.results]

    # ----------------------------------------------------------------- moves

    def apply(self, move: Move) -> list[Event]:
        """Check and apply one move; return its events. Raises RuleError, changing nothing."""
        self._events = []
        self._steps = None
        self._dispatch(move)
        return self._events

    def apply_steps(self, move: Move) -> list[Step]:
        """Like `apply`, but with an independent copy of the game after each event."""
        self._events = []
        self._steps = []
        try:
            self._dispatch(move)
            return self._steps
        finally:
            self._steps = None

    def _dispatch(self, move: Move) -> None:
        if isinstance(move, PlayCard):
            self._play_card(move.seat, move.card)
        elif isinstance(move, PlaceBid):
            self._place_bid(move.seat, move.kind, move.tricks)
        elif isinstance(move, RevealHand):
            self._reveal_hand(move.seat)
        elif isinstance(move, PassCards):
            self._pass_cards(move.seat, move.cards)
        elif isinstance(move, ReplacePlayer):
            self._replace_player(move.seat, move.player_id)
        else:  # pragma: no cover - the Move union is closed
            raise RuleError(ErrorCode.BAD_USER_INPUT, f"unknown move {move!r}")

    def _emit(self, event: Event) -> None:
        self._events.append(event)
        if self._steps is not None:
            self._steps.append(Step(event, self.copy()))

    def _require_phase(self, phase: Phase, action: str) -> None:
        if self.phase is not phase:
            raise RuleError(ErrorCode.WRONG_PHASE, f"cannot {action} during {self.phase.value}")

    def _require_turn(self, seat: Seat) -> None:
        turn = self.turn
        if turn is not seat:
            who = turn.name if turn is not None else "nobody"
            raise RuleError(ErrorCode.NOT_YOUR_TURN, f"it is {who}'s turn, not {seat.name}'s")

    def _reveal_hand(self, seat: Seat) -> None:
        self._require_phase(Phase.BIDDING, "reveal a hand")
        hand = self.hand
        if hand.bids[seat] is not None:
            raise RuleError(ErrorCode.NOT_ELIGIBLE, "the hand is already shown once you have bid")
        if not hand.withheld[seat]:
            raise RuleError(
                ErrorCode.NOT_ELIGIBLE, "your hand is not withheld: there is nothing to reveal"
            )
        hand.withheld[seat] = False
        self._emit(Event(EventKind.HAND_REVEALED, seat=seat))

    def _place_bid(self, seat: Seat, kind: BidKind, tricks: int | None) -> None:
        self._require_phase(Phase.BIDDING, "bid")
        self._require_turn(seat)
        bid = checked_bid(kind, tricks)
        hand = self.hand
        if hand.withheld[seat] and bid.kind is not BidKind.BLIND_NIL:
            raise RuleError(
                ErrorCode.INVALID_BID,
                "your hand is withheld: reveal it before bidding anything but BLIND_NIL",
            )
        if bid.kind is BidKind.BLIND_NIL and not hand.withheld[seat]:
            raise RuleError(ErrorCode.NOT_ELIGIBLE, _blind_nil_refusal(self, seat))
        hand.bids[seat] = bid
        hand.bid_order.append(seat)
        if bid.kind is BidKind.BLIND_NIL:
            # One blind nil per team: the partner can no longer bid it and sees its cards.
            hand.withheld[seat] = False
            hand.withheld[seat.partner] = False
        if len(hand.bid_order) == 4:
            self.phase = Phase.EXCHANGE if hand.blind_nil_seat is not None else Phase.PLAYING
            hand.leader = hand.first_bidder
        self._emit(Event(EventKind.BID_PLACED, seat=seat, bid=bid))

    def _pass_cards(self, seat: Seat, cards: Sequence[Card]) -> None:
        self._require_phase(Phase.EXCHANGE, "pass cards")
        self._require_turn(seat)
        if len(cards) != 2 or cards[0] == cards[1]:
            raise RuleError(ErrorCode.BAD_USER_INPUT, "pass exactly two different cards")
        held = self.hand.hands[seat]
        for card in cards:
            if card not in held:
                raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{card.code} is not in your hand")
        hand = self.hand
        for card in cards:
            held.remove(card)
        hand.exchanges.append(Exchange(seat, seat.partner, (cards[0], cards[1])))
        if len(hand.exchanges) == 2:
            # The partner passed back from the cards held before receiving; now both receive.
            for exchange in hand.exchanges:
                receiving = hand.hands[exchange.receiver]
                receiving.extend(exchange.cards)
                receiving.sort(key=sort_key)
            self.phase = Phase.PLAYING
        self._emit(Event(EventKind.CARDS_PASSED, seat=seat))

    def _play_card(self, seat: Seat, card: Card) -> None:
        self._require_phase(_PLAYING, "play a card")
        self._require_turn(seat)
        hand = self.hand
        held = hand.hands[seat]
        if card not in held:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{card.code} is not in your hand")
        led = hand.current[0][1].suit if hand.current else None
        if card not in legal_plays(held, led, not hand.tricks, hand.spades_broken):
            raise RuleError(ErrorCode.ILLEGAL_PLAY, _illegal_reason(hand, held, card, led))
        held.remove(card)
        if led is not None and card.suit is _SPADES and led is not _SPADES:
            hand.spades_broken = True
        hand.current.append((seat, card))
        self._emit(Event(_CARD_PLAYED, seat=seat, card=card))
        if len(hand.current) == 4:
            self._finish_trick()

    def _replace_player(self, seat: Seat, player_id: str) -> None:
        if self.phase is Phase.GAME_OVER:
            raise RuleError(ErrorCode.WRONG_PHASE, "the game is over")
        if not player_id:
            raise RuleError(ErrorCode.BAD_USER_INPUT, "a player id is required")
        self.players[seat] = player_id
        self.hand.players_changed = True
        self._emit(Event(EventKind.PLAYER_REPLACED, seat=seat))

    # ----------------------------------------------------------------- automatic steps

    def _finish_trick(self) -> None:
        hand = self.hand
        plays = tuple(hand.current)
        winner = trick_winner(plays)
        hand.tricks.append(Trick(hand.leader, plays, winner))
        hand.current = []
        hand.tricks_won[winner] += 1
        hand.leader = winner
        self._emit(Event(_TRICK_WON, seat=winner, winner=winner))
        if len(hand.tricks) == TRICKS_PER_HAND:
            self._score_hand()

    def _score_hand(self) -> None:
        hand = self.hand
        results = []
        for team in TEAMS:
            seats = team.seats
            bids = [hand.bids[s] for s in seats]
            assert bids[0] is not None and bids[1] is not None
            result = score_team(
                hand.number,
                team,
                [bids[0], bids[1]],
                [hand.tricks_won[s] for s in seats],
                hand.target(team),
                self.scores[team],
                self.bags[team],
            )
            self.scores[team] = result.score_after
            self.bags[team] = result.bags_after
            results.append(result)
        players = tuple(self.players) if hand.players_changed else None
        self.finished.append(FinishedHand(hand, (results[0], results[1]), players))
        self._emit(Event(EventKind.HAND_SCORED))
        winner = game_winner(self.scores)
        if winner is not None:
            self.winner = winner
            self.phase = Phase.GAME_OVER
            self._emit(Event(EventKind.GAME_OVER, winner=winner))
            return
        self.hand = self._new_hand(hand.number + 1, hand.dealer.left)
        self.phase = Phase.BIDDING
        self._emit(Event(EventKind.HAND_DEALT, seat=self.hand.dealer))

    def _new_hand(self, number: int, dealer: Seat) -> HandState:
        deals = self.forced_deals
        cards = deals[number] if deals is not None and number in deals else None
        if cards is None:
            cards = deal_hands(self.seed, number)
        else:
            cards = tuple(tuple(sort_hand(h)) for h in cards)  # a hand is always shown sorted
        withheld = [False] * 4
        for team in TEAMS:
            if self.scores[team] <= self.scores[team.other] - BLIND_NIL_MARGIN:
                for seat in team.seats:
                    withheld[seat] = True
        return HandState(
            number=number,
            dealer=dealer,
            deal=cards,
            hands=[list(h) for h in cards],
            withheld=withheld,
            leader=dealer.left,
        )


def _placeholder_hand() -> HandState:
    return HandState(0, Seat.NORTH, ((),) * 4, [[] for _ in SEATS], [False] * 4)


def _blind_nil_refusal(game: Game, seat: Seat) -> str:
    hand = game.hand
    partner_bid = hand.bids[seat.partner]
    if partner_bid is not None and partner_bid.kind is BidKind.BLIND_NIL:
        return "your partner already bid BLIND_NIL: one per team per hand"
    team = seat.team
    if game.scores[team] > game.scores[team.other] - BLIND_NIL_MARGIN:
        return f"BLIND_NIL needs your team {BLIND_NIL_MARGIN}+ points behind at the deal"
    return "you have seen your cards: BLIND_NIL is no longer possible"


def _illegal_reason(hand: HandState, held: Sequence[Card], card: Card, led: Suit | None) -> str:
    if led is not None:
        if any(c.suit == led for c in held):
            return f"you must follow suit ({led.name})"
        return "no spade on the first trick while you hold another suit"
    if not hand.tricks:
        return "no spade lead on the first trick unless your hand is all spades"
    return "spades are not broken: lead another suit"
