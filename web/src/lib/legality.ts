// Why a card of the hand may not be played now, in the words of the rule the server
// applies (RULES.md, Play): follow the led suit; no spade on the first trick while another
// suit is held; no spade lead before spades are broken unless the hand is all spades.
// The server's `legalPlays` decides what is enabled; these words only explain it.
import type { Suit } from "../graphql/generated";
import type { CardLike } from "./cards";

/** What the rules look at to judge a card. */
export interface PlayContext {
  hand: readonly CardLike[];
  /** The suit of the trick's first card, or null when leading. */
  led: Suit | null;
  /** No trick of this hand is complete yet. */
  firstTrick: boolean;
  spadesBroken: boolean;
}

/** A view's trick state as a PlayContext (its seats' tricks count the completed tricks). */
export function playContext(view: {
  hand?: readonly CardLike[] | null;
  currentTrick: readonly { card: CardLike }[];
  seats: readonly { tricksWon: number }[];
  spadesBroken: boolean;
}): PlayContext {
  return {
    hand: view.hand ?? [],
    led: view.currentTrick[0]?.card.suit ?? null,
    firstTrick: view.seats.every((s) => s.tricksWon === 0),
    spadesBroken: view.spadesBroken,
  };
}

/** The fallback when the rules here find nothing (the server's word is final). */
export const UNPLAYABLE = "This card cannot be played now.";

/**
 * Why `card` may not be played in `context`, or null when the rules allow it. The
 * sentences are the server's ILLEGAL_PLAY messages, capitalised, with the suit in words.
 */
export function whyNotPlayable(card: CardLike, context: PlayContext): string | null {
  const { hand, led } = context;
  const holdsOther = hand.some((c) => c.suit !== "SPADES");
  if (led !== null) {
    if (card.suit !== led && hand.some((c) => c.suit === led)) {
      return `You must follow suit (${led.toLowerCase()}).`;
    }
    if (context.firstTrick && card.suit === "SPADES" && holdsOther) {
      return "No spade on the first trick while you hold another suit.";
    }
    return null;
  }
  if (card.suit !== "SPADES" || !holdsOther) return null;
  if (context.firstTrick) return "No spade lead on the first trick unless your hand is all spades.";
  if (!context.spadesBroken) return "Spades are not broken: lead another suit.";
  return null;
}
