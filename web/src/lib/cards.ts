// Cards, seats and teams in words and symbols. Suits are told apart by shape
// (the glyph), never by colour alone; the four-colour deck is an extra.
import type { BotLevel, Rank, Seat, Suit, Team } from "../graphql/generated";

export interface CardLike {
  suit: Suit;
  rank: Rank;
}

export const SUITS: readonly Suit[] = ["SPADES", "HEARTS", "CLUBS", "DIAMONDS"];
export const RANKS: readonly Rank[] = [
  "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN", "JACK", "QUEEN", "KING", "ACE",
];
export const SEATS: readonly Seat[] = ["NORTH", "EAST", "SOUTH", "WEST"];

const SUIT_GLYPH: Record<Suit, string> = { SPADES: "♠", HEARTS: "♥", CLUBS: "♣", DIAMONDS: "♦" };
const RANK_SHORT: Record<Rank, string> = {
  TWO: "2", THREE: "3", FOUR: "4", FIVE: "5", SIX: "6", SEVEN: "7", EIGHT: "8", NINE: "9",
  TEN: "10", JACK: "J", QUEEN: "Q", KING: "K", ACE: "A",
};

export const suitGlyph = (suit: Suit): string => SUIT_GLYPH[suit];
export const rankShort = (rank: Rank): string => RANK_SHORT[rank];

/** "Queen of hearts": what a screen reader says for a card. */
export function cardName(card: CardLike): string {
  const rank = card.rank.charAt(0) + card.rank.slice(1).toLowerCase();
  return `${rank} of ${card.suit.toLowerCase()}`;
}

/** A stable key such as "QUEEN-HEARTS" (also the `data-card` attribute tests read). */
export const cardKey = (card: CardLike): string => `${card.rank}-${card.suit}`;

export const sameCard = (a: CardLike, b: CardLike): boolean => a.suit === b.suit && a.rank === b.rank;

/** The order docs/rules.md shows a hand in: spades, hearts, clubs, diamonds; ace high. */
export function sortHand<T extends CardLike>(cards: readonly T[]): T[] {
  return [...cards].sort(
    (a, b) => SUITS.indexOf(a.suit) - SUITS.indexOf(b.suit) || RANKS.indexOf(b.rank) - RANKS.indexOf(a.rank),
  );
}

export const seatName = (seat: Seat): string => seat.charAt(0) + seat.slice(1).toLowerCase();

export const partnerOf = (seat: Seat): Seat => SEATS[(SEATS.indexOf(seat) + 2) % 4] ?? seat;

export const teamOf = (seat: Seat): Team => (seat === "NORTH" || seat === "SOUTH" ? "NORTH_SOUTH" : "EAST_WEST");

export const teamName = (team: Team): string => (team === "NORTH_SOUTH" ? "North–South" : "East–West");

/** Seats clockwise starting from `seat` (the viewer sits at the bottom of the table). */
export function clockwiseFrom(seat: Seat): Seat[] {
  const start = SEATS.indexOf(seat);
  return [0, 1, 2, 3].map((i) => SEATS[(start + i) % 4] ?? seat);
}

const BOT_WORDS: Record<BotLevel, string> = { BASIC: "Basic", STANDARD: "Standard", EXPERT: "Expert" };
export const BOT_LEVELS: readonly BotLevel[] = ["BASIC", "STANDARD", "EXPERT"];
export const botLevelName = (level: BotLevel): string => BOT_WORDS[level];

/** "Expert bot": a bot in a sentence, its level when the server tells it. */
export function botShort(level: BotLevel | null | undefined): string {
  return level ? `${BOT_WORDS[level]} bot` : "bot";
}

/** "1 card", "3 cards": a count and its noun. */
export const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** Where each seat sits around the table, from the viewer's seat (bottom) clockwise. */
export const POSITIONS = ["bottom", "left", "top", "right"] as const;
export type Position = (typeof POSITIONS)[number];

/** Where `seat` sits for one whose seats run clockwise as `order` (bottom first). */
export const positionOf = (order: readonly Seat[], seat: Seat): Position => POSITIONS[order.indexOf(seat)] ?? "top";

/** "Bot (Expert)": a bot seat in words, its level when the server tells it. */
export function botName(level: BotLevel | null | undefined): string {
  return level ? `Bot (${BOT_WORDS[level]})` : "Bot";
}
