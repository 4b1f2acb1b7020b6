import { useEffect, useState } from "preact/hooks";
import { RequestRematchDocument } from "../../graphql/generated";
import { seatName, teamName, teamOf } from "../../lib/cards";
import type { GameView } from "../../live/game";
import { mutate } from "../../server/api";
import { navigate, tablePath } from "../../state/router";

/** The end of the game: who won, the rematch (seated players) and the way out. */
export function GameOver({ view }: { view: GameView }) {
  const mine = view.viewerSeat ? teamOf(view.viewerSeat) : null;
  const won = mine !== null && view.winner === mine;
  const [error, setError] = useState<string | null>(null);
  const humans = view.seats.filter((s) => s.playerId && !s.isBot).map((s) => s.seat);
  const asked = view.rematchRequests.filter((seat) => humans.includes(seat));
  const iAsked = view.viewerSeat !== null && view.rematchRequests.includes(view.viewerSeat);
  const next = view.nextTableId;
  // Seated players follow the rematch to its table; spectators get a link.
  useEffect(() => {
    if (next && view.viewerSeat) navigate(tablePath(next));
  }, [next]);
  const rematch = async (): Promise<void> => {
    setError(null);
    const result = await mutate(RequestRematchDocument, { tableId: view.tableId });
    if (result.data === undefined) setError(result.error);
    else if (result.data.requestRematch.id !== view.tableId) navigate(tablePath(result.data.requestRematch.id));
  };
  return (
    <section class="panel game-over" aria-labelledby="over-title" data-game-over>
      <h2 id="over-title">{view.winner ? `${teamName(view.winner)} win` : "Game over"}</h2>
      {mine && <p class="big">{won ? "You won!" : "You lost this one."}</p>}
      <p>
        {view.teams.map((t) => `${teamName(t.team)} ${t.score}`).join(" · ")}
      </p>
      {humans.length > 0 && (
        <p class="muted" data-rematch-asked={asked.length}>
          Rematch: {asked.length} of {humans.length} player{humans.length === 1 ? "" : "s"} asked
          {asked.length ? ` (${asked.map(seatName).join(", ")})` : ""}.
        </p>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      <p class="actions">
        {view.viewerSeat && !next && (
          <button type="button" class="primary" data-action="rematch" disabled={iAsked} onClick={() => void rematch()}>
            {iAsked ? "Waiting for the others…" : "Play again"}
          </button>
        )}
        {next && !view.viewerSeat && (
          <button type="button" class="primary" onClick={() => navigate(tablePath(next))}>Watch the rematch</button>
        )}
        <button type="button" onClick={() => navigate("/")}>Back to the lobby</button>
      </p>
    </section>
  );
}
