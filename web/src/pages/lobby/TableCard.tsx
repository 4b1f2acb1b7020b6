import { useState } from "preact/hooks";
import { JoinTableDocument, type PlayerFieldsFragment, type Seat, type TableSummaryFragment } from "../../graphql/generated";
import { botName, seatName } from "../../lib/cards";
import { enumWords } from "../../lib/format";
import { clockWords } from "../../lib/tableOptions";
import { mutate } from "../../server/api";
import { navigate, tablePath } from "../../state/router";

/** One table of the lobby: its options, its seats (sit in a free one), open or watch it. */
export function TableCard({ table, me }: { table: TableSummaryFragment; me: PlayerFieldsFragment }) {
  const [error, setError] = useState<string | null>(null);
  const seated = table.seats.some((s) => s.playerId === me.id);
  // A seat a bot holds for me (after timeouts or a lost connection): I can take it back.
  const away = table.seats.some((s) => s.awayPlayer?.id === me.id);
  const sit = async (seat: Seat): Promise<void> => {
    const result = await mutate(JoinTableDocument, { tableId: table.id, seat, code: null });
    if (result.data) navigate(tablePath(table.id));
    else setError(result.error);
  };
  const title = table.name ?? `${table.host.username}'s table`;
  return (
    <li class="table-card panel" data-table-id={table.id}>
      <div class="table-card-head">
        <h3>{title}</h3>
        <span class={`badge status-${table.status.toLowerCase()}`}>{enumWords(table.status)}</span>
      </div>
      <p class="muted small">
        Host {table.host.username} · {enumWords(table.visibility)} · {enumWords(table.joinPolicy)} to sit
        {table.spectating ? " · spectators welcome" : ""}
        {table.rated ? " · rated" : ""} · {clockWords(table.turnSeconds)}
      </p>
      {away && <p class="small notice">A bot holds your seat here: open the table to take it back.</p>}
      <ul class="seat-list" aria-label={`Seats at ${title}`}>
        {table.seats.map((s) => (
          <li key={s.seat}>
            <span class="seat-label">{seatName(s.seat)}</span>{" "}
            {s.playerId ? (
              <span>{s.isBot ? botName(s.botLevel) : s.username}
                {s.awayPlayer && <span class="muted"> for {s.awayPlayer.username}</span>}</span>
            ) : table.status === "WAITING" && !seated ? (
              <button type="button" class="small" onClick={() => void sit(s.seat)}
                aria-label={`Sit ${seatName(s.seat)} at ${title}`}>Sit here</button>
            ) : (
              <span class="muted">empty</span>
            )}
          </li>
        ))}
      </ul>
      <div class="actions">
        {seated || away ? (
          <button type="button" class="primary" onClick={() => navigate(tablePath(table.id))}>Open</button>
        ) : table.spectating ? (
          <button type="button" onClick={() => navigate(tablePath(table.id))} aria-label={`Watch ${title}`}>Watch</button>
        ) : null}
      </div>
      {error && <p class="error" role="alert">{error}</p>}
    </li>
  );
}
