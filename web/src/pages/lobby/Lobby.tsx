import { useState } from "preact/hooks";
import type { PlayerFieldsFragment } from "../../graphql/generated";
import { useLobby } from "../../live/lobby";
import { CreateTable } from "./CreateTable";
import { Invitations } from "./Invitations";
import { PlayBots } from "./PlayBots";
import { QuickPlay } from "./QuickPlay";
import { TableCard } from "./TableCard";

/** The live lobby: every table the player may see, kept current by lobbyUpdates. */
export function Lobby({ me }: { me: PlayerFieldsFragment }) {
  const [openOnly, setOpenOnly] = useState(false);
  const [nameContains, setNameContains] = useState("");
  const { tables, error, ready } = useLobby({ openSeatsOnly: openOnly || null, nameContains: nameContains.trim() || null });
  return (
    <div class="lobby" data-ready={ready ? "lobby" : undefined}>
      <h1 class="sr-only">Lobby</h1>
      <QuickPlay />
      <PlayBots me={me} />
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
