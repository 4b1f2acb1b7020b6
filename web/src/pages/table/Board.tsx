import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { CardFace } from "../../components/Cards";
import { PlayerLink } from "../../components/PlayerLink";
import {
  PassCardsDocument,
  PlaceBidDocument,
  PlayCardDocument,
  RequestRematchDocument,
  RevealHandDocument,
  type BidInput,
  type Seat,
} from "../../graphql/generated";
import { botName, clockwiseFrom, partnerOf, sameCard, seatName, teamName, teamOf, type CardLike } from "../../lib/cards";
import type { GameView } from "../../live/game";
import { connectedIn, type Presence } from "../../live/presence";
import { mutate } from "../../server/api";
import { navigate, tablePath } from "../../state/router";
import { BidBox, BlindNilChoice, bidWords } from "./BidBox";
import { Hand } from "./Hand";
import { PresenceTag } from "./Presence";
import { Scores } from "./Scores";
import { TurnClock } from "./TurnClock";

const POSITIONS = ["bottom", "left", "top", "right"] as const;

function seatTitle(view: GameView, seat: Seat): string {
  const state = view.seats.find((s) => s.seat === seat);
  if (!state?.playerId) return "Empty";
  return state.isBot ? botName(state.botLevel) : (state.username ?? "Player");
}

interface SeatProps {
  view: GameView;
  seat: Seat;
  position: string;
  presence: Presence;
  turnSeconds: number;
}

function SeatBox({ view, seat, position, presence, turnSeconds }: SeatProps) {
  const state = view.seats.find((s) => s.seat === seat);
  const mine = view.viewerSeat === seat;
  const partner = view.viewerSeat !== null && partnerOf(view.viewerSeat) === seat;
  const turn = view.turn === seat;
  const who = seatTitle(view, seat);
  const connected = state && !state.isBot ? connectedIn(presence, seat, state.playerId) : null;
  const away = state?.awayPlayer ? ` for ${state.awayPlayer.username}, who is away` : "";
  return (
    <div class={`seat seat-${position}${turn ? " on-turn" : ""}${mine ? " mine" : ""}`} data-seat={seat}
      aria-label={`${seatName(seat)}: ${who}${away}${mine ? " (you)" : partner ? " (partner)" : ""}${connected === false ? ", disconnected" : ""}${turn ? ", to act" : ""}`}
      role="group">
      <div class="seat-name">
        <strong>{seatName(seat)}</strong>{" "}
        {state?.playerId && !state.isBot && state.username ? <PlayerLink username={state.username} /> : who}
        {mine && <span class="badge">you</span>}
        {partner && <span class="badge">partner</span>}
        {view.dealer === seat && <span class="badge" title="Dealer">dealer</span>}
      </div>
      {state?.awayPlayer && <div class="small away-note" data-away-player={state.awayPlayer.username}>for {state.awayPlayer.username} (away)</div>}
      <PresenceTag connected={connected} />
      <div class="seat-stats small">
        <span>Bid: <b data-bid-of={seat}>{state?.bid ? bidWords(state.bid) : "–"}</b></span>
        <span>Tricks: <b>{state?.tricksWon ?? 0}</b></span>
        {!mine && <span>{state?.cardCount ?? 0} cards</span>}
      </div>
      {turn && (
        <div class="turn-flag">
          <span aria-hidden="true">to act</span>
          {view.turnDeadline && <TurnClock deadline={view.turnDeadline} turnSeconds={turnSeconds} mine={mine} />}
        </div>
      )}
    </div>
  );
}

function TrickArea({ view, order }: { view: GameView; order: Seat[] }) {
  const showingLast = view.currentTrick.length === 0 && view.lastTrick !== null && view.phase === "PLAYING";
  const plays = showingLast && view.lastTrick ? view.lastTrick.plays : view.currentTrick;
  return (
    <div class={`trick${showingLast ? " trick-done" : ""}`} role="group"
      aria-label={showingLast && view.lastTrick ? `Last trick, won by ${seatName(view.lastTrick.winner)}` : "Trick in progress"}
      data-trick={showingLast ? "last" : "current"}>
      {plays.map((play) => (
        <div key={play.seat} class={`play play-${POSITIONS[order.indexOf(play.seat)] ?? "top"}`}
          data-played-by={play.seat}>
          <CardFace card={play.card} />
          <span class="sr-only">played by {seatName(play.seat)}</span>
        </div>
      ))}
      {showingLast && view.lastTrick && <div class="trick-note small">{seatName(view.lastTrick.winner)} won</div>}
    </div>
  );
}

