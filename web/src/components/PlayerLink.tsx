import type { ComponentChildren } from "preact";
import { navigate, profilePath } from "../state/router";

/** A player's name that opens their profile (a real link: keyboard, middle-click, copy). */
export function PlayerLink({ username, children }: { username: string; children?: ComponentChildren }) {
  const href = profilePath(username);
  return (
    <a class="player-link" href={href} data-player={username}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(href);
      }}>
      {children ?? username}
    </a>
  );
}
