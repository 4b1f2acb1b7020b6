// The server's clock as seen from here. Turn deadlines are instants on the server's
// clock; this machine's clock may be off by seconds, so the client measures the offset
// (serverTime - local time) once per connection, taking the answer to be from halfway
// through the round trip.
import { useEffect, useState } from "preact/hooks";
import { ServerTimeDocument } from "../graphql/generated";
import { signal, useSignal } from "../lib/signal";
import { onReconnect, query } from "../server/api";

/** Milliseconds to add to `Date.now()` to get the server's time (0 until measured). */
export const clockOffset = signal(0);

let measured: Promise<void> | null = null;

/** Measure the offset unless this connection already did. */
export function measureClock(): Promise<void> {
  measured ??= (async () => {
    const sent = Date.now();
    const result = await query(ServerTimeDocument, {});
    const received = Date.now();
    const server = result.data ? Date.parse(result.data.serverTime) : Number.NaN;
    if (Number.isNaN(server)) {
      measured = null; // try again next time
      return;
    }
    clockOffset.value = server - (sent + received) / 2;
  })();
  return measured;
}

// A new connection (after a drop, or a sleeping laptop) measures again.
onReconnect(() => {
  measured = null;
  void measureClock();
});

/** Milliseconds left until `deadline` (an ISO instant on the server's clock), ticking. */
export function useRemaining(deadline: string | null): number | null {
  const offset = useSignal(clockOffset);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!deadline) return;
    void measureClock();
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [deadline]);
  if (!deadline) return null;
  return Math.max(0, Date.parse(deadline) - (now + offset));
}
