// The result of one hand, team by team, as shown between hands: from the view of the
// change that scored it (HAND_SCORED), whose seats still hold that hand's bids and tricks.
import type { BidKind, Seat, Team } from "../graphql/generated";
import { SEATS, teamOf } from "./cards";

// RULES.md, Scoring: a Nil is worth 50, a Blind Nil 100, won or lost.
const NIL_POINTS: Partial<Record<BidKind, number>> = { NIL: 50, BLIND_NIL: 100 };

export interface NilResult {
  seat: Seat;
  kind: "NIL" | "BLIND_NIL";
  made: boolean;
  points: number;
}

export interface TeamSummary {
  team: Team;
  /** The team's target; null when both bid nil. */
  target: number | null;
  tricks: number;
  /** Whether the target was reached (null without one). */
  made: boolean | null;
  nils: NilResult[];
  /** The hand's score change, nil results and bag penalty included. */
  points: number;
  bags: number;
  bagPenalty: number;
  scoreAfter: number;
  bagsAfter: number;
}

export interface HandSummary {
  hand: number;
  teams: TeamSummary[];
}

interface ScoredView {
  handNumber: number;
  seats: readonly { seat: Seat; tricksWon: number; bid?: { kind: BidKind } | null }[];
  history: readonly {
    handNumber: number;
    team: Team;
    target?: number | null;
    tricks: number;
    points: number;
    bags: number;
    bagPenalty: number;
    scoreAfter: number;
    bagsAfter: number;
  }[];
}

function nilsOf(view: ScoredView, team: Team): NilResult[] {
  const nils: NilResult[] = [];
  for (const seat of SEATS.filter((s) => teamOf(s) === team)) {
    const state = view.seats.find((s) => s.seat === seat);
    const kind = state?.bid?.kind;
    if (!state || (kind !== "NIL" && kind !== "BLIND_NIL")) continue;
    const made = state.tricksWon === 0;
    const value = NIL_POINTS[kind] ?? 0;
    nils.push({ seat, kind, made, points: made ? value : -value });
  }
  return nils;
}

/** The summary of the hand a HAND_SCORED view has just scored (null if not in its history). */
export function summarize(view: ScoredView): HandSummary | null {
  const rows = view.history.filter((h) => h.handNumber === view.handNumber);
  if (rows.length === 0) return null;
  const teams = rows.map((row): TeamSummary => {
    const target = row.target ?? null;
    return {
      team: row.team,
      target,
      tricks: row.tricks,
      made: target === null || target < 1 ? null : row.tricks >= target,
      nils: nilsOf(view, row.team),
      points: row.points,
      bags: row.bags,
      bagPenalty: row.bagPenalty,
      scoreAfter: row.scoreAfter,
      bagsAfter: row.bagsAfter,
    };
  });
  return { hand: view.handNumber, teams };
}

/** "+52", "−40", "0": a score change with its sign. */
export const signed = (points: number): string => (points > 0 ? `+${points}` : points < 0 ? `−${-points}` : "0");
