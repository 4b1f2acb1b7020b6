// The shell of every page: the header (navigation, connection, deck, player), the toast
// for notifications, the screen readers' live region, and the page the route names.
import { useEffect, useState } from "preact/hooks";
import { PlayerLink } from "./components/PlayerLink";
import {
  MeDocument,
  MyRoleDocument,
  NotificationsDocument,
  SignOutDocument,
  type PlayerFieldsFragment,
  type Role,
} from "./graphql/generated";
import { useSignal } from "./lib/signal";
import { Auth } from "./pages/auth/Auth";
import { LeaderboardPage } from "./pages/career/LeaderboardPage";
import { ModerationPage } from "./pages/moderation/ModerationPage";
import { ProfilePage } from "./pages/career/ProfilePage";
import { Lobby } from "./pages/lobby/Lobby";
import { Social } from "./pages/social/Social";
import { TablePage } from "./pages/table/TablePage";
import { cachedPlayer, link, live, mutate, onReconnect, query, savePlayer, signOutLocally, token } from "./server/api";
import { announcement } from "./state/announcement";
import { fourColour, soundsOn } from "./state/prefs";
import { navigate, route } from "./state/router";
import { socialTick } from "./state/social";
import { toast } from "./state/toast";

const NOTICE_WORDS: Record<string, (who: string) => string> = {
  FRIEND_REQUEST: (who) => `${who} sent you a friend request.`,
  FRIEND_ACCEPTED: (who) => `${who} accepted your friend request.`,
  FRIEND_DECLINED: (who) => `${who} declined your friend request.`,
  FRIEND_REMOVED: (who) => `${who} removed you as a friend.`,
  INVITATION: (who) => `${who} invited you to a table.`,
  INVITATION_DECLINED: (who) => `${who} declined your invitation.`,
  KICKED: () => "The host removed you from a table.",
};

export function App() {
  const currentToken = useSignal(token);
  // The cached player lets the lobby load at once; `me` confirms it (or signs out).
  const [me, setMe] = useState<PlayerFieldsFragment | null>(() => (token.value ? cachedPlayer() : null));
  const current = useSignal(route);
  const linkState = useSignal(link);
  const spoken = useSignal(announcement);
  const message = useSignal(toast);
  const deck = useSignal(fourColour);
  const sounds = useSignal(soundsOn);
  // On a narrow screen the header is one row: navigation and settings fold into a menu.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [current]);
  const [role, setRole] = useState<Role>("PLAYER");

  useEffect(() => {
    if (!currentToken) {
      setMe(null);
      setRole("PLAYER");
      return;
    }
    setMe(cachedPlayer());
    void query(MyRoleDocument, {}).then((result) => setRole(result.data?.myRole ?? "PLAYER"));
    void query(MeDocument, {}).then((result) => {
      if (result.data?.me) {
        savePlayer(result.data.me);
        const confirmed = result.data.me;
        setMe((old) => (old?.id === confirmed.id && old.username === confirmed.username ? old : confirmed));
      } else if (result.data || result.code === "UNAUTHENTICATED") signOutLocally();
    });
    const stop = live(
      NotificationsDocument,
      {},
      ({ notifications: note }) => {
        const who = note.player?.username ?? "Someone";
        toast.value = (NOTICE_WORDS[note.event] ?? (() => `Notice: ${note.event}`))(who);
        socialTick.value += 1;
        // Kicked from the table on screen: its stream says nothing more to one who may
        // no longer see it, so leave it for the lobby (the toast says why).
        const at = route.value;
        if (note.event === "KICKED" && at.page === "table" && at.tableId === note.tableId) navigate("/");
      },
      () => undefined,
    );
    // Notifications have no `since`: after a drop, the social lists are read again.
    const stopReconnect = onReconnect(() => (socialTick.value += 1));
    return () => {
      stop();
      stopReconnect();
    };
  }, [currentToken]);

  useEffect(() => {
    if (!message) return;
    const timer = setTimeout(() => (toast.value = null), 6000);
    return () => clearTimeout(timer);
  }, [message]);

  const signOut = async (): Promise<void> => {
    await mutate(SignOutDocument, {});
    signOutLocally();
    navigate("/");
  };

  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href="/" onClick={(e) => { e.preventDefault(); navigate("/"); }}>
          <span aria-hidden="true">♠</span> Spades Online
        </a>
        <span class={`link link-${linkState}`} data-link={linkState} role="status">
          {linkState === "reconnecting" ? "Reconnecting…" : linkState === "online" ? "Live" : ""}
        </span>
        <button type="button" class="ghost menu-button" aria-expanded={menuOpen} aria-controls="top-menu"
          onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <div id="top-menu" class="top-menu" data-open={menuOpen ? "true" : undefined}>
          {me && (
            <nav aria-label="Main">
              <a href="/" aria-current={current.page === "lobby" ? "page" : undefined}
                onClick={(e) => { e.preventDefault(); navigate("/"); }}>Lobby</a>
              <a href="/friends" aria-current={current.page === "social" ? "page" : undefined}
                onClick={(e) => { e.preventDefault(); navigate("/friends"); }}>Friends</a>
              <a href="/leaderboard" aria-current={current.page === "leaderboard" ? "page" : undefined}
                onClick={(e) => { e.preventDefault(); navigate("/leaderboard"); }}>Leaderboard</a>
              {role !== "PLAYER" && (
                <a href="/moderation" aria-current={current.page === "moderation" ? "page" : undefined}
                  onClick={(e) => { e.preventDefault(); navigate("/moderation"); }}>Moderation</a>
              )}
            </nav>
          )}
          <div class="top-right">
            <label class="toggle">
              <input type="checkbox" checked={deck} onChange={(e) => (fourColour.value = e.currentTarget.checked)} />
              Four-colour deck
            </label>
            <label class="toggle">
              <input type="checkbox" name="sounds" checked={sounds} onChange={(e) => (soundsOn.value = e.currentTarget.checked)} />
              Sounds
            </label>
            {me && (
              <>
                <span class="me" data-me={me.username}><PlayerLink username={me.username} /></span>
                <button type="button" class="ghost" onClick={() => void signOut()}>Sign out</button>
              </>
            )}
          </div>
        </div>
      </header>
      <div class="sr-only" aria-live="polite" aria-atomic="true">{spoken}</div>
      {message && (
        <div class="toast" role="status">
          {message} <button type="button" class="ghost" onClick={() => (toast.value = null)} aria-label="Dismiss">×</button>
        </div>
      )}
      <main id="main">
        {!currentToken ? (
          <Auth />
        ) : !me ? (
          <p class="muted">Loading…</p>
        ) : current.page === "table" ? (
          <TablePage key={current.tableId} tableId={current.tableId} code={current.code} me={me} />
        ) : current.page === "profile" ? (
          <ProfilePage key={current.username} username={current.username} per={current.per} />
        ) : current.page === "leaderboard" ? (
          <LeaderboardPage per={current.per} />
        ) : current.page === "social" ? (
          <Social me={me} />
        ) : current.page === "moderation" ? (
          <ModerationPage />
        ) : (
          <Lobby me={me} />
        )}
      </main>
    </>
  );
}
