import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import {
  PassCardsDocument,
  PlaceBidDocument,
  PlayCardDocument,
  RevealHandDocument,
  type BidInput,
  type Seat,
} from "../../graphql/generated";
import { botShort, clockwiseFrom, positionOf, sameCard, seatName, teamName, type CardLike } from "../../lib/cards";
import type { HandSummary } from "../../lib/handSummary";
import { playContext, UNPLAYABLE, whyNotPlayable } from "../../lib/legality";
import type { LandedTrick } from "../../lib/tricks";
import type { GameView } from "../../live/game";
import type { Presence } from "../../live/presence";
import { mutate } from "../../server/api";
import { BidBox, BlindNilChoice } from "./BidBox";
import { GameOver } from "./GameOver";
import { Hand } from "./Hand";
import { HandSummaryPanel, useHandSummary } from "./HandSummaryPanel";
import { SeatPlate, seatTitle } from "./SeatPlate";
import { SidePanels } from "./SidePanels";
import { TrickArea } from "./TrickArea";
import { useTableSounds } from "./useTableSounds";
import { useTrickHold } from "./useTrickHold";

/** Who is on turn, in a sentence: "East (Standard bot)", "South (alice)". */
function turnWho(view: GameView, seat: Seat): string {
  const state = view.seats.find((s) => s.seat === seat);
  return `${seatName(seat)} (${state?.isBot ? botShort(state.botLevel) : seatTitle(view, seat)})`;
}

function statusLine(view: GameView): string {
  const me = view.viewerSeat;
  const turn = view.turn;
  if (view.phase === "GAME_OVER") return view.winner ? `Game over: ${teamName(view.winner)} won.` : "Game over.";
  if (!turn) return "";
  const mine = turn === me;
  const who = turnWho(view, turn);
  switch (view.phase) {
    case "BIDDING":
      return mine ? "Your turn to bid." : `${who} is bidding.`;
    case "EXCHANGE":
      return mine ? "Your turn: pass two cards to your partner." : `${who} is passing cards.`;
    case "PLAYING":
      return mine ? "Your turn: play a card." : `${who} is to play.`;
    default:
      return "";
  }
}

/** Why a card of the hand cannot be pressed now (null: it can). */
function reasonFor(view: GameView, card: CardLike, myTurn: boolean, closed: boolean): string | null {
  if (closed) return "The table is closed.";
  switch (view.phase) {
    case "PLAYING":
      if (!myTurn) return view.turn ? `Wait for your turn: ${seatName(view.turn)} is to play.` : "Wait for your turn.";
      if (view.legalPlays.some((c) => sameCard(c, card))) return null;
      return whyNotPlayable(card, playContext(view)) ?? UNPLAYABLE;
    case "BIDDING":
      return "Cards are played once every seat has bid.";
    case "EXCHANGE":
      return "Wait while the cards are passed.";
    default:
      return "The game is over.";
  }
}

/** The table in play: the felt with its four seats and the trick, what the player may do
 * now over it, the hand below it, and the side panels. */
