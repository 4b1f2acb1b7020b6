// Live state: the game of one table and the lobby, each driven by its subscription.
// A game stream keeps the last version it applied; after a WebSocket drop, or on a gap
// in versions, it resubscribes with `since` so the server replays exactly what was missed.
import { useEffect, useRef, useState } from "preact/hooks";
import { live, onReconnect, query } from "./api";
import { cardName, seatName, teamName } from "./cards";
import {
  GameUpdatesDocument,
  LobbyDocument,
  LobbyUpdatesDocument,
  type GameFieldsFragment,
  type GameUpdatesSubscription,
  type LobbyFilter,
  type TableSummaryFragment,
} from "./graphql/generated";
import { signal } from "./signal";

export type GameView = GameFieldsFragment;
type Update = GameUpdatesSubscription["gameUpdates"];

/** What screen readers hear (an aria-live region renders it). */
export const announcement = signal("");

function describe(update: Update): string | null {
  const who = update.seat ? seatName(update.seat) : "";
  const view = update.view;
  switch (update.event) {
    case "CARD_PLAYED": {
      const play = view.currentTrick.find((p) => p.seat === update.seat) ??
        view.lastTrick?.plays.find((p) => p.seat === update.seat);
      return play ? `${who} played the ${cardName(play.card)}.` : `${who} played.`;
    }
    case "TRICK_WON":
      return view.lastTrick ? `${seatName(view.lastTrick.winner)} won the trick.` : null;
    case "BID_PLACED": {
      const bid = view.seats.find((s) => s.seat === update.seat)?.bid;
      if (!bid) return `${who} bid.`;
      return `${who} bid ${bid.kind === "TRICKS" ? String(bid.tricks) : bid.kind === "NIL" ? "Nil" : "Blind Nil"}.`;
    }
    case "HAND_SCORED":
      return `Hand ${view.handNumber} scored.`;
    case "GAME_OVER":
      return view.winner ? `Game over: ${teamName(view.winner)} won.` : "Game over.";
    case "GAME_STARTED":
      return "The game has started.";
    case "SEAT_TAKEN":
      return `${who} sat down.`;
    case "REMATCH_REQUESTED":
      return `${who} asked for a rematch.`;
    case "REMATCH_STARTED":
      return "The rematch has started.";
    case "PLAYER_REPLACED":
      return `A bot took the ${who} seat.`;
    default:
      return null;
  }
}

export interface GameStream {
  view: GameView | null;
  lastEvent: string | null;
  error: string | null;
  /** Apply a view a mutation returned (ignored if the stream is already further). */
  apply: (view: GameView) => void;
}

/**
 * The live game of a table (null tableId: not subscribed). `viewerKey` names who is
 * watching (a seat, or a spectator): a change starts a fresh stream with a SNAPSHOT,
 * as every stream is projected for one viewer.
 */
export function useGameStream(tableId: string | null, viewerKey: string): GameStream {
  const [view, setView] = useState<GameView | null>(null);
  const [lastEvent, setLastEvent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const version = useRef<number | null>(null);

  const accept = (next: GameView, event: string | null): void => {
    version.current = next.version;
    setView(next);
    if (event) setLastEvent(event);
  };

  useEffect(() => {
    if (!tableId) return;
    version.current = null;
    let stop: (() => void) | null = null;
    const start = (): void => {
      stop?.();
      stop = live(
        GameUpdatesDocument,
        { tableId, since: version.current },
        ({ gameUpdates: update }) => {
          const current = version.current;
          const next = update.view.version;
          if (update.event !== "SNAPSHOT" && current !== null) {
            if (next <= current) return; // already applied (a mutation result, a replay)
            if (next > current + 1) {
              start(); // a gap: ask for what is missing
              return;
            }
          }
          setError(null);
          accept(update.view, update.event);
          const words = describe(update);
          if (words) announcement.value = words;
        },
        (words) => setError(words),
      );
    };
    start();
    const stopReconnect = onReconnect(start);
    return () => {
      stopReconnect();
      stop?.();
    };
  }, [tableId, viewerKey]);

  return {
    view,
    lastEvent,
    error,
    apply: (next) => {
      if (version.current === null || next.version > version.current) accept(next, null);
    },
  };
}

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
    const load = async (): Promise<void> => {
      const result = await query(LobbyDocument, { filter });
      if (!alive) return;
      if (result.data) {
        setTables(result.data.lobby);
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
        setTables((old) => {
          const rest = old.filter((t) => t.id !== update.tableId);
          if (update.event === "TABLE_REMOVED" || !update.table || !matches(update.table)) return rest;
          const index = old.findIndex((t) => t.id === update.tableId);
          if (index < 0) return [update.table, ...rest];
          const copy = [...old];
          copy[index] = update.table;
          return copy;
        });
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
