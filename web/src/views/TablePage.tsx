import { useEffect, useState } from "preact/hooks";
import { mutate, query } from "../api";
import { SEATS, seatName } from "../cards";
import {
  AddBotDocument,
  CreateJoinLinkDocument,
  CreateSpectatorLinkDocument,
  InvitePlayerDocument,
  JoinTableDocument,
  KickPlayerDocument,
  LeaveTableDocument,
  SendFriendRequestDocument,
  TableDocument,
  TransferHostDocument,
  UpdateTableDocument,
  WatchTableDocument,
  type JoinPolicy,
  type PlayerFieldsFragment,
  type Seat,
  type TableFieldsFragment,
  type Visibility,
} from "../graphql/generated";
import { useGameStream, type GameView } from "../live";
import { navigate, tablePath } from "../router";
import { Board } from "./Board";
import { Chat } from "./Chat";
import { words } from "./Lobby";
import { block } from "./Social";

// Seat changes alter the table itself (host, status), not only its game: reload it then.
const TABLE_EVENTS = new Set(["SEAT_TAKEN", "SEAT_LEFT", "PLAYER_REPLACED", "GAME_STARTED", "GAME_OVER"]);

type Outcome = { data?: unknown; error?: string | undefined };

/** One table: the waiting room before the game, the board during it, for players and spectators. */
export function TablePage({ tableId, code, me }: { tableId: string; code: string | null; me: PlayerFieldsFragment }) {
  const [table, setTable] = useState<TableFieldsFragment | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [watching, setWatching] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);

  const reload = async (): Promise<TableFieldsFragment | null> => {
    const result = await query(TableDocument, { id: tableId, code });
    if (result.data === undefined) {
      setLoadError(result.error);
      return null;
    }
    if (!result.data.table) {
      setLoadError("That table does not exist, or you cannot see it.");
      return null;
    }
    setTable(result.data.table);
    return result.data.table;
  };

  const mySeatOnTable = table?.seats.find((s) => s.playerId === me.id)?.seat ?? null;

  useEffect(() => {
    void reload().then(async (loaded) => {
      if (!loaded || loaded.seats.some((s) => s.playerId === me.id) || !loaded.spectating) return;
      const watched = await mutate(WatchTableDocument, { tableId, code });
      if (watched.data) setWatching(true);
    });
  }, [tableId]);

  // The stream restarts when the viewer's seat changes: each subscription is projected for one viewer.
  const streamOn = table !== null && (mySeatOnTable !== null || watching);
  const stream = useGameStream(streamOn ? tableId : null, mySeatOnTable ?? "spectator");
  useEffect(() => {
    if (table) stream.apply(table.game);
  }, [table]);
  const view: GameView | null = stream.view ?? table?.game ?? null;

  useEffect(() => {
    if (stream.lastEvent && TABLE_EVENTS.has(stream.lastEvent)) void reload();
  }, [stream.view?.version]);

  const act = async (run: () => Promise<Outcome>, success?: string): Promise<void> => {
    setError(null);
    setNote(null);
    const result = await run();
    if (result.error) setError(result.error);
    else {
      if (success) setNote(success);
      await reload();
    }
  };

  if (loadError && !table) {
    return (
      <section class="panel">
        <h1>Table not available</h1>
        <p class="error" role="alert">{loadError}</p>
        <p><button type="button" onClick={() => navigate("/")}>Back to the lobby</button></p>
      </section>
    );
  }
  if (!table || !view) return <p class="muted">Loading the table…</p>;

  const isHost = table.host.id === me.id;
  const seats = view.seats;
  const mySeat = view.viewerSeat ?? mySeatOnTable;
  const title = table.name ?? `${table.host.username}'s table`;
  const leave = (): void =>
    void (async () => {
      if (view.phase !== "WAITING" && !window.confirm("Leave the game? A bot takes your seat.")) return;
      const result = await mutate(LeaveTableDocument, { tableId });
      if (result.error) setError(result.error);
      else navigate("/");
    })();

  return (
    <div class="table-page" data-table-id={tableId} data-mode={mySeat ? "player" : watching ? "spectator" : "outsider"}>
      <div class="table-head">
        <h1>{title}</h1>
        <p class="muted small">
          {table.rematchOf ? "Rematch · " : ""}Host {table.host.username} · {words(table.visibility)} · {words(table.joinPolicy)} to sit
          {table.spectating ? " · spectators allowed" : " · no spectators"}
          {!mySeat && watching ? " · you are watching" : ""}
        </p>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {stream.error && <p class="error" role="alert">{stream.error}</p>}
      {note && <p class="ok" role="status">{note}</p>}
      {view.phase === "WAITING" ? (
        <section class="panel waiting" aria-labelledby="seats-title">
          <h2 id="seats-title">Seats</h2>
          <p class="muted">The game starts when all four seats are filled.</p>
          <ul class="plain seats-waiting">
            {SEATS.map((seat: Seat) => {
              const s = seats.find((x) => x.seat === seat);
              const human = s?.playerId && !s.isBot ? { id: s.playerId, username: s.username ?? "" } : null;
              return (
                <li key={seat} data-seat={seat}>
                  <span class="seat-label">{seatName(seat)}</span>
                  <span class="grow">{s?.playerId ? (s.isBot ? "Bot" : s.username) : <span class="muted">empty</span>}
                    {human?.id === me.id && <span class="badge">you</span>}
                    {human?.id === table.host.id && <span class="badge">host</span>}
                  </span>
                  <span class="actions">
                    {!s?.playerId && !mySeat && (
                      <button type="button" class="small primary" onClick={() => void act(() => mutate(JoinTableDocument, { tableId, seat, code }))}>
                        Sit here
                      </button>
                    )}
                    {!s?.playerId && isHost && (
                      <button type="button" class="small" aria-label={`Add a bot ${seatName(seat)}`}
                        onClick={() => void act(() => mutate(AddBotDocument, { tableId, seat }))}>
                        Add bot
                      </button>
                    )}
                    {human && human.id !== me.id && isHost && (
                      <>
                        <button type="button" class="small" onClick={() => void act(() => mutate(TransferHostDocument, { tableId, playerId: human.id }), `${human.username} is now the host.`)}>Make host</button>
                        <button type="button" class="small danger" onClick={() => void act(() => mutate(KickPlayerDocument, { tableId, playerId: human.id }))}>Kick</button>
                      </>
                    )}
                    {human && human.id !== me.id && (
                      <>
                        <button type="button" class="small" onClick={() => void act(() => mutate(SendFriendRequestDocument, { username: human.username }), `Friend request sent to ${human.username}.`)}>Add friend</button>
                        <button type="button" class="small danger" onClick={() => void act(async () => ({ error: (await block(human)) ?? undefined }), `${human.username} is blocked.`)}>Block</button>
                      </>
                    )}
                  </span>
                </li>
              );
            })}
          </ul>
          {mySeat && <button type="button" onClick={leave}>Leave table</button>}
          {isHost && <HostTools table={table} act={act} />}
          {streamOn && <Chat tableId={tableId} seated={mySeat !== null} gameOver={false} />}
        </section>
      ) : (
        <Board view={view} apply={stream.apply} onLeave={mySeat ? leave : null}
          aside={streamOn && <Chat tableId={tableId} seated={mySeat !== null} gameOver={view.phase === "GAME_OVER"} />} />
      )}
    </div>
  );
}

