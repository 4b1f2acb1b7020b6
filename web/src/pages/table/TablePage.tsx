import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import {
  LeaveTableDocument,
  LobbyUpdatesDocument,
  ReclaimSeatDocument,
  TableDocument,
  WatchTableDocument,
  type PlayerFieldsFragment,
  type Seat,
  type TableFieldsFragment,
} from "../../graphql/generated";
import { seatName } from "../../lib/cards";
import { enumWords } from "../../lib/format";
import { liveOptionWords } from "../../lib/tableOptions";
import { useGameStream, type GameView } from "../../live/game";
import { usePresence } from "../../live/presence";
import { coalesced, live, mutate, query } from "../../server/api";
import { announcement } from "../../state/announcement";
import { navigate } from "../../state/router";
import type { Outcome } from "./act";
import { Board } from "./Board";
import { Chat } from "./Chat";
import { TableLog } from "./TableLog";
import { WaitingRoom } from "./WaitingRoom";

/** One table: the waiting room before the game, the board during it, for players,
 * spectators and a player whose seat a bot holds while they are away. */
export function TablePage({ tableId, code, me }: { tableId: string; code: string | null; me: PlayerFieldsFragment }) {
  const [table, setTable] = useState<TableFieldsFragment | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [watching, setWatching] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);

  const load = async (): Promise<TableFieldsFragment | null> => {
    const result = await query(TableDocument, { id: tableId, code });
    if (result.data === undefined) {
      setLoadError(result.error);
      return null;
    }
    if (!result.data.table) {
      setLoadError("That table does not exist, or you cannot see it.");
      return null;
    }
    const fresh = result.data.table;
    // Reloads overlap (a mutation's, each table change's) and their answers may arrive
    // out of order: an older answer must never replace a newer one on screen.
    setTable((old) => (old !== null && fresh.game.version < old.game.version ? old : fresh));
    return fresh;
  };
  const reload = useMemo(() => coalesced(load), [tableId, code]);

  const mySeatOnTable = table?.seats.find((s) => s.playerId === me.id)?.seat ?? null;
  // A bot holds this seat for me (timeouts, a lost connection): I may take it back.
  const awaySeat = table?.seats.find((s) => s.awayPlayer?.id === me.id)?.seat ?? null;

  useEffect(() => {
    void reload().then(async (loaded) => {
      if (!loaded || !loaded.spectating || loaded.seats.some((s) => s.playerId === me.id || s.awayPlayer?.id === me.id)) return;
      const watched = await mutate(WatchTableDocument, { tableId, code });
      if (watched.data) setWatching(true);
    });
  }, [tableId]);

  const streamOn = table !== null && (mySeatOnTable !== null || awaySeat !== null || watching);
  const stream = useGameStream(streamOn ? tableId : null);
  const presence = usePresence(streamOn ? tableId : null);
  useEffect(() => {
    if (table) stream.apply(table.game);
  }, [table]);
  useEffect(() => {
    if (stream.tableChanges > 0) void reload();
  }, [stream.tableChanges]);
  // One who may see the table but not watch it hears of its changes through the lobby.
  const loaded = table !== null;
  useEffect(() => {
    if (!loaded || streamOn) return;
    return live(LobbyUpdatesDocument, {}, ({ lobbyUpdates }) => {
      if (lobbyUpdates.tableId === tableId) void reload();
    }, () => undefined);
  }, [loaded, streamOn]);
  useAwayNotice(awaySeat);

  const act = async (run: () => Promise<Outcome>, success?: string): Promise<void> => {
    setError(null);
    setNote(null);
    const result = await run();
    if (result.error) setError(result.error);
    else {
      // The note describes the screen it appears on: reload first.
      await reload();
      if (success) setNote(success);
    }
  };

  const view: GameView | null = stream.view ?? table?.game ?? null;
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

  const mySeat = view.viewerSeat ?? mySeatOnTable;
  const closed = stream.closed || table.status === "CLOSED";
  const title = table.name ?? `${table.host.username}'s table`;
  const leave = (): void =>
    void (async () => {
      const question = awaySeat ? "Give up your seat for good? The bot keeps it." : "Leave the game? A bot takes your seat.";
      if (view.phase !== "WAITING" && !window.confirm(question)) return;
      const result = await mutate(LeaveTableDocument, { tableId });
      if (result.error) setError(result.error);
      else navigate("/");
    })();
  const reclaim = (): void =>
    void act(async () => {
      const result = await mutate(ReclaimSeatDocument, { tableId });
      if (result.data) {
        setTable(result.data.reclaimSeat);
        announcement.value = "You are back in your seat.";
        // The button is gone: keyboard focus goes on to the game's status line.
        requestAnimationFrame(() => document.getElementById("table-status")?.focus());
      }
      return result;
    });
  const seated = mySeat !== null || awaySeat !== null;
  const chat = streamOn && !closed && <Chat tableId={tableId} seated={seated} gameOver={view.phase === "GAME_OVER"} />;
  const log = <TableLog entries={stream.log} />;

  return (
    <div class="table-page" data-table-id={tableId} data-status={closed ? "CLOSED" : table.status}
      data-mode={mySeat ? "player" : awaySeat ? "away" : watching ? "spectator" : "outsider"}>
      <div class="table-head">
        <div class="table-title">
          <h1>{title}</h1>
          {mySeat && !closed && view.phase !== "WAITING" && view.phase !== "GAME_OVER" && (
            <button type="button" class="danger small leave" onClick={leave}
              aria-label="Leave table (a bot takes your seat)" title="A bot takes your seat">Leave table</button>
          )}
        </div>
        <p class="muted small" data-options>
          {closed ? "Closed · " : ""}{table.rematchOf ? "Rematch · " : ""}Host {table.host.username} · {enumWords(table.visibility)} · {enumWords(table.joinPolicy)} to sit
          {table.spectating ? " · spectators allowed" : " · no spectators"}
          {table.rated ? " · rated" : ""} · {liveOptionWords(table)}
          {!mySeat && !awaySeat && watching ? " · you are watching" : ""}
        </p>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {stream.error && <p class="error" role="alert">{stream.error}</p>}
      {note && <p class="ok" role="status">{note}</p>}
      {closed && <ClosedNotice started={view.phase !== "WAITING"} />}
      {awaySeat && !closed && view.phase !== "GAME_OVER" && <AwayPanel seat={awaySeat} onReclaim={reclaim} onLeave={leave} />}
      {view.phase === "WAITING" ? (
        closed ? log : (
          <WaitingRoom table={table} view={view} me={me} mySeat={mySeat} code={code} presence={presence}
            act={act} onLeave={leave}>
            {chat}
            {log}
          </WaitingRoom>
        )
      ) : (
        <Board view={view} apply={stream.apply} closed={closed} presence={presence}
          turnSeconds={table.turnSeconds} bottom={awaySeat} landed={stream.landed} scored={stream.scored}
          log={log} chat={chat} />
      )}
    </div>
  );
}

