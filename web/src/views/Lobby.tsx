import { useEffect, useState } from "preact/hooks";
import {
  CreateTableDocument,
  DeclineInvitationDocument,
  JoinTableDocument,
  SocialDocument,
  type BotLevel,
  type JoinPolicy,
  type PlayerFieldsFragment,
  type Seat,
  type SocialQuery,
  type TableSummaryFragment,
  type Visibility,
} from "../graphql/generated";
import { botName, seatName } from "../lib/cards";
import { enumWords } from "../lib/format";
import { useSignal } from "../lib/signal";
import { clockWords, DEFAULT_TURN_SECONDS, JOIN_POLICIES, turnSecondsOf, VISIBILITIES } from "../lib/tableOptions";
import { useLobby } from "../live/lobby";
import { mutate, query } from "../server/api";
import { navigate, tablePath } from "../state/router";
import { socialTick } from "../state/social";
import { ReplacementBotField, TurnSecondsField } from "./TableOptions";

/** The create-table form: every option of CreateTableInput. */
function CreateTable() {
  const [name, setName] = useState("");
  const [visibility, setVisibility] = useState<Visibility>("PUBLIC");
  const [joinPolicy, setJoinPolicy] = useState<JoinPolicy | "">("");
  const [spectating, setSpectating] = useState(true);
  const [seed, setSeed] = useState("");
  const [rated, setRated] = useState(false);
  const [replacementBot, setReplacementBot] = useState<BotLevel>("BASIC");
  const [turnSeconds, setTurnSeconds] = useState(String(DEFAULT_TURN_SECONDS));
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError(null);
    const policy = joinPolicy && JOIN_POLICIES[visibility].includes(joinPolicy) ? joinPolicy : null;
    const result = await mutate(CreateTableDocument, {
      input: {
        name: name.trim() || null,
        visibility,
        joinPolicy: policy,
        spectating,
        seed: seed.trim() === "" ? null : Number(seed),
        rated,
        turnSeconds: turnSecondsOf(turnSeconds),
        replacementBot,
      },
    });
    if (result.data) navigate(tablePath(result.data.createTable.id));
    else setError(result.error);
  };

  return (
    <form class="panel create" onSubmit={(e) => void submit(e)} aria-labelledby="create-title">
      <h2 id="create-title">New table</h2>
      <label>
        Name <span class="muted">(optional)</span>
        <input name="name" maxLength={50} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <div class="row">
        <label>
          Who can see it
          <select name="visibility" value={visibility}
            onChange={(e) => setVisibility(e.currentTarget.value as Visibility)}>
            {VISIBILITIES.map((v) => <option value={v} key={v}>{enumWords(v)}</option>)}
          </select>
        </label>
        <label>
          Who can sit
          <select name="joinPolicy" value={joinPolicy}
            onChange={(e) => setJoinPolicy(e.currentTarget.value as JoinPolicy | "")}>
            <option value="">Most open allowed</option>
            {JOIN_POLICIES[visibility].map((p) => <option value={p} key={p}>{enumWords(p)}</option>)}
          </select>
        </label>
      </div>
      <TurnSecondsField value={turnSeconds} visibility={visibility} onInput={setTurnSeconds} />
      <label class="check">
        <input type="checkbox" name="spectating" checked={spectating}
          onChange={(e) => setSpectating(e.currentTarget.checked)} />
        Allow spectators
      </label>
      <label class="check">
        <input type="checkbox" name="rated" checked={rated} aria-describedby="rated-hint"
          onChange={(e) => setRated(e.currentTarget.checked)} />
        Rated game
      </label>
      <p id="rated-hint" class="muted small">A rated game is for four people (no bots) and changes their ratings.</p>
      <details>
        <summary>Advanced</summary>
        <ReplacementBotField value={replacementBot} onChange={setReplacementBot} />
        <label>
          Deal seed <span class="muted">(only on servers that allow seeded tables)</span>
          <input name="seed" inputMode="numeric" pattern="-?[0-9]*" value={seed}
            onInput={(e) => setSeed(e.currentTarget.value)} />
        </label>
      </details>
      {error && <p class="error" role="alert">{error}</p>}
      <button type="submit" class="primary">Create table</button>
    </form>
  );
}

