import { PlayerLink } from "../../components/PlayerLink";
import type { Seat } from "../../graphql/generated";
import { botName, botShort, counted, partnerOf, seatName, type Position } from "../../lib/cards";
import type { GameView } from "../../live/game";
import { connectedIn, type Presence } from "../../live/presence";
import { bidWords } from "./BidBox";
import { PresenceTag } from "./Presence";
import { TurnClock } from "./TurnClock";

/** Who sits in `seat`: a bot's level, a player's name, or "Empty". */
export function seatTitle(view: GameView, seat: Seat): string {
  const state = view.seats.find((s) => s.seat === seat);
  if (!state?.playerId) return "Empty";
  return state.isBot ? botName(state.botLevel) : (state.username ?? "Player");
}

/** One seat at its side of the felt: who sits there, the bid and tricks, the turn clock. */
export function SeatPlate(props: { view: GameView; seat: Seat; position: Position; presence: Presence; turnSeconds: number }) {
  const { view, seat, position } = props;
  const state = view.seats.find((s) => s.seat === seat);
  const mine = view.viewerSeat === seat;
  const partner = view.viewerSeat !== null && partnerOf(view.viewerSeat) === seat;
  const turn = view.turn === seat && view.phase !== "GAME_OVER";
  const who = seatTitle(view, seat);
  const connected = state && !state.isBot ? connectedIn(props.presence, seat, state.playerId) : null;
  const away = state?.awayPlayer ? ` for ${state.awayPlayer.username}, who is away` : "";
  const cards = state?.cardCount ?? 0;
  return (
    <div class={`seat seat-${position}${turn ? " on-turn" : ""}${mine ? " mine" : ""}`} data-seat={seat}
      aria-label={`${seatName(seat)}: ${who}${away}${mine ? " (you)" : partner ? " (partner)" : ""}${connected === false ? ", disconnected" : ""}${turn ? ", to act" : ""}`}
      role="group">
      <div class="seat-name">
        <strong>{seatName(seat)}</strong>{" "}
        <span class="seat-who">
          {state?.playerId && !state.isBot && state.username ? <PlayerLink username={state.username} />
            : state?.isBot ? botShort(state.botLevel) : who}
        </span>
        {mine && <span class="badge">you</span>}
        {partner && <span class="badge">partner</span>}
        {view.dealer === seat && <span class="badge" title="Dealer">dealer</span>}
      </div>
      {state?.awayPlayer && <div class="small away-note" data-away-player={state.awayPlayer.username}>for {state.awayPlayer.username} (away)</div>}
      <PresenceTag connected={connected} />
      <div class="seat-stats small">
        <span>Bid <b data-bid-of={seat}>{state?.bid ? bidWords(state.bid) : "–"}</b></span>
        <span>Won <b data-tricks-of={seat}>{state?.tricksWon ?? 0}</b></span>
        {!mine && <span class="seat-cards">{counted(cards, "card")}</span>}
      </div>
      {turn && (
        <div class="turn-flag">
          <span aria-hidden="true">to act</span>
          {view.turnDeadline && <TurnClock deadline={view.turnDeadline} turnSeconds={props.turnSeconds} mine={mine} />}
        </div>
      )}
    </div>
  );
}
