import { useEffect, useState } from "preact/hooks";
import { PlayerLink } from "../../components/PlayerLink";
import { LeaderboardDocument, type LeaderboardQuery } from "../../graphql/generated";
import { query } from "../../server/api";
import { RatingText } from "./RatingText";

type LeaderEdge = LeaderboardQuery["leaderboard"]["edges"][number];

/** The best established players (the server leaves out provisional ratings). */
export function LeaderboardPage({ per }: { per: number }) {
  const [rows, setRows] = useState<LeaderEdge[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = async (after: string | null): Promise<void> => {
    setError(null);
    const result = await query(LeaderboardDocument, { first: per, after });
    if (result.error !== undefined) return setError(result.error);
    const board = result.data.leaderboard;
    setRows((old) => (after === null ? board.edges : [...old, ...board.edges]));
    setNext(board.pageInfo.hasNextPage ? (board.pageInfo.endCursor ?? null) : null);
    setReady(true);
  };
  useEffect(() => void load(null), [per]);

  return (
    <section class="panel career" aria-labelledby="leaders-title" data-ready={ready ? "leaderboard" : undefined}>
      <h1 id="leaders-title">Leaderboard</h1>
      <p class="muted small">Players with at least 10 rated games, best rating first.</p>
      {error && <p class="error" role="alert">{error}</p>}
      {ready && rows.length === 0 && <p class="muted">Nobody has finished 10 rated games yet.</p>}
      {rows.length > 0 && (
        <table class="leaders" aria-labelledby="leaders-title">
          <thead><tr><th scope="col">Rank</th><th scope="col">Player</th><th scope="col">Rating</th><th scope="col">Rated games</th></tr></thead>
          <tbody>
            {rows.map(({ cursor, node }) => (
              <tr key={cursor} data-rank={node.rank}>
                <td>{node.rank}</td>
                <td><PlayerLink username={node.player.username} /></td>
                <td><RatingText rating={node.rating} /></td>
                <td>{node.rating.games}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next !== null && <button type="button" onClick={() => void load(next)}>Show more players</button>}
    </section>
  );
}
