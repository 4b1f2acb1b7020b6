// A muted player's chat: why it is closed to them, and until when.
import { useEffect, useState } from "preact/hooks";
import { MyMuteDocument, type MyMuteQuery } from "../graphql/generated";
import { query } from "../server/api";

export type Mute = NonNullable<MyMuteQuery["myMute"]>;

/** The caller's mute, if any, and a function to read it again (after a refused message).
 * It is read again by itself when it ends. */
export function useMute(): { mute: Mute | null; recheck: () => void } {
  const [mute, setMute] = useState<Mute | null>(null);
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    let alive = true;
    void query(MyMuteDocument, {}).then((result) => {
      if (alive && result.data) setMute(result.data.myMute);
    });
    return () => {
      alive = false;
    };
  }, [asked]);
  useEffect(() => {
    if (!mute) return;
    const left = new Date(mute.endsAt).getTime() - Date.now();
    const timer = setTimeout(() => setAsked((n) => n + 1), Math.max(left, 0) + 500);
    return () => clearTimeout(timer);
  }, [mute]);
  return { mute, recheck: () => setAsked((n) => n + 1) };
}

const until = (iso: string): string => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
};

/** Why the chat box is disabled. */
export function MuteNotice({ mute }: { mute: Mute }) {
  return (
    <p class="muted-notice" role="status" data-muted-until={mute.endsAt}>
      A moderator muted you until {until(mute.endsAt)}: {mute.reason}. You can still read the chat.
    </p>
  );
}
