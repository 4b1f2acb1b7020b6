// The moderators' page: the open reports, oldest first, each with the reported message
// among the messages around it, and what a moderator may do about it.
import { useEffect, useState } from "preact/hooks";
import { PlayerLink } from "../../components/PlayerLink";
import {
  BanPlayerDocument,
  HideChatMessageDocument,
  MutePlayerDocument,
  ReportsDocument,
  ResolveReportDocument,
  type ReportFieldsFragment,
} from "../../graphql/generated";
import { enumWords } from "../../lib/format";
import { mutate, query } from "../../server/api";

const PAGE = 20;
const MUTES: [string, number][] = [["10 minutes", 10], ["1 hour", 60], ["1 day", 1440], ["1 week", 10080]];

const when = (iso: string): string => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
};

/** The reported message among its neighbours, the reported one marked. */
function Context({ report }: { report: ReportFieldsFragment }) {
  const reported = report.message;
  if (!reported) return <p class="muted small">No message named: the report is about the player.</p>;
  const lines = report.context.length > 0 ? report.context : [reported];
  return (
    <ol class="plain report-context" aria-label="The reported message in context">
      {lines.map((m) => {
        const it = m.id === reported.id;
        return (
          <li key={m.id} data-reported={it ? "true" : undefined} class={it ? "reported" : undefined}>
            <b>{m.from.username}</b> {it ? <mark>{m.text}</mark> : m.text}
            {it && report.messageHidden && <span class="muted small"> (hidden)</span>}
          </li>
        );
      })}
    </ol>
  );
}

/** One report and the moderator's actions: mute, ban, hide, dismiss. */
function ReportCard(props: { report: ReportFieldsFragment; done: (id: string) => void }) {
  const { report, done } = props;
  const [reason, setReason] = useState(enumWords(report.reason));
  const [minutes, setMinutes] = useState(60);
  const [hidden, setHidden] = useState(report.messageHidden);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const who = report.reported;

  const act = async (run: () => Promise<{ error?: string }>, resolveAs: "ACTIONED" | "DISMISSED" | null): Promise<void> => {
    setBusy(true);
    setError(null);
    const result = await run();
    if (result.error === undefined && resolveAs !== null) {
      const resolved = await mutate(ResolveReportDocument, { reportId: report.id, status: resolveAs });
      if (resolved.error !== undefined) setError(resolved.error);
      else done(report.id);
    } else if (result.error !== undefined) setError(result.error);
    setBusy(false);
  };
  const mute = () => act(() => mutate(MutePlayerDocument, { playerId: who.id, minutes, reason }), "ACTIONED");
  const ban = () => act(() => mutate(BanPlayerDocument, { playerId: who.id, reason }), "ACTIONED");
  const dismiss = () => act(() => Promise.resolve({}), "DISMISSED");
  const closeActioned = () => act(() => Promise.resolve({}), "ACTIONED");
  const hide = (): Promise<void> => {
    const messageId = report.message?.id;
    if (!messageId) return Promise.resolve();
    return act(async () => {
      const result = await mutate(HideChatMessageDocument, { messageId });
      if (result.data) setHidden(true);
      return result;
    }, null);
  };

  return (
    <li class="panel report" data-report={report.id} aria-label={`Report about ${who.username}`}>
      <p>
        <PlayerLink username={report.reporter.username} /> reported <PlayerLink username={who.username} />{" "}
        for <b>{enumWords(report.reason)}</b> <span class="muted small">{when(report.createdAt)}</span>
      </p>
      {report.note && <blockquote class="note">{report.note}</blockquote>}
      <Context report={{ ...report, messageHidden: hidden }} />
      <div class="row">
        <label>
          Reason given to the player
          <input name="reason" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
        <label>
          Mute for
          <select value={minutes} onChange={(e) => setMinutes(Number(e.currentTarget.value))}>
            {MUTES.map(([words, value]) => <option key={value} value={value}>{words}</option>)}
          </select>
        </label>
      </div>
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => void mute()}>Mute {who.username}</button>
        <button type="button" class="danger" disabled={busy} onClick={() => void ban()}>Ban {who.username}</button>
        {report.message && (
          <button type="button" disabled={busy || hidden} onClick={() => void hide()}>
            {hidden ? "Message hidden" : "Hide message"}
          </button>
        )}
        {hidden && <button type="button" disabled={busy} onClick={() => void closeActioned()}>Close as handled</button>}
        <button type="button" class="ghost" disabled={busy} onClick={() => void dismiss()}>Dismiss</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
    </li>
  );
}

/** The queue of open reports, page by page. */
export function ModerationPage() {
  const [reports, setReports] = useState<ReportFieldsFragment[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = async (after: string | null): Promise<void> => {
    setError(null);
    const result = await query(ReportsDocument, { status: "OPEN", first: PAGE, after });
    if (result.error !== undefined) return setError(result.error);
    const page = result.data.reports;
    const nodes = page.edges.map((edge) => edge.node);
    setReports((old) => (after === null ? nodes : [...old, ...nodes]));
    setNext(page.pageInfo.hasNextPage ? (page.pageInfo.endCursor ?? null) : null);
    setReady(true);
  };
  useEffect(() => void load(null), []);

  return (
    <section class="moderation" aria-labelledby="moderation-title" data-ready={ready ? "moderation" : undefined}>
      <h1 id="moderation-title">Moderation</h1>
      <p class="muted small">Open reports, oldest first.</p>
      {error && <p class="error" role="alert">{error}</p>}
      {ready && reports.length === 0 && <p class="muted">No open reports.</p>}
      <ol class="plain">
        {reports.map((r) => (
          <ReportCard key={r.id} report={r} done={(id) => setReports((old) => old.filter((x) => x.id !== id))} />
        ))}
      </ol>
      {next !== null && <button type="button" onClick={() => void load(next)}>Show more reports</button>}
    </section>
  );
}
