import { useState } from "preact/hooks";
import type { BidInput, Seat } from "../../graphql/generated";
import { counted, partnerOf, seatName } from "../../lib/cards";
import type { GameView } from "../../live/game";

const NUMBERS = Array.from({ length: 14 }, (_, i) => i);

function bidWords(bid: { kind: string; tricks: number | null }): string {
  return bid.kind === "TRICKS" ? String(bid.tricks) : bid.kind === "NIL" ? "Nil" : "Blind Nil";
}

/**
 * The bid box. The first bidder of a team bids their own tricks; the second sees the
 * partner's bid and enters the TEAM TOTAL, with "your share" worked out beside it.
 */
export function BidBox({ view, seat, onBid }: { view: GameView; seat: Seat; onBid: (bid: BidInput) => void }) {
  const partner = partnerOf(seat);
  const partnerBid = view.seats.find((s) => s.seat === partner)?.bid ?? null;
  const partnerTricks = partnerBid?.kind === "TRICKS" ? (partnerBid.tricks ?? 0) : null;
  const spades = view.hand?.filter((c) => c.suit === "SPADES").length ?? 0;
  const [chosen, setChosen] = useState<number | null>(null);

  const heading = partnerBid === null
    ? "You bid first for your team: how many tricks will you take?"
    : partnerTricks !== null
      ? `Your partner (${seatName(partner)}) bid ${partnerTricks}. Enter your team's total.`
      : `Your partner (${seatName(partner)}) bid ${bidWords(partnerBid)}: your number alone is the team's target.`;

  let hint = "Choose a number.";
  if (chosen !== null) {
    if (partnerTricks === null) hint = partnerBid ? `Team target ${chosen}.` : `You bid ${chosen} for yourself.`;
    else {
      const share = chosen - partnerTricks;
      hint = share >= 0
        ? `Your partner bid ${partnerTricks}; your team total ${chosen} means you need ${counted(share, "trick")}.`
        : `Team total ${chosen} is below your partner's ${partnerTricks}: tricks above ${chosen} become bags.`;
    }
  }
  // The others' bids so far, for a box that may cover their seats on a small screen.
  const others = view.seats.filter((s) => s.seat !== seat && s.seat !== partner && s.bid)
    .map((s) => `${seatName(s.seat)} ${s.bid ? bidWords(s.bid) : ""}`);

  return (
    <section class="bid-box panel" aria-labelledby="bid-title">
      <h2 id="bid-title">{partnerBid === null ? "Your bid" : "Team total"}</h2>
      <p>{heading}</p>
      <p class="muted small">You hold {counted(spades, "spade")}.{others.length > 0 ? ` Opponents: ${others.join(", ")}.` : ""}</p>
      <div class="bid-grid" role="group" aria-label={partnerTricks !== null ? "Team total" : "Tricks"}>
        {NUMBERS.map((n) => (
          <button type="button" key={n} data-bid={n} aria-pressed={chosen === n} onClick={() => setChosen(n)}
            title={partnerTricks !== null ? `Team total ${n}, your share ${n - partnerTricks}` : counted(n, "trick")}>
            {n}
          </button>
        ))}
      </div>
      <p class="hint" aria-live="polite" data-hint>{hint}</p>
      <div class="actions">
        <button type="button" class="primary" disabled={chosen === null} data-action="place-bid"
          onClick={() => chosen !== null && onBid({ kind: "TRICKS", tricks: chosen })}>
          {chosen === null ? "Place bid" : `Bid ${chosen}`}
        </button>
        <button type="button" data-action="bid-nil" onClick={() => onBid({ kind: "NIL", tricks: null })}>Bid Nil</button>
      </div>
    </section>
  );
}

/** A withheld hand: reveal the cards (giving up Blind Nil) or bid Blind Nil unseen. */
export function BlindNilChoice(props: { myTurn: boolean; onReveal: () => void; onBlindNil: () => void }) {
  return (
    <section class="bid-box panel" aria-labelledby="blind-title">
      <h2 id="blind-title">Blind Nil?</h2>
      <p>Your team is 100 or more points behind: you may bid Blind Nil before looking at your cards
        (+100 if you take no trick, −100 otherwise), then pass two cards with your partner.</p>
      <div class="actions">
        <button type="button" class="primary" data-action="reveal" onClick={props.onReveal}>Show my cards</button>
        <button type="button" data-action="blind-nil" disabled={!props.myTurn} onClick={props.onBlindNil}>
          Bid Blind Nil
        </button>
      </div>
      {!props.myTurn && <p class="muted small">You can bid Blind Nil when it is your turn.</p>}
    </section>
  );
}

export { bidWords };
