// A player's career: rating, statistics and game history.
import { useEffect, useState } from "preact/hooks";
import { PlayerLink } from "../../components/PlayerLink";
import { ReportButton } from "../../components/ReportButton";
import { ProfileDocument, type ProfileQuery } from "../../graphql/generated";
import { seatName } from "../../lib/cards";
import { query } from "../../server/api";
import { RatingText } from "./RatingText";

type Profile = NonNullable<ProfileQuery["profile"]>;
type GameEdge = Profile["games"]["edges"][number];

const day = (iso: string): string => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleDateString(undefined, { dateStyle: "medium" });
};

const percent = (part: number, whole: number): string => (whole === 0 ? "–" : `${Math.round((100 * part) / whole)}%`);

function Stats({ profile }: { profile: Profile }) {
  const s = profile.stats;
  const rows: [string, string][] = [
    ["Games", `${s.games}`],
    ["Wins", `${s.wins} (${percent(s.wins, s.games)})`],
    ["Abandoned", `${s.abandoned}`],
    ["Hands", `${s.hands}`],
    ["Contracts made", `${s.contractsMade} of ${s.contractsMade + s.contractsSet}`],
    ["Nil bids made", `${s.nilsMade} of ${s.nilBids}`],
    ["Blind Nil bids made", `${s.blindNilsMade} of ${s.blindNilBids}`],
    ["Bags", `${s.bags}`],
  ];
  return (
    <section class="panel" aria-labelledby="stats-title">
      <h2 id="stats-title">Statistics</h2>
      <dl class="stats">
        {rows.map(([name, value]) => (
          <div key={name} data-stat={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function GameRow({ edge }: { edge: GameEdge }) {
  const g = edge.node;
  const result = g.abandoned ? "Abandoned" : g.won ? "Won" : "Lost";
  const change = g.ratingBefore !== null && g.ratingAfter !== null ? g.ratingAfter - g.ratingBefore : null;
  return (
    <tr data-game={g.tableId}>
      <td>{day(g.finishedAt)}</td>
      <td>{result}</td>
      <td>{g.scoreFor}–{g.scoreAgainst}</td>
      <td>{seatName(g.seat)}</td>
      <td>{g.partner ? <PlayerLink username={g.partner.username} /> : "Bot"}</td>
      <td>
        {g.opponents.length === 0 ? "Bots" : g.opponents.map((o, i) => (
          <span key={o.id}>{i > 0 ? ", " : ""}<PlayerLink username={o.username} /></span>
        ))}
      </td>
      <td>{change === null ? "Unrated" : `${g.ratingAfter} (${change >= 0 ? "+" : ""}${change})`}</td>
    </tr>
  );
}

/** A player's profile; the game history grows page by page with the cursor. */
export function ProfilePage({ username, per }: { username: string; per: number }) {
  const [profile, setProfile] = useState<Profile | null>(null);
  const [games, setGames] = useState<GameEdge[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const [loading, setLoading] = useState(false);

  const load = async (after: string | null): Promise<void> => {
    setLoading(true);
    setError(null);
    const result = await query(ProfileDocument, { username, first: per, after });
    setLoading(false);
    if (result.error !== undefined) return setError(result.error);
    const found = result.data.profile;
    if (!found) return setMissing(true);
    setProfile(found);
    setGames((old) => (after === null ? found.games.edges : [...old, ...found.games.edges]));
  };

  useEffect(() => {
    setProfile(null);
    setGames([]);
    setMissing(false);
    void load(null);
  }, [username, per]);

  if (missing) {
    return (
      <section class="panel">
        <h1>Player not found</h1>
        <p class="error" role="alert">There is no player called {username}, or you cannot see them.</p>
      </section>
    );
  }
  if (!profile) return error ? <p class="error" role="alert">{error}</p> : <p class="muted">Loading the profile…</p>;
  const page = profile.games.pageInfo;
  return (
    <div class="career" data-ready="profile">
      <section class="panel" aria-labelledby="profile-title">
        <h1 id="profile-title">{profile.player.username}</h1>
        <p class="muted small">Member since {day(profile.memberSince)}</p>
        <p>Rating <RatingText rating={profile.rating} /> <span class="muted small">after {profile.rating.games} rated {profile.rating.games === 1 ? "game" : "games"}</span></p>
        <ReportButton playerId={profile.player.id} username={profile.player.username} />
      </section>
      <Stats profile={profile} />
      <section class="panel" aria-labelledby="history-title">
        <h2 id="history-title">Games</h2>
        {games.length === 0 ? (
          <p class="muted">No finished games yet.</p>
        ) : (
          <div class="scroll">
            <table class="history" aria-labelledby="history-title">
              <thead>
                <tr><th scope="col">Finished</th><th scope="col">Result</th><th scope="col">Score</th><th scope="col">Seat</th>
                  <th scope="col">Partner</th><th scope="col">Opponents</th><th scope="col">Rating</th></tr>
              </thead>
              <tbody>{games.map((edge) => <GameRow key={edge.cursor} edge={edge} />)}</tbody>
            </table>
          </div>
        )}
        {error && <p class="error" role="alert">{error}</p>}
        {page.hasNextPage && (
          <button type="button" disabled={loading} onClick={() => void load(page.endCursor ?? null)}>
            {loading ? "Loading…" : "Load more games"}
          </button>
        )}
      </section>
    </div>
  );
}
