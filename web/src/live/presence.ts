// Who is at the table: each seat's connection, live (presenceUpdates: first the four
// seats, then each change). Presence is not game state: it has no version and no `since`;
// after a drop the subscription starts over with the four seats.
import { useEffect, useState } from "preact/hooks";
import { PresenceUpdatesDocument, type PresenceFieldsFragment, type Seat } from "../graphql/generated";
import { live } from "../server/api";

export type Presence = Partial<Record<Seat, PresenceFieldsFragment>>;

/** The seats' presence at a table (null tableId: not subscribed, nothing known). */
export function usePresence(tableId: string | null): Presence {
  const [presence, setPresence] = useState<Presence>({});
  useEffect(() => {
    setPresence({});
    if (!tableId) return;
    return live(
      PresenceUpdatesDocument,
      { tableId },
      ({ presenceUpdates: entry }) => setPresence((old) => ({ ...old, [entry.seat]: entry })),
      () => undefined, // the table's own stream tells why a table cannot be watched
    );
  }, [tableId]);
  return presence;
}

/** Whether the human in `seat` (with id `playerId`) is connected; null when unknown. */
export function connectedIn(presence: Presence, seat: Seat, playerId: string | null | undefined): boolean | null {
  const entry = presence[seat];
  return entry && playerId && entry.playerId === playerId ? entry.connected : null;
}
