import { useEffect, useRef, useState } from "preact/hooks";
import { MuteNotice, useMute } from "../../components/MuteNotice";
import { ReportButton } from "../../components/ReportButton";
import {
  ChatDocument,
  ChatMessagesDocument,
  SendChatDocument,
  type ChatChannel,
  type ChatFieldsFragment,
} from "../../graphql/generated";
import { live, mutate, onReconnect, query } from "../../server/api";

const NAMES: Record<ChatChannel, string> = { PLAYERS: "Table", SPECTATORS: "Spectators" };

/**
 * Table chat. PLAYERS: seated players write, everyone at the table reads. SPECTATORS:
 * spectators write and read; players read it once the game is over. Text is rendered
 * as text (Preact escapes it), never as HTML.
 */
export function Chat(props: { tableId: string; seated: boolean; gameOver: boolean }) {
  const { tableId, seated, gameOver } = props;
  const channels: ChatChannel[] = seated && !gameOver ? ["PLAYERS"] : ["PLAYERS", "SPECTATORS"];
  const writable: ChatChannel = seated ? "PLAYERS" : "SPECTATORS";
  const [channel, setChannel] = useState<ChatChannel>(writable);
  const [messages, setMessages] = useState<ChatFieldsFragment[]>([]);
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const list = useRef<HTMLOListElement>(null);
  const { mute, recheck } = useMute();

  useEffect(() => {
    let alive = true;
    const merge = (more: ChatFieldsFragment[]): void =>
      setMessages((old) => {
        const seen = new Set(old.map((m) => m.id));
        return [...old, ...more.filter((m) => !seen.has(m.id))].sort((a, b) => a.sentAt.localeCompare(b.sentAt));
      });
    const load = async (): Promise<void> => {
      for (const c of channels) {
        const result = await query(ChatDocument, { tableId, channel: c });
        if (alive && result.data) merge(result.data.chat);
      }
    };
    void load();
    const stop = live(ChatMessagesDocument, { tableId }, ({ chatMessages }) => merge([chatMessages]), () => undefined);
    const stopReconnect = onReconnect(() => void load());
    return () => {
      alive = false;
      stop();
      stopReconnect();
    };
  }, [tableId, channels.length]);

  useEffect(() => {
    list.current?.lastElementChild?.scrollIntoView({ block: "nearest" });
  }, [messages.length, channel]);

  const send = async (event: Event): Promise<void> => {
    event.preventDefault();
    const body = text.trim();
    if (!body) return;
    setError(null);
    const result = await mutate(SendChatDocument, { tableId, channel: writable, text: body });
    if (result.data) {
      const sent = result.data.sendChat;
      setMessages((old) => (old.some((m) => m.id === sent.id) ? old : [...old, sent]));
      setText("");
    } else {
      setError(result.error);
      if (result.code === "FORBIDDEN") recheck(); // muted meanwhile? the notice says why
    }
  };

  const shown = messages.filter((m) => m.channel === channel);
  return (
    <section class="panel chat" aria-labelledby="chat-title">
      <h2 id="chat-title">Chat</h2>
      {channels.length > 1 && (
        <div class="actions" role="group" aria-label="Chat channel">
          {channels.map((c) => (
            <button type="button" key={c} class="small" aria-pressed={channel === c} onClick={() => setChannel(c)}>
              {NAMES[c]}
            </button>
          ))}
        </div>
      )}
      <div class="chat-log" role="log" aria-live="polite" aria-label="Messages" data-chat={channel}>
        {shown.length === 0 && <p class="muted small">No messages yet.</p>}
        <ol class="plain" ref={list}>
          {shown.map((m) => (
            <li key={m.id}>
              <b>{m.from.username}</b> {m.text}{" "}
              <ReportButton playerId={m.from.id} username={m.from.username} messageId={m.id} />
            </li>
          ))}
        </ol>
      </div>
      {channel === writable && mute && <MuteNotice mute={mute} />}
      {channel === writable && (
        <form class="row" onSubmit={(e) => void send(e)}>
          <label class="grow">
            <span class="sr-only">Message</span>
            <input name="chat" maxLength={300} placeholder="Say something" value={text} disabled={mute !== null}
              onInput={(e) => setText(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={mute !== null}>Send</button>
        </form>
      )}
      {error && !mute && <p class="error" role="alert">{error}</p>}
    </section>
  );
}
