import type { LogEntry } from "../../live/game";

/**
 * What happened at the table since this page opened, newest first, in words (timeouts,
 * seats taken over and taken back, the table closing included). Screen readers hear each
 * change once through the page's live region, so this list itself is not live.
 */
export function TableLog({ entries }: { entries: LogEntry[] }) {
  return (
    <section class="panel table-log" aria-labelledby="log-title">
      <h2 id="log-title">Table log</h2>
      {entries.length === 0 ? (
        <p class="muted small">Nothing has happened since you opened the table.</p>
      ) : (
        <ol class="plain log-list small" data-log tabIndex={0} aria-labelledby="log-title">
          {[...entries].reverse().map((entry) => (
            <li key={entry.version} data-event={entry.event}>{entry.words}</li>
          ))}
        </ol>
      )}
    </section>
  );
}
