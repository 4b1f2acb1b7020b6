// Report a player (from their profile) or one of their chat messages: a reason and an
// optional note. Moderators see the report in their queue.
import { useState } from "preact/hooks";
import { ReportPlayerDocument, type ReportReason } from "../graphql/generated";
import { enumWords } from "../lib/format";
import { cachedPlayer, mutate } from "../server/api";

const REASONS: ReportReason[] = ["ABUSIVE_CHAT", "CHEATING", "STALLING", "OTHER"];
const MAX_NOTE = 500;

/** A "Report" button that opens a small form; nothing for the signed-in player themself. */
export function ReportButton(props: { playerId: string; username: string; messageId?: string }) {
  const { playerId, username, messageId } = props;
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState<ReportReason>(messageId ? "ABUSIVE_CHAT" : "OTHER");
  const [note, setNote] = useState("");
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (cachedPlayer()?.id === playerId) return null;
  const what = messageId ? `message from ${username}` : username;

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError(null);
    const result = await mutate(ReportPlayerDocument, {
      playerId,
      reason,
      messageId: messageId ?? null,
      note: note.trim() || null,
    });
    if (result.data) {
      setSent(true);
      setOpen(false);
    } else setError(result.error);
  };

  if (sent) return <span class="muted small" role="status">Reported</span>;
  if (!open) {
    return (
      <button type="button" class="linkish small report" aria-label={`Report ${what}`} onClick={() => setOpen(true)}>
        Report
      </button>
    );
  }
  return (
    <form class="report-form" aria-label={`Report ${what}`} onSubmit={(e) => void submit(e)}>
      <label>
        Reason
        <select value={reason} onChange={(e) => setReason(e.currentTarget.value as ReportReason)}>
          {REASONS.map((r) => <option key={r} value={r}>{enumWords(r)}</option>)}
        </select>
      </label>
      <label>
        Note (optional)
        <textarea maxLength={MAX_NOTE} rows={2} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
      </label>
      <div class="actions">
        <button type="submit" class="small">Send report</button>
        <button type="button" class="small ghost" onClick={() => setOpen(false)}>Cancel</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
    </form>
  );
}
