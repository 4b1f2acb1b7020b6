// The live game of one table, driven by its subscription (gameUpdates). A game stream
// keeps the last version it applied; after a WebSocket drop, or on a gap in versions,
// it resubscribes with `since` so the server replays exactly what was missed.
import { useEffect, useRef, useState } from "preact/hooks";
import { GameUpdatesDocument, type GameEvent, type GameFieldsFragment } from "../graphql/generated";
import { describe, TABLE_EVENTS, type Update } from "../lib/events";
import { summarize, type HandSummary } from "../lib/handSummary";
import { landedAfter, lastLanded, type LandedTrick } from "../lib/tricks";
import { live, onReconnect } from "../server/api";
import { announcement } from "../state/announcement";

export type GameView = GameFieldsFragment;

/** One line of the table's log. */
export interface LogEntry {
  version: number;
  event: GameEvent;
  words: string;
}

const LOG_LENGTH = 60;

export interface GameStream {
  view: GameView | null;
  error: string | null;
  /** The latest changes in words, newest last (since this page opened). */
  log: LogEntry[];
  /** Bumped by each change of the table itself (seats, host, options, status). */
  tableChanges: number;
  /** TABLE_CLOSED arrived: the table's last change. */
  closed: boolean;
  /** The latest trick completed while this page watched (not one already done when it
   * opened): every view is looked at, the stream's older ones too. */
  landed: LandedTrick | null;
  /** The latest hand scored while this page watched. */
  scored: HandSummary | null;
  /** Apply a view a mutation returned (ignored if the stream is already further). */
  apply: (view: GameView) => void;
}

/**
 * The live game of a table (null tableId: not subscribed). The server projects each
 * update for the subscriber as they stand at that change, so one stream serves a viewer
 * who sits down, is replaced by a bot or takes their seat back: no change is missed.
 */
export function useGameStream(tableId: string | null): GameStream {
  const [view, setView] = useState<GameView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [log, setLog] = useState<LogEntry[]>([]);
  const [tableChanges, setTableChanges] = useState(0);
  const [closed, setClosed] = useState(false);
  const [landed, setLanded] = useState<LandedTrick | null>(null);
  const [scored, setScored] = useState<HandSummary | null>(null);
  // The version on screen (a mutation's result may be ahead of the stream) and the last
  // version the stream delivered (each change is logged once, in order, even if its view
  // was already on screen).
  const applied = useRef<number | null>(null);
  const streamed = useRef<number | null>(null);
  // The latest completed trick seen in any view (undefined: no view seen yet).
  const lastTrick = useRef<LandedTrick | null | undefined>(undefined);

  // A view that shows a trick completed after every one seen so far lands it (the first
  // view only sets where the page starts).
  const notice = (next: GameView): void => {
    const trick = lastLanded(next);
    if (lastTrick.current === undefined) lastTrick.current = trick;
    else if (trick && landedAfter(trick, lastTrick.current)) {
      lastTrick.current = trick;
      setLanded(trick);
    }
  };
  const accept = (next: GameView): void => {
    notice(next);
    if (applied.current !== null && next.version <= applied.current) return;
    applied.current = next.version;
    setView(next);
  };
  const record = (update: Update): void => {
    // A SNAPSHOT too: the table may have changed between reading it and subscribing.
    if (TABLE_EVENTS.has(update.event) || update.event === "SNAPSHOT") setTableChanges((n) => n + 1);
    if (update.event === "TABLE_CLOSED") setClosed(true);
    if (update.event === "HAND_SCORED") setScored(summarize(update.view));
    const words = describe(update);
    if (!words) return;
    announcement.value = words;
    const entry = { version: update.view.version, event: update.event, words };
    setLog((old) => [...old, entry].slice(-LOG_LENGTH));
  };

  useEffect(() => {
    if (!tableId) return;
    applied.current = null;
    streamed.current = null;
    lastTrick.current = undefined;
    let stop: (() => void) | null = null;
    const start = (): void => {
      stop?.();
      stop = live(
        GameUpdatesDocument,
        { tableId, since: streamed.current },
        ({ gameUpdates: update }) => {
          const last = streamed.current;
          const next = update.view.version;
          if (update.event !== "SNAPSHOT" && last !== null) {
            if (next <= last) return; // a replay of what this stream delivered
            if (next > last + 1) {
              start(); // a gap: ask for what is missing
              return;
            }
          }
          streamed.current = next;
          setError(null);
          accept(update.view);
          record(update);
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
  }, [tableId]);

  return {
    view,
    error,
    log,
    tableChanges,
    closed,
    landed,
    scored,
    apply: accept,
  };
}