export function Board(props: {
  view: GameView;
  apply: (view: GameView) => void;
  /** The table is closed: shown as it ended, nothing can be played. */
  closed: boolean;
  presence: Presence;
  turnSeconds: number;
  /** The latest completed trick and scored hand the page saw happen. */
  landed: LandedTrick | null;
  scored: HandSummary | null;
  /** The seat shown at the bottom for one who does not sit here (an away player's own). */
  bottom?: Seat | null;
  log: ComponentChildren;
  chat: ComponentChildren;
}) {
  const { view } = props;
  const [error, setError] = useState<string | null>(null);
  const [picked, setPicked] = useState<CardLike[]>([]);
  const [busy, setBusy] = useState(false);
  const me = view.viewerSeat;
  const order = clockwiseFrom(me ?? props.bottom ?? "SOUTH");
  const myTurn = me !== null && view.turn === me && !props.closed;
  const tableId = view.tableId;
  const expectedVersion = view.version;
  const { held, release } = useTrickHold(props.landed);
  const { summary, dismiss } = useHandSummary(props.scored, held !== null && held.trick.hand === props.scored?.hand);
  useTableSounds(view, props.landed);

  const run = async (action: () => Promise<{ data?: GameView | undefined; error?: string | undefined }>): Promise<void> => {
    setBusy(true);
    setError(null);
    const result = await action();
    setBusy(false);
    if (result.data) props.apply(result.data);
    else if (result.error) setError(result.error);
  };
  const play = (card: CardLike): void => {
    release(); // the player moves on: the last trick is gathered now
    void run(async () => {
      const r = await mutate(PlayCardDocument, { tableId, card: { suit: card.suit, rank: card.rank }, expectedVersion });
      return r.data ? { data: r.data.playCard } : r;
    });
  };
  const bid = (value: BidInput): void =>
    void run(async () => {
      const r = await mutate(PlaceBidDocument, { tableId, bid: value, expectedVersion });
      return r.data ? { data: r.data.placeBid } : r;
    });
  const reveal = (): void =>
    void run(async () => {
      const r = await mutate(RevealHandDocument, { tableId, expectedVersion: null });
      return r.data ? { data: r.data.revealHand } : r;
    });
  const pass = (): void =>
    void run(async () => {
      const r = await mutate(PassCardsDocument, {
        tableId, expectedVersion, cards: picked.map((c) => ({ suit: c.suit, rank: c.rank })),
      });
      if (r.data) setPicked([]);
      return r.data ? { data: r.data.passCards } : r;
    });
  const toggle = (card: CardLike): void =>
    setPicked((old) => old.some((c) => sameCard(c, card)) ? old.filter((c) => !sameCard(c, card))
      : old.length >= 2 ? old : [...old, card]);

  const mode = view.phase === "PLAYING" && myTurn && !busy ? "play"
    : view.phase === "EXCHANGE" && myTurn ? "pick" : "view";
  const status = props.closed ? "The table is closed." : statusLine(view);
  const bidder = view.phase === "BIDDING" && !props.closed ? me : null;

  // What sits over the felt's middle: the last hand's summary, then what the player
  // decides now (a bid, Blind Nil, the exchange). The hand below stays in view.
  const over = [
    summary && <HandSummaryPanel key="summary" summary={summary} onClose={dismiss} />,
    bidder && view.handWithheld && (
      <BlindNilChoice key="blind" myTurn={myTurn} onReveal={reveal}
        onBlindNil={() => bid({ kind: "BLIND_NIL", tricks: null })} />
    ),
    bidder && myTurn && !view.handWithheld && <BidBox key={`bid-${view.handNumber}`} view={view} seat={bidder} onBid={bid} />,
    me && view.phase === "EXCHANGE" && myTurn && (
      <section key="exchange" class="panel exchange" aria-labelledby="exchange-title">
        <h2 id="exchange-title">Card exchange</h2>
        <p>Choose two cards to pass face down to your partner ({picked.length} of 2 chosen).</p>
        <button type="button" class="primary" data-action="pass" disabled={picked.length !== 2 || busy} onClick={pass}>
          Pass 2 cards
        </button>
      </section>
    ),
  ].filter(Boolean);

  return (
    <div class="game" data-version={view.version} data-phase={view.phase} data-turn={view.turn ?? ""}
      data-viewer={me ?? "spectator"}>
      <div class="main-col">
        <section class="board" aria-label={`Table, hand ${view.handNumber}`}
          data-turn-at={view.turn ? positionOf(order, view.turn) : undefined}>
          {order.map((seat) => (
            <SeatPlate key={seat} view={view} seat={seat} position={positionOf(order, seat)}
              presence={props.presence} turnSeconds={props.turnSeconds} />
          ))}
          <TrickArea view={view} order={order} held={held} />
          {over.length > 0 && <div class="felt-over">{over}</div>}
          <p class="spades-broken small" aria-live="off"><span aria-hidden="true">♠ </span>{view.spadesBroken ? "Spades broken" : "Spades not broken"}</p>
        </section>
        <p class={`status${myTurn ? " status-mine" : ""}`} role="status" data-status id="table-status" tabIndex={-1}>{status}</p>
        {error && <p class="error" role="alert">{error}</p>}
        {me && view.hand && view.hand.length > 0 && (
          <Hand cards={view.hand} mode={mode} legal={view.legalPlays} picked={picked}
            reasonOf={(card) => reasonFor(view, card, myTurn, props.closed)}
            onCard={(card) => (mode === "play" ? play(card) : mode === "pick" ? toggle(card) : undefined)} />
        )}
        {me && view.handWithheld && (
          <p class="muted withheld">Your 13 cards are face down until you choose.</p>
        )}
        {view.phase === "GAME_OVER" && <GameOver view={view} />}
      </div>
      <SidePanels view={view} log={props.log} chat={props.chat} />
    </div>
  );
}
