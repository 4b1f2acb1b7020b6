import { useEffect, useState } from "preact/hooks";
import { CancelQuickPlayDocument, QuickPlaySearchingDocument, StartQuickPlayDocument } from "../../graphql/generated";
import { useSignal } from "../../lib/signal";
import { useQuickPlay, type Ticket } from "../../live/quickplay";
import { mutate, query } from "../../server/api";
import { clockOffset, measureClock } from "../../state/clock";
import { navigate, tablePath } from "../../state/router";

const SEARCHING_POLL_MS = 3_000;

/** "Play now": one click into a game (rated or not), then a waiting panel until the
 * matchmaker seats the player, who is taken to the table by themself. */
export function QuickPlay() {
  const { ticket, error: liveError, show } = useQuickPlay((tableId) => navigate(tablePath(tableId)));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const start = async (rated: boolean): Promise<void> => {
    setBusy(true);
    setError(null);
    const result = await mutate(StartQuickPlayDocument, { input: { rated } });
    setBusy(false);
    if (result.data) show(result.data.startQuickPlay);
    else setError(result.code === "ALREADY_SEATED" ? "You are seated at a table: finish that game first." : result.error);
  };
  const cancel = async (): Promise<void> => {
    setBusy(true);
    const result = await mutate(CancelQuickPlayDocument, {});
    setBusy(false);
    if (result.data) show(result.data.cancelQuickPlay);
    else setError(result.error);
  };

  const problem = error ?? liveError;
  if (ticket?.status === "SEARCHING") {
    return <Waiting ticket={ticket} busy={busy} error={problem} onCancel={() => void cancel()} />;
  }
  return (
    <section class="panel quick-play" aria-labelledby="quick-play-title" data-quickplay="idle">
      <h2 id="quick-play-title">Play now</h2>
      <p class="muted small">We seat you with three players of your level. Unrated games fill empty seats with bots if nobody comes.</p>
      <div class="row">
        <button type="button" class="primary big" disabled={busy} onClick={() => void start(false)}>Play now</button>
        <button type="button" class="big" disabled={busy} onClick={() => void start(true)}>Play rated</button>
      </div>
      {ticket && ticket.status !== "MATCHED" && (
        <p class="muted small" data-last={ticket.status}>
          {ticket.status === "EXPIRED" ? "Your last search ended while you were away." : "Search cancelled."}
        </p>
      )}
      {problem && <p class="error" role="alert">{problem}</p>}
    </section>
  );
}

/** The waiting panel: time waited, players searching, when bots join, Cancel. */
function Waiting({ ticket, busy, error, onCancel }: { ticket: Ticket; busy: boolean; error: string | null; onCancel: () => void }) {
  const now = useServerNow();
  const searching = useSearchingCount();
  const waited = Math.max(0, Math.floor((now - Date.parse(ticket.startedAt)) / 1000));
  const botsIn = ticket.botsAt ? Math.max(0, Math.ceil((Date.parse(ticket.botsAt) - now) / 1000)) : null;
  return (
    <section class="panel quick-play waiting" aria-labelledby="quick-play-title" data-quickplay="searching" aria-live="polite">
      <h2 id="quick-play-title">Finding a {ticket.rated ? "rated " : ""}game…</h2>
      <p>
        Waiting <span data-waited={waited}>{clock(waited)}</span>
      </p>
      {searching !== null && (
        <p class="muted" data-searching={searching}>
          {searching === 1 ? "1 player" : `${searching} players`} looking for a game
        </p>
      )}
      <p class="muted small" data-bots={botsIn ?? "never"}>
        {botsIn === null
          ? "Rated games are for four people: no bots."
          : botsIn > 0
            ? `Bots take the empty seats in ${botsIn} s.`
            : "Bots are taking the empty seats…"}
      </p>
      {error && <p class="error" role="alert">{error}</p>}
      <button type="button" disabled={busy} onClick={onCancel}>Cancel</button>
    </section>
  );
}

/** m:ss */
const clock = (seconds: number): string => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;

/** The server's time now (ms), ticking twice a second. */
function useServerNow(): number {
  const offset = useSignal(clockOffset);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    void measureClock();
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, []);
  return now + offset;
}

/** How many tickets search now (all processes), asked every few seconds. */
function useSearchingCount(): number | null {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    let alive = true;
    const ask = async (): Promise<void> => {
      const result = await query(QuickPlaySearchingDocument, {});
      if (alive && result.data) setCount(result.data.quickPlaySearching);
    };
    void ask();
    const timer = setInterval(() => void ask(), SEARCHING_POLL_MS);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, []);
  return count;
}
