// Completed tricks as the client follows them: which trick of which hand a view's
// `lastTrick` is, so each one is shown once, in order, however the views arrive (a
// mutation's answer may be ahead of the stream, the stream replays after a drop).
import type { Seat } from "../graphql/generated";
import type { CardLike } from "./cards";

export interface Play {
  seat: Seat;
  card: CardLike;
}

/** One completed trick: the `number`th (1 to 13) of hand `hand`. */
export interface LandedTrick {
  hand: number;
  number: number;
  plays: readonly Play[];
  winner: Seat;
}

interface TrickView {
  handNumber: number;
  seats: readonly { tricksWon: number }[];
  lastTrick?: { winner: Seat; plays: readonly Play[] } | null;
}

/** The view's last completed trick with its place in the game, or null. */
export function lastLanded(view: TrickView): LandedTrick | null {
  if (!view.lastTrick) return null;
  const number = view.seats.reduce((n, s) => n + s.tricksWon, 0);
  return { hand: view.handNumber, number, plays: view.lastTrick.plays, winner: view.lastTrick.winner };
}

/** Whether trick `a` came after trick `b` in the game (any trick comes after none). */
export function landedAfter(a: LandedTrick, b: LandedTrick | null): boolean {
  return b === null || a.hand > b.hand || (a.hand === b.hand && a.number > b.number);
}

export const trickId = (trick: LandedTrick): string => `${trick.hand}:${trick.number}`;