function statusLine(view: GameView): string {
  const me = view.viewerSeat;
  const turn = view.turn;
  if (view.phase === "GAME_OVER") return view.winner ? `Game over: ${teamName(view.winner)} won.` : "Game over.";
  if (!turn) return "";
  const mine = turn === me;
  const who = `${seatName(turn)} (${seatTitle(view, turn)})`;
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

/** The table in play: seats, the trick, the hand and what the player may do now. */
export function Board(props: {
  view: GameView;
  apply: (view: GameView) => void;
  onLeave: (() => void) | null;
  /** The table is closed: shown as it ended, nothing can be played. */
  closed: boolean;
  presence: Presence;
  turnSeconds: number;
  /** The seat shown at the bottom for one who does not sit here (an away player's own). */
  bottom?: Seat | null;
  aside?: ComponentChildren;
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

  const run = async (action: () => Promise<{ data?: GameView | undefined; error?: string | undefined }>): Promise<void> => {
    setBusy(true);
    setError(null);
    const result = await action();
    setBusy(false);
    if (result.data) props.apply(result.data);
    else if (result.error) setError(result.error);
  };
  const play = (card: CardLike): void =>
    void run(async () => {
      const r = await mutate(PlayCardDocument, { tableId, card: { suit: card.suit, rank: card.rank }, expectedVersion });
      return r.data ? { data: r.data.playCard } : r;
    });
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

  return (
    <div class="game" data-version={view.version} data-phase={view.phase} data-turn={view.turn ?? ""}
      data-viewer={me ?? "spectator"}>
      <div class="main-col">
      <section class="board" aria-label={`Table, hand ${view.handNumber}`}>
        {order.map((seat, i) => (
          <SeatBox key={seat} view={view} seat={seat} position={POSITIONS[i] ?? "top"}
            presence={props.presence} turnSeconds={props.turnSeconds} />
        ))}
        <TrickArea view={view} order={order} />
        <p class="spades-broken small" aria-live="off"><span aria-hidden="true">♠ </span>{view.spadesBroken ? "Spades broken" : "Spades not broken"}</p>
      </section>
      <p class={`status${myTurn ? " status-mine" : ""}`} role="status" data-status id="table-status" tabIndex={-1}>{status}</p>
      {error && <p class="error" role="alert">{error}</p>}
      {me && view.phase === "BIDDING" && view.handWithheld && !props.closed && (
        <BlindNilChoice myTurn={myTurn} onReveal={reveal}
          onBlindNil={() => bid({ kind: "BLIND_NIL", tricks: null })} />
      )}
      {me && view.phase === "BIDDING" && myTurn && !view.handWithheld && (
        <BidBox key={`${view.handNumber}`} view={view} seat={me} onBid={bid} />
      )}
      {me && view.phase === "EXCHANGE" && myTurn && (
        <section class="panel exchange" aria-labelledby="exchange-title">
          <h2 id="exchange-title">Card exchange</h2>
          <p>Choose two cards to pass face down to your partner ({picked.length} of 2 chosen).</p>
          <button type="button" class="primary" data-action="pass" disabled={picked.length !== 2 || busy} onClick={pass}>
            Pass 2 cards
          </button>
        </section>
      )}
      {me && view.hand && view.hand.length > 0 && (
        <Hand cards={view.hand} mode={mode} legal={view.legalPlays} picked={picked}
          onCard={(card) => (mode === "play" ? play(card) : mode === "pick" ? toggle(card) : undefined)} />
      )}
      {me && view.handWithheld && (
        <p class="muted withheld">Your 13 cards are face down until you choose.</p>
      )}
      {view.phase === "GAME_OVER" && <GameOver view={view} />}
      {props.onLeave && view.phase !== "GAME_OVER" && (
        <p><button type="button" class="danger" onClick={props.onLeave}>Leave table (a bot takes your seat)</button></p>
      )}
      </div>
      <div class="side-col">
        <Scores view={view} />
        {props.aside}
      </div>
    </div>
  );
}

function GameOver({ view }: { view: GameView }) {
  const mine = view.viewerSeat ? teamOf(view.viewerSeat) : null;
  const won = mine !== null && view.winner === mine;
  const [error, setError] = useState<string | null>(null);
  const humans = view.seats.filter((s) => s.playerId && !s.isBot).map((s) => s.seat);
  const asked = view.rematchRequests.filter((seat) => humans.includes(seat));
  const iAsked = view.viewerSeat !== null && view.rematchRequests.includes(view.viewerSeat);
  const next = view.nextTableId;
  // Seated players follow the rematch to its table; spectators get a link.
  useEffect(() => {
    if (next && view.viewerSeat) navigate(tablePath(next));
  }, [next]);
  const rematch = async (): Promise<void> => {
    setError(null);
    const result = await mutate(RequestRematchDocument, { tableId: view.tableId });
    if (result.data === undefined) setError(result.error);
    else if (result.data.requestRematch.id !== view.tableId) navigate(tablePath(result.data.requestRematch.id));
  };
  return (
    <section class="panel game-over" aria-labelledby="over-title" data-game-over>
      <h2 id="over-title">{view.winner ? `${teamName(view.winner)} win` : "Game over"}</h2>
      {mine && <p class="big">{won ? "You won!" : "You lost this one."}</p>}
      <p>
        {view.teams.map((t) => `${teamName(t.team)} ${t.score}`).join(" · ")}
      </p>
      {humans.length > 0 && (
        <p class="muted" data-rematch-asked={asked.length}>
          Rematch: {asked.length} of {humans.length} player{humans.length === 1 ? "" : "s"} asked
          {asked.length ? ` (${asked.map(seatName).join(", ")})` : ""}.
        </p>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      <p class="actions">
        {view.viewerSeat && !next && (
          <button type="button" class="primary" data-action="rematch" disabled={iAsked} onClick={() => void rematch()}>
            {iAsked ? "Waiting for the others…" : "Play again"}
          </button>
        )}
        {next && !view.viewerSeat && (
          <button type="button" class="primary" onClick={() => navigate(tablePath(next))}>Watch the rematch</button>
        )}
        <button type="button" onClick={() => navigate("/")}>Back to the lobby</button>
      </p>
    </section>
  );
}
