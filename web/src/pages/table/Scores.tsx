import { CardFace } from "../../components/Cards";
import { seatName, teamName, teamOf } from "../../lib/cards";
import { signed } from "../../lib/handSummary";
import type { GameView } from "../../live/game";

/** Scores, bags, targets and tricks of the hand in play, and the last trick. */
export function ScorePanel({ view }: { view: GameView }) {
  return (
    <>
      <section class="panel" aria-labelledby="score-title">
        <h2 id="score-title">Score</h2>
        <table class="scores">
          <thead>
            <tr><th scope="col">Team</th><th scope="col">Score</th><th scope="col">Bags</th><th scope="col">Target</th><th scope="col">Tricks</th></tr>
          </thead>
          <tbody>
            {view.teams.map((t) => (
              <tr key={t.team} data-team={t.team}>
                <th scope="row">{teamName(t.team)}</th>
                <td data-score>{t.score}</td>
                <td>{t.bags}</td>
                <td>{t.target ?? "–"}</td>
                <td>{view.seats.filter((s) => teamOf(s.seat) === t.team).reduce((n, s) => n + s.tricksWon, 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="muted small">Hand {view.handNumber}{view.dealer ? ` · dealer ${seatName(view.dealer)}` : ""}</p>
      </section>
      {view.lastTrick && (
        <section class="panel" aria-labelledby="last-title">
          <h2 id="last-title">Last trick</h2>
          <div class="last-trick" data-last-trick>
            {view.lastTrick.plays.map((p) => (
              <span key={p.seat} class="last-play">
                <span class="small">{seatName(p.seat)}</span>
                <CardFace card={p.card} small />
              </span>
            ))}
          </div>
          <p class="small">Won by {seatName(view.lastTrick.winner)}</p>
        </section>
      )}
    </>
  );
}

/** Every scored hand, team by team. The table scrolls sideways on a narrow screen: its
 * region takes keyboard focus so it can be scrolled without a mouse. */
export function HistoryPanel({ view }: { view: GameView }) {
  return (
    <section class="panel" aria-labelledby="history-title">
      <h2 id="history-title">Hands</h2>
      {view.history.length === 0 ? (
        <p class="muted small">No hand scored yet.</p>
      ) : (
        <div class="scroll" tabIndex={0} role="region" aria-labelledby="history-title">
          <table class="history">
            <thead>
              <tr><th scope="col">Hand</th><th scope="col">Team</th><th scope="col">Target</th><th scope="col">Tricks</th><th scope="col">Points</th><th scope="col">Bags</th><th scope="col">Score</th></tr>
            </thead>
            <tbody>
              {view.history.map((h) => (
                <tr key={`${h.handNumber}-${h.team}`}>
                  <td>{h.handNumber}</td>
                  <td><span aria-hidden="true">{h.team === "NORTH_SOUTH" ? "N–S" : "E–W"}</span><span class="sr-only">{teamName(h.team)}</span></td>
                  <td>{h.target ?? "double nil"}</td>
                  <td>{h.tricks}</td>
                  <td>{signed(h.points)}{h.bagPenalty ? ` (bags ${signed(-h.bagPenalty)})` : ""}</td>
                  <td>{h.bags}</td>
                  <td>{h.scoreAfter}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
