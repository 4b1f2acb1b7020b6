import { CardFace } from "../../components/Cards";
import { seatName, teamName } from "../../lib/cards";
import type { GameView } from "../../live/game";

/** Scores, bags and targets, the last trick and the hand history. */
export function Scores({ view }: { view: GameView }) {
  const hands = [...new Set(view.history.map((h) => h.handNumber))];
  return (
    <div class="side">
      <section class="panel" aria-labelledby="score-title">
        <h2 id="score-title">Score</h2>
        <table class="scores">
          <thead>
            <tr><th scope="col">Team</th><th scope="col">Score</th><th scope="col">Bags</th><th scope="col">Target</th><th scope="col">Tricks</th></tr>
          </thead>
          <tbody>
            {view.teams.map((t) => {
              const seats = view.seats.filter((s) => (t.team === "NORTH_SOUTH" ? s.seat === "NORTH" || s.seat === "SOUTH" : s.seat === "EAST" || s.seat === "WEST"));
              return (
                <tr key={t.team} data-team={t.team}>
                  <th scope="row">{teamName(t.team)}</th>
                  <td data-score>{t.score}</td>
                  <td>{t.bags}</td>
                  <td>{t.target ?? "–"}</td>
                  <td>{seats.reduce((n, s) => n + s.tricksWon, 0)}</td>
                </tr>
              );
            })}
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
      {hands.length > 0 && (
        <section class="panel" aria-labelledby="history-title">
          <h2 id="history-title">Hands</h2>
          <div class="scroll">
            <table class="history">
              <thead>
                <tr><th scope="col">Hand</th><th scope="col">Team</th><th scope="col">Target</th><th scope="col">Tricks</th><th scope="col">Points</th><th scope="col">Bags</th><th scope="col">Score</th></tr>
              </thead>
              <tbody>
                {view.history.map((h) => (
                  <tr key={`${h.handNumber}-${h.team}`}>
                    <td>{h.handNumber}</td>
                    <td>{teamName(h.team)}</td>
                    <td>{h.target ?? "double nil"}</td>
                    <td>{h.tricks}</td>
                    <td>{h.points > 0 ? `+${h.points}` : h.points}{h.bagPenalty ? ` (−${h.bagPenalty} bags)` : ""}</td>
                    <td>{h.bags}</td>
                    <td>{h.scoreAfter}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </div>
  );
}
