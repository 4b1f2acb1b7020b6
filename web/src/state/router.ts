// Client routes (History API); the server answers every one of them with index.html.
import { signal } from "../lib/signal";

export type Route =
  | { page: "lobby" }
  | { page: "social" }
  | { page: "moderation" }
  | { page: "leaderboard"; per: number }
  | { page: "profile"; username: string; per: number }
  | { page: "table"; tableId: string; code: string | null };

function parse(url: URL): Route {
  const table = /^\/table\/([^/]+)\/?$/.exec(url.pathname);
  if (table?.[1]) return { page: "table", tableId: decodeURIComponent(table[1]), code: url.searchParams.get("code") };
  if (url.pathname === "/friends") return { page: "social" };
  if (url.pathname === "/moderation") return { page: "moderation" };
  if (url.pathname === "/leaderboard") return { page: "leaderboard", per: pageSize(url) };
  const player = /^\/player\/([^/]+)\/?$/.exec(url.pathname);
  if (player?.[1]) return { page: "profile", username: decodeURIComponent(player[1]), per: pageSize(url) };
  return { page: "lobby" };
}

export const route = signal<Route>(parse(new URL(location.href)));

export function navigate(path: string): void {
  history.pushState(null, "", path);
  route.value = parse(new URL(location.href));
  window.scrollTo(0, 0);
}

window.addEventListener("popstate", () => (route.value = parse(new URL(location.href))));

export const tablePath = (tableId: string, code?: string | null): string =>
  `/table/${encodeURIComponent(tableId)}${code ? `?code=${encodeURIComponent(code)}` : ""}`;

export const profilePath = (username: string): string => `/player/${encodeURIComponent(username)}`;

/** Rows per page of a list (`?per=`, 1 to 50; 10 by default). */
function pageSize(url: URL): number {
  const per = Number(url.searchParams.get("per") ?? "10");
  return Number.isInteger(per) ? Math.min(Math.max(per, 1), 50) : 10;
}
