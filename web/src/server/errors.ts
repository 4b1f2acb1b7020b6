// Errors in words: every refusal is told from its `extensions.code`, never from a stack trace.
import type { CombinedError } from "@urql/core";

const WORDS: Record<string, string> = {
  UNAUTHENTICATED: "You are not signed in (or your session ended). Please sign in again.",
  FORBIDDEN: "You are not allowed to do that here.",
  NOT_FOUND: "That table or player does not exist, or you cannot see it.",
  BAD_USER_INPUT: "Something in that request is not right.",
  NOT_YOUR_TURN: "It is not your turn.",
  WRONG_PHASE: "That cannot be done at this point of the game.",
  ILLEGAL_PLAY: "That card may not be played now (follow suit; spades not yet broken).",
  CARD_NOT_IN_HAND: "You do not hold that card.",
  INVALID_BID: "That bid is not allowed.",
  NOT_ELIGIBLE: "You are not eligible for that (Blind Nil needs your team 100 points behind).",
  SEAT_TAKEN: "Someone already sits there.",
  ALREADY_SEATED: "You already have a seat at this table.",
  TABLE_FULL: "The table is full.",
  CONFLICT: "The game moved on meanwhile; the screen shows the latest state.",
  RATE_LIMITED: "Too many requests: wait a moment and try again.",
  UNAVAILABLE: "The server is briefly unavailable. Try again in a moment.",
  QUERY_TOO_COMPLEX: "The request was too large for the server.",
};

/** The user-facing sentence for a failed operation. */
export function errorWords(error: CombinedError): string {
  if (error.networkError) {
    return navigator.onLine ? "The server cannot be reached right now." : "You are offline.";
  }
  const first = error.graphQLErrors[0];
  const code = first?.extensions["code"];
  // A banned player's sign-in: the server's words say it all (and why).
  if (code === "FORBIDDEN" && first?.message.startsWith("this account is banned")) {
    return `This account is banned${first.message.slice("this account is banned".length)}.`;
  }
  if (typeof code === "string") {
    const words = WORDS[code];
    // The server's message says which rule was broken; keep it after the general words.
    if (words) return first?.message ? `${words} (${first.message})` : words;
  }
  return first?.message ?? "Something went wrong.";
}

/** The code of a failed operation, if the server sent one. */
export function errorCode(error: CombinedError): string | null {
  const code = error.graphQLErrors[0]?.extensions["code"];
  return typeof code === "string" ? code : null;
}