function TableCard({ table, me }: { table: TableSummaryFragment; me: PlayerFieldsFragment }) {
  const [error, setError] = useState<string | null>(null);
  const seated = table.seats.some((s) => s.playerId === me.id);
  // A seat a bot holds for me (after timeouts or a lost connection): I can take it back.
  const away = table.seats.some((s) => s.awayPlayer?.id === me.id);
  const sit = async (seat: Seat): Promise<void> => {
    const result = await mutate(JoinTableDocument, { tableId: table.id, seat, code: null });
    if (result.data) navigate(tablePath(table.id));
    else setError(result.error);
  };
  const title = table.name ?? `${table.host.username}'s table`;
  return (
    <li class="table-card panel" data-table-id={table.id}>
      <div class="table-card-head">
        <h3>{title}</h3>
        <span class={`badge status-${table.status.toLowerCase()}`}>{enumWords(table.status)}</span>
      </div>
      <p class="muted small">
        Host {table.host.username} · {enumWords(table.visibility)} · {enumWords(table.joinPolicy)} to sit
        {table.spectating ? " · spectators welcome" : ""}
        {table.rated ? " · rated" : ""} · {clockWords(table.turnSeconds)}
      </p>
      {away && <p class="small notice">A bot holds your seat here: open the table to take it back.</p>}
      <ul class="seat-list" aria-label={`Seats at ${title}`}>
        {table.seats.map((s) => (
          <li key={s.seat}>
            <span class="seat-label">{seatName(s.seat)}</span>{" "}
            {s.playerId ? (
              <span>{s.isBot ? botName(s.botLevel) : s.username}
                {s.awayPlayer && <span class="muted"> for {s.awayPlayer.username}</span>}</span>
            ) : table.status === "WAITING" && !seated ? (
              <button type="button" class="small" onClick={() => void sit(s.seat)}
                aria-label={`Sit ${seatName(s.seat)} at ${title}`}>Sit here</button>
            ) : (
              <span class="muted">empty</span>
            )}
          </li>
        ))}
      </ul>
      <div class="actions">
        {seated || away ? (
          <button type="button" class="primary" onClick={() => navigate(tablePath(table.id))}>Open</button>
        ) : table.spectating ? (
          <button type="button" onClick={() => navigate(tablePath(table.id))} aria-label={`Watch ${title}`}>Watch</button>
        ) : null}
      </div>
      {error && <p class="error" role="alert">{error}</p>}
    </li>
  );
}

function Invitations() {
  const tick = useSignal(socialTick);
  const [invites, setInvites] = useState<SocialQuery["invitations"]>([]);
  useEffect(() => {
    void query(SocialDocument, {}).then((r) => r.data && setInvites(r.data.invitations));
  }, [tick]);
  if (invites.length === 0) return null;
  const decline = async (id: string): Promise<void> => {
    const result = await mutate(DeclineInvitationDocument, { invitationId: id });
    if (result.data) setInvites((old) => old.filter((i) => i.id !== id));
  };
  return (
    <section class="panel" aria-labelledby="invites-title">
      <h2 id="invites-title">Invitations</h2>
      <ul class="plain">
        {invites.map((invite) => (
          <li key={invite.id} class="invite">
            {invite.from.username} invited you to {invite.table.name ?? "a table"}.{" "}
            <button type="button" class="primary small" onClick={() => navigate(tablePath(invite.table.id))}>Open</button>{" "}
            <button type="button" class="small" onClick={() => void decline(invite.id)}>Decline</button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The live lobby: every table the player may see, kept current by lobbyUpdates. */
export function Lobby({ me }: { me: PlayerFieldsFragment }) {
  const [openOnly, setOpenOnly] = useState(false);
  const [nameContains, setNameContains] = useState("");
  const { tables, error, ready } = useLobby({ openSeatsOnly: openOnly || null, nameContains: nameContains.trim() || null });
  return (
    <div class="lobby" data-ready={ready ? "lobby" : undefined}>
      <h1 class="sr-only">Lobby</h1>
      <div class="lobby-side">
        <CreateTable />
        <Invitations />
      </div>
      <section class="lobby-tables" aria-labelledby="lobby-title">
        <h2 id="lobby-title" class="page-title">Tables</h2>
        <div class="row filters">
          <label class="check">
            <input type="checkbox" checked={openOnly} onChange={(e) => setOpenOnly(e.currentTarget.checked)} />
            Open seats only
          </label>
          <label>
            <span class="sr-only">Search by name</span>
            <input type="search" placeholder="Search by name" value={nameContains}
              onInput={(e) => setNameContains(e.currentTarget.value)} />
          </label>
        </div>
        {error && <p class="error" role="alert">{error}</p>}
        {ready && tables.length === 0 && <p class="muted">No tables yet: create one.</p>}
        <ul class="tables plain" aria-live="polite">
          {tables.map((t) => <TableCard key={t.id} table={t} me={me} />)}
        </ul>
      </section>
    </div>
  );
}
