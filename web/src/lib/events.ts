// Game changes in words: what the table's log shows and what screen readers hear.
import type { GameEvent, GameUpdatesSubscription } from "../graphql/generated";
import { botName, cardName, seatName, teamName } from "./cards";
import { signed } from "./handSummary";

export type Update = GameUpdatesSubscription["gameUpdates"];

/** Changes that alter the table itself (seats, host, options, status), not only its game. */
export const TABLE_EVENTS: ReadonlySet<GameEvent> = new Set<GameEvent>([
  "SEAT_TAKEN",
  "SEAT_LEFT",
  "PLAYER_KICKED",
  "TABLE_UPDATED",
  "HOST_CHANGED",
  "PLAYER_REPLACED",
  "SEAT_RECLAIMED",
  "GAME_STARTED",
  "GAME_OVER",
  "TABLE_CLOSED",
]);

function bidText(update: Update): string {
  const bid = update.view.seats.find((s) => s.seat === update.seat)?.bid;
  if (!bid) return "";
  return bid.kind === "TRICKS" ? ` ${bid.tricks ?? 0}` : bid.kind === "NIL" ? " Nil" : " Blind Nil";
}

function played(update: Update): string {
  const view = update.view;
  const play = view.currentTrick.find((p) => p.seat === update.seat) ??
    view.lastTrick?.plays.find((p) => p.seat === update.seat);
  return play ? ` the ${cardName(play.card)}` : "";
}

/** "North–South +42, score 42; East–West −40, score −40": a scored hand's results. */
function handResults(update: Update): string {
  const view = update.view;
  return view.history.filter((h) => h.handNumber === view.handNumber)
    .map((h) => `${teamName(h.team)} ${signed(h.points)}, score ${h.scoreAfter}`).join("; ");
}

/** The change in a sentence, or null for one not worth telling (a SNAPSHOT). */
export function describe(update: Update): string | null {
  const who = update.seat ? seatName(update.seat) : "";
  const view = update.view;
  const state = view.seats.find((s) => s.seat === update.seat);
  switch (update.event) {
    case "CARD_PLAYED":
      return `${who} played${played(update)}.`;
    case "TRICK_WON":
      return view.lastTrick ? `${seatName(view.lastTrick.winner)} won the trick.` : null;
    case "BID_PLACED":
      return `${who} bid${bidText(update)}.`;
    case "HAND_REVEALED":
      return `${who} looked at their cards.`;
    case "CARDS_PASSED":
      return `${who} passed two cards.`;
    case "HAND_SCORED":
      return `Hand ${view.handNumber} scored: ${handResults(update)}.`;
    case "HAND_DEALT":
      return `Hand ${view.handNumber} is dealt.`;
    case "GAME_OVER":
      return view.winner ? `Game over: ${teamName(view.winner)} won.` : "Game over.";
    case "GAME_STARTED":
      return "The game has started.";
    case "SEAT_TAKEN":
      return `${who}: ${state?.isBot ? botName(state.botLevel) : (state?.username ?? "someone")} sat down.`;
    case "SEAT_LEFT":
      return `${who} left.`;
    case "PLAYER_KICKED":
      return `The host freed the ${who} seat.`;
    case "TABLE_UPDATED":
      return "The host changed the table's options.";
    case "HOST_CHANGED":
      return `${state?.username ?? who} is now the host.`;
    case "TURN_TIMED_OUT":
      return `Time ran out for ${who}: the server moves for them.`;
    case "PLAYER_REPLACED":
      return state?.awayPlayer
        ? `${botName(state.botLevel)} took the ${who} seat while ${state.awayPlayer.username} is away.`
        : `${botName(state?.botLevel)} took the ${who} seat for good.`;
    case "SEAT_RECLAIMED":
      return `${state?.username ?? "The player"} took the ${who} seat back.`;
    case "REMATCH_REQUESTED":
      return `${who} asked for a rematch.`;
    case "REMATCH_STARTED":
      return "The rematch has started.";
    case "TABLE_CLOSED":
      return "The table is closed: no more moves.";
    default:
      return null;
  }
}
