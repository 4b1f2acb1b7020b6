// A table's options: which ones go together, their defaults, and their words.
import type { JoinPolicy, TableSummaryFragment, Visibility } from "../graphql/generated";
import { botLevelName } from "./cards";

export const DEFAULT_TURN_SECONDS = 30;

export const VISIBILITIES: readonly Visibility[] = ["PUBLIC", "FRIENDS_ONLY", "PRIVATE"];

/** The join policies a visibility allows: never more open than who may see the table. */
export const JOIN_POLICIES: Record<Visibility, JoinPolicy[]> = {
  PUBLIC: ["OPEN", "FRIENDS_ONLY", "INVITE_ONLY"],
  FRIENDS_ONLY: ["FRIENDS_ONLY", "INVITE_ONLY"],
  PRIVATE: ["INVITE_ONLY"],
};

/** The turn clock of a table in words: "30 s per turn", or "no turn clock". */
export function clockWords(turnSeconds: number): string {
  if (turnSeconds === 0) return "no turn clock";
  return turnSeconds % 60 === 0 ? `${turnSeconds / 60} min per turn` : `${turnSeconds} s per turn`;
}

/** What a table's header says of its clock and its stand-in bots. */
export function liveOptionWords(table: Pick<TableSummaryFragment, "turnSeconds" | "replacementBot">): string {
  return `${clockWords(table.turnSeconds)} · absent players: ${botLevelName(table.replacementBot)} bot`;
}

/** The number typed in a turn-seconds field (the browser has checked its range). */
export const turnSecondsOf = (value: string): number => (value.trim() === "" ? DEFAULT_TURN_SECONDS : Number(value));
