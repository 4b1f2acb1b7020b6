// The player's quick-play ticket, live (quickPlayUpdates: the latest ticket first, then
// each change). The subscription is also what keeps a searching ticket: the server ends
// one EXPIRED once its owner has not watched it for 10 seconds.
import { useEffect, useState } from "preact/hooks";
import { QuickPlayUpdatesDocument, type QuickPlayTicketFieldsFragment } from "../graphql/generated";
import { live } from "../server/api";

export type Ticket = QuickPlayTicketFieldsFragment;

export interface QuickPlay {
  /** The latest ticket (null: none yet, or not heard yet). */
  ticket: Ticket | null;
  error: string | null;
  /** A ticket the page got from a mutation's answer (shown at once). */
  show: (ticket: Ticket | null) => void;
}

/** The latest ticket; `onMatched` is called with the table of a ticket seen searching
 * on this page that then ended MATCHED (not for an old match found on arrival). */
export function useQuickPlay(onMatched: (tableId: string) => void): QuickPlay {
  const [ticket, setTicket] = useState<Ticket | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [searched] = useState(() => new Set<string>());

  const take = (next: Ticket | null): void => {
    if (next === null) return setTicket(null);
    setTicket((old) => (old && old.id === next.id && old.status !== "SEARCHING" && next.status === "SEARCHING" ? old : next));
    if (next.status === "SEARCHING") searched.add(next.id);
    else if (next.status === "MATCHED" && next.table && searched.delete(next.id)) onMatched(next.table.id);
  };

  useEffect(
    () =>
      live(
        QuickPlayUpdatesDocument,
        {},
        ({ quickPlayUpdates }) => {
          setError(null);
          take(quickPlayUpdates);
        },
        (words) => setError(words),
      ),
    [],
  );
  return { ticket, error, show: take };
}