/** Tell a screen reader, once, that a bot took the viewer's seat while the page is open. */
function useAwayNotice(awaySeat: Seat | null): void {
  const before = useRef<Seat | null>(null);
  useEffect(() => {
    if (awaySeat && before.current === null) {
      announcement.value = `A bot is playing your ${seatName(awaySeat)} seat. Press "Take my seat back" to return.`;
    }
    before.current = awaySeat;
  }, [awaySeat]);
}

/** The seat a bot holds for the viewer, and the way back into it. */
function AwayPanel({ seat, onReclaim, onLeave }: { seat: Seat; onReclaim: () => void; onLeave: () => void }) {
  return (
    <section class="panel away-panel" aria-labelledby="away-title" data-away={seat}>
      <h2 id="away-title">A bot is playing your seat</h2>
      <p>
        Your turn ran out twice in a row, or your connection was lost for a while, so a bot
        took your {seatName(seat)} seat. The game goes on; the seat is yours to take back at
        any time before it ends.
      </p>
      <p class="actions">
        <button type="button" class="primary" data-action="reclaim" onClick={onReclaim}>Take my seat back</button>
        <button type="button" class="danger" onClick={onLeave}>Give up the seat</button>
      </p>
    </section>
  );
}

/** A table closed before its game was over: nothing more happens here. */
function ClosedNotice({ started }: { started: boolean }) {
  return (
    <section class="panel closed-panel" aria-labelledby="closed-title" data-closed>
      <h2 id="closed-title">This table is closed</h2>
      <p>
        {started
          ? "Every player left before the game was over, so it ended here. No more moves can be made."
          : "It closed before its game began: everyone left, or nobody was here for ten minutes."}
      </p>
      <p><button type="button" class="primary" onClick={() => navigate("/")}>Back to the lobby</button></p>
    </section>
  );
}
