import { useEffect, useMemo, useState } from "preact/hooks";
import {
  RemoveFriendDocument,
  RespondToFriendRequestDocument,
  SendFriendRequestDocument,
  SocialDocument,
  UnblockPlayerDocument,
  type PlayerFieldsFragment,
  type SocialQuery,
} from "../../graphql/generated";
import { useSignal } from "../../lib/signal";
import { coalesced, mutate, query } from "../../server/api";
import { navigate, tablePath } from "../../state/router";
import { block, socialTick } from "../../state/social";

/** Friends, friend requests, invitations and blocks. */
export function Social({ me }: { me: PlayerFieldsFragment }) {
  const tick = useSignal(socialTick);
  const [data, setData] = useState<SocialQuery | null>(null);
  const [username, setUsername] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const reload = useMemo(() => coalesced(async (): Promise<void> => {
    const result = await query(SocialDocument, {});
    if (result.data) setData(result.data);
    else setError(result.error);
  }), []);
  useEffect(() => void reload(), [tick]);

  const act = async (run: () => Promise<{ error?: string | undefined }>, success: string): Promise<void> => {
    setError(null);
    setDone(null);
    const result = await run();
    // The note describes the screen it appears on: reload first.
    await reload();
    if (result.error) setError(result.error);
    else setDone(success);
  };

  const unblock = (player: PlayerFieldsFragment): Promise<void> =>
    act(() => mutate(UnblockPlayerDocument, { playerId: player.id }), `${player.username} is unblocked.`);

  const incoming = data?.friendRequests.filter((r) => r.to.id === me.id) ?? [];
  return (
    <div class="social">
      <section class="panel" aria-labelledby="friends-title">
        <h1 id="friends-title">Friends</h1>
        <form class="row" onSubmit={(e) => {
          e.preventDefault();
          const name = username.trim();
          void act(() => mutate(SendFriendRequestDocument, { username: name }), `Friend request sent to ${name}.`);
          setUsername("");
        }}>
          <label class="grow">
            Add a friend by username
            <input name="friend" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
          </label>
          <button type="submit" class="primary">Send request</button>
        </form>
        {error && <p class="error" role="alert">{error}</p>}
        {done && <p class="ok" role="status">{done}</p>}
        {data && data.friends.length === 0 && <p class="muted">No friends yet.</p>}
        <ul class="plain people">
          {data?.friends.map((f) => (
            <li key={f.id}>
              <span>{f.username}</span>
              <span class="actions">
                <button type="button" class="small" onClick={() => void act(() => mutate(RemoveFriendDocument, { playerId: f.id }), `${f.username} removed.`)}>
                  Remove
                </button>
                <button type="button" class="small danger" onClick={() => void act(async () => ({ error: (await block(f)) ?? undefined }), `${f.username} is blocked.`)}>
                  Block
                </button>
              </span>
            </li>
          ))}
        </ul>
      </section>
      <section class="panel" aria-labelledby="requests-title">
        <h2 id="requests-title">Friend requests</h2>
        {incoming.length === 0 && <p class="muted">None pending.</p>}
        <ul class="plain people">
          {incoming.map((r) => (
            <li key={r.id}>
              <span>{r.from.username}</span>
              <span class="actions">
                <button type="button" class="small primary" onClick={() => void act(() => mutate(RespondToFriendRequestDocument, { requestId: r.id, accept: true }), `You and ${r.from.username} are friends.`)}>
                  Accept
                </button>
                <button type="button" class="small" onClick={() => void act(() => mutate(RespondToFriendRequestDocument, { requestId: r.id, accept: false }), "Request declined.")}>
                  Decline
                </button>
                <button type="button" class="small danger" onClick={() => void act(async () => ({ error: (await block(r.from)) ?? undefined }), `${r.from.username} is blocked.`)}>
                  Block
                </button>
              </span>
            </li>
          ))}
        </ul>
      </section>
      <section class="panel" aria-labelledby="inv-title">
        <h2 id="inv-title">Invitations</h2>
        {data && data.invitations.length === 0 && <p class="muted">None pending.</p>}
        <ul class="plain people">
          {data?.invitations.map((i) => (
            <li key={i.id}>
              <span>{i.from.username}: {i.table.name ?? "a table"}</span>
              <span class="actions">
                <button type="button" class="small primary" onClick={() => navigate(tablePath(i.table.id))}>Open</button>
              </span>
            </li>
          ))}
        </ul>
      </section>
      <section class="panel" aria-labelledby="blocked-title">
        <h2 id="blocked-title">Blocked players</h2>
        <p class="muted small">They cannot send you friend requests or invitations, nor sit at your tables, and you do not see each other's chat.</p>
        {data && data.blockedPlayers.length === 0 && <p class="muted">You have not blocked anyone.</p>}
        <ul class="plain people" data-blocked>
          {data?.blockedPlayers.map((p) => (
            <li key={p.id} data-player={p.username}>
              <span>{p.username}</span>
              <button type="button" class="small" aria-label={`Unblock ${p.username}`} onClick={() => void unblock(p)}>Unblock</button>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}
