// Client routes (History API); the server answers every one of them with index.html.
import { signal } from "./signal";

export type Route =
  | { page: "lobby" }
  | { page: "social" }
  | { page: "table"; tableId: string; code: string | null };

function parse(url: URL): Route {
  const table = /^\/table\/([^/]+)\/?$/.exec(url.pathname);
  if (table?.[1]) return { page: "table", tableId: decodeURIComponent(table[1]), code: url.searchParams.get("code") };
  if (url.pathname === "/friends") return { page: "social" };
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