const POLICIES: Record<Visibility, JoinPolicy[]> = {
  PUBLIC: ["OPEN", "FRIENDS_ONLY", "INVITE_ONLY"],
  FRIENDS_ONLY: ["FRIENDS_ONLY", "INVITE_ONLY"],
  PRIVATE: ["INVITE_ONLY"],
};

/** The host's tools before the game: options, invitations and links. */
function HostTools({ table, act }: { table: TableFieldsFragment; act: (run: () => Promise<Outcome>, success?: string) => Promise<void> }) {
  const [name, setName] = useState(table.name ?? "");
  const [visibility, setVisibility] = useState<Visibility>(table.visibility);
  const [joinPolicy, setJoinPolicy] = useState<JoinPolicy>(table.joinPolicy);
  const [spectating, setSpectating] = useState(table.spectating);
  const [invitee, setInvitee] = useState("");
  const [links, setLinks] = useState<{ join?: string; watch?: string }>({});
  const tableId = table.id;
  const linkFor = (code: string): string => new URL(tablePath(tableId, code), location.href).href;

  return (
    <div class="host-tools">
      <form class="panel" onSubmit={(e) => {
        e.preventDefault();
        const policy = POLICIES[visibility].includes(joinPolicy) ? joinPolicy : null;
        void act(() => mutate(UpdateTableDocument, { tableId, input: { name: name.trim() || null, visibility, joinPolicy: policy, spectating } }), "Table updated.");
      }}>
        <h3>Table options</h3>
        <label>Name <input name="name" maxLength={50} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <div class="row">
          <label>Who can see it
            <select value={visibility} onChange={(e) => setVisibility(e.currentTarget.value as Visibility)}>
              {(["PUBLIC", "FRIENDS_ONLY", "PRIVATE"] as Visibility[]).map((v) => <option key={v} value={v}>{words(v)}</option>)}
            </select>
          </label>
          <label>Who can sit
            <select value={joinPolicy} onChange={(e) => setJoinPolicy(e.currentTarget.value as JoinPolicy)}>
              {POLICIES[visibility].map((p) => <option key={p} value={p}>{words(p)}</option>)}
            </select>
          </label>
        </div>
        <label class="check"><input type="checkbox" checked={spectating} onChange={(e) => setSpectating(e.currentTarget.checked)} /> Allow spectators</label>
        <button type="submit">Save options</button>
      </form>
      <form class="panel" onSubmit={(e) => {
        e.preventDefault();
        const who = invitee.trim();
        void act(() => mutate(InvitePlayerDocument, { tableId, username: who }), `${who} is invited.`);
        setInvitee("");
      }}>
        <h3>Invite</h3>
        <div class="row">
          <label class="grow">Username <input name="invitee" required value={invitee} onInput={(e) => setInvitee(e.currentTarget.value)} /></label>
          <button type="submit">Invite</button>
        </div>
      </form>
      <div class="panel">
        <h3>Links</h3>
        <div class="actions">
          <button type="button" onClick={() => void act(async () => {
            const r = await mutate(CreateJoinLinkDocument, { tableId });
            if (r.data) setLinks((l) => ({ ...l, join: linkFor(r.data.createJoinLink) }));
            return r;
          })}>Create a join link</button>
          <button type="button" onClick={() => void act(async () => {
            const r = await mutate(CreateSpectatorLinkDocument, { tableId });
            if (r.data) setLinks((l) => ({ ...l, watch: linkFor(r.data.createSpectatorLink) }));
            return r;
          })}>Create a spectator link</button>
        </div>
        {links.join && <label>Join link (lets its holder sit) <input readOnly value={links.join} data-link-kind="join" onFocus={(e) => e.currentTarget.select()} /></label>}
        {links.watch && <label>Spectator link (watch only) <input readOnly value={links.watch} data-link-kind="watch" onFocus={(e) => e.currentTarget.select()} /></label>}
      </div>
    </div>
  );
}
