import { useEffect, useState } from "preact/hooks";
import { counted, seatName, teamName } from "../../lib/cards";
import { signed, type HandSummary, type NilResult, type TeamSummary } from "../../lib/handSummary";

/** How long the summary of a hand stays on the felt unless dismissed (ms). */
export const SUMMARY_MS = 8000;

const nilWords = (nil: NilResult): string =>
  `${seatName(nil.seat)} ${nil.kind === "NIL" ? "Nil" : "Blind Nil"} ${nil.made ? "made" : "failed"} ${signed(nil.points)}`;

function contractWords(team: TeamSummary): string {
  const tricks = counted(team.tricks, "trick");
  const result = team.target === null || team.made === null ? `${tricks}, no target`
    : team.made ? `made ${team.target} with ${tricks}` : `set: ${tricks} of ${team.target}`;
  return `${result}, ${signed(team.points)} (score ${team.scoreAfter})`;
}

/**
 * The hand just scored, shown once its last trick is gathered (`holding`: not yet); it
 * goes away on a click or after SUMMARY_MS. It covers nothing the player needs: the next
 * hand's bidding goes on, and the bid box shows beside it.
 */
export function useHandSummary(scored: HandSummary | null, holding: boolean): { summary: HandSummary | null; dismiss: () => void } {
  const [dismissed, setDismissed] = useState<number | null>(null);
  const visible = scored !== null && dismissed !== scored.hand && !holding;
  const hand = scored?.hand ?? null;
  useEffect(() => {
    if (!visible || hand === null) return;
    const timer = setTimeout(() => setDismissed(hand), SUMMARY_MS);
    return () => clearTimeout(timer);
  }, [visible, hand]);
  return { summary: visible ? scored : null, dismiss: () => setDismissed(hand) };
}

/** The summary of one hand, team by team: target, tricks, nils, points, bags, score. */
export function HandSummaryPanel({ summary, onClose }: { summary: HandSummary; onClose: () => void }) {
  const rows: [string, (t: TeamSummary) => string][] = [
    ["Target", (t) => (t.target === null ? "double nil" : String(t.target))],
    ["Tricks", (t) => String(t.tricks)],
    ["Nil", (t) => (t.nils.length ? t.nils.map(nilWords).join("; ") : "–")],
    ["Points", (t) => signed(t.points)],
    ["Bags", (t) => `${t.bags} (${t.bagsAfter} in all)`],
    ["Bag penalty", (t) => (t.bagPenalty ? signed(-t.bagPenalty) : "–")],
    ["Score", (t) => String(t.scoreAfter)],
  ];
  const title = `hand-${summary.hand}-summary`;
  return (
    <section class="panel hand-summary" aria-labelledby={title} data-hand-summary={summary.hand}>
      <div class="hand-summary-head">
        <h2 id={title}>Hand {summary.hand}</h2>
        <button type="button" class="small" data-action="close-summary" onClick={onClose}>Continue</button>
      </div>
      <p class="small">
        {summary.teams.map((t) => `${teamName(t.team)} ${contractWords(t)}.`).join(" ")}
      </p>
      <table class="summary-table">
        <thead>
          <tr><td /><th scope="col">{teamName("NORTH_SOUTH")}</th><th scope="col">{teamName("EAST_WEST")}</th></tr>
        </thead>
        <tbody>
          {rows.map(([name, value]) => (
            <tr key={name} data-row={name}>
              <th scope="row">{name}</th>
              {(["NORTH_SOUTH", "EAST_WEST"] as const).map((team) => {
                const t = summary.teams.find((x) => x.team === team);
                return <td key={team} data-team={team}>{t ? value(t) : "–"}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
