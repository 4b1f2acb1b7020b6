// The live lobby: the tables one may see, kept current by its subscription (lobbyUpdates).
import { useEffect, useState } from "preact/hooks";
import {
  LobbyDocument,
  LobbyUpdatesDocument,
  type LobbyFilter,
  type LobbyUpdatesSubscription,
  type TableSummaryFragment,
} from "../graphql/generated";
import { live, onReconnect, query } from "../server/api";

type LobbyUpdate = LobbyUpdatesSubscription["lobbyUpdates"];

/** The lobby: a first list, then lobbyUpdates; refetched after a reconnect (no `since`). */
export function useLobby(filter: LobbyFilter): { tables: TableSummaryFragment[]; error: string | null; ready: boolean } {
  const [tables, setTables] = useState<TableSummaryFragment[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [ready, setReady] = useState(false);
  const key = JSON.stringify(filter);

  useEffect(() => {
    let alive = true;
    const matches = (table: TableSummaryFragment): boolean =>
      table.status !== "FINISHED" &&
      table.status !== "CLOSED" &&
      (!filter.openSeatsOnly || (table.status === "WAITING" && table.openSeats > 0)) &&
      (!filter.nameContains || (table.name ?? "").toLowerCase().includes(filter.nameContains.toLowerCase()));
    const merge = (old: TableSummaryFragment[], update: LobbyUpdate): TableSummaryFragment[] => {
      const rest = old.filter((t) => t.id !== update.tableId);
      if (update.event === "TABLE_REMOVED" || !update.table || !matches(update.table)) return rest;
      const index = old.findIndex((t) => t.id === update.tableId);
      if (index < 0) return [update.table, ...rest];
      const copy = [...old];
      copy[index] = update.table;
      return copy;
    };
    // Updates that arrive while the list loads are applied again on top of it: each one
    // carries its table whole, so replaying them in order ends at every table's newest
    // state whether the list was read before or after them.
    const loading = new Set<LobbyUpdate[]>();
    const load = async (): Promise<void> => {
      const missed: LobbyUpdate[] = [];
      loading.add(missed);
      const result = await query(LobbyDocument, { filter });
      loading.delete(missed);
      if (!alive) return;
      if (result.data) {
        setTables(missed.reduce(merge, result.data.lobby));
        setError(null);
      } else setError(result.error);
      setReady(true);
      // For scripts/measure_web.py: first load to an interactive lobby.
      if (performance.getEntriesByName("lobby-interactive").length === 0) performance.mark("lobby-interactive");
    };
    const stop = live(
      LobbyUpdatesDocument,
      {},
      ({ lobbyUpdates: update }) => {
        for (const missed of loading) missed.push(update);
        setTables((old) => merge(old, update));
      },
      (words) => setError(words),
    );
    void load();
    const stopReconnect = onReconnect(() => void load());
    return () => {
      alive = false;
      stop();
      stopReconnect();
    };
  }, [key]);

  return { tables, error, ready };
}
