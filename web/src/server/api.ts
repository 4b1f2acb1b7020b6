// The one GraphQL client: urql over HTTP for queries and mutations, graphql-ws
// (graphql-transport-ws) for subscriptions. The WebSocket reconnects on its own, whether
// the server restarts (close code 1012: a deploy drains each process in turn, and the
// next connection goes to another), goes away (1001) or the connection drops (1006);
// after it, `onReconnect` listeners resubscribe with `since` (see live/game.ts), so
// nothing is missed.
import {
  Client,
  createRequest,
  fetchExchange,
  subscriptionExchange,
  type AnyVariables,
  type CombinedError,
  type TypedDocumentNode,
} from "@urql/core";
import { createClient as createWSClient } from "graphql-ws";
import { pipe, subscribe } from "wonka";
import { signal } from "../lib/signal";
import { errorWords } from "./errors";

const TOKEN_KEY = "spades.token";
const PLAYER_KEY = "spades.player";

export const token = signal<string | null>(localStorage.getItem(TOKEN_KEY));

/** Why the player was signed out by the server, when it said (a ban); shown on the sign-in page. */
export const signedOutBecause = signal<string | null>(null);
const BANNED = "account banned";

export type Link = "idle" | "connecting" | "online" | "reconnecting";
/** The WebSocket's state, shown in the header (and by tests as `data-link`). */
export const link = signal<Link>("idle");

const reconnectListeners = new Set<() => void>();
/** Called after the WebSocket came back from a drop (not on the first connection). */
export function onReconnect(listener: () => void): () => void {
  reconnectListeners.add(listener);
  return () => reconnectListeners.delete(listener);
}

function wsUrl(): string {
  const url = new URL("/graphql", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

const PING_MS = 10_000;
const PONG_WAIT_MS = 4_000;
// A reconnection this quick (a server restarting) is not worth showing.
const QUIET_RECONNECT_MS = 1_500;
let connectedBefore = false;
let pongTimer: ReturnType<typeof setTimeout> | undefined;
let dropTimer: ReturnType<typeof setTimeout> | undefined;

/** The socket dropped: "Reconnecting…" shows if it is not back soon. */
function dropped(): void {
  if (dropTimer !== undefined || link.value === "reconnecting") return;
  dropTimer = setTimeout(() => {
    dropTimer = undefined;
    link.value = "reconnecting";
  }, QUIET_RECONNECT_MS);
}

function settled(state: Link): void {
  clearTimeout(dropTimer);
  dropTimer = undefined;
  link.value = state;
}

export const ws = createWSClient({
  url: wsUrl(),
  lazy: true,
  lazyCloseTimeout: 3_000,
  connectionParams: () => {
    const current = token.value;
    return current ? { Authorization: `Bearer ${current}` } : {};
  },
  keepAlive: PING_MS,
  retryAttempts: Number.POSITIVE_INFINITY,
  // 4401: the token is no longer valid; 4403: refused. Both need the user, not a retry.
  shouldRetry: (event) => !(event instanceof CloseEvent && (event.code === 4401 || event.code === 4403)),
  // Jittered: after a restart, its clients do not all come back in the same instant.
  retryWait: (retries) =>
    new Promise((resolve) => setTimeout(resolve, Math.min(300 * 2 ** retries, 5_000) * (0.5 + Math.random()))),
  on: {
    connecting: () => (connectedBefore ? dropped() : settled("connecting")),
    connected: () => {
      settled("online");
      if (connectedBefore) reconnectListeners.forEach((listener) => listener());
      connectedBefore = true;
    },
    closed: (event) => {
      clearTimeout(pongTimer);
      const closed = event as CloseEvent | undefined;
      const code = closed?.code;
      if (code === 4401) {
        signOutLocally();
        if (closed?.reason === BANNED) {
          signedOutBecause.value = "A moderator banned this account: you have been signed out.";
        }
      }
      // 1000 is the lazy close once no subscription is left: not a drop; after 4401 and
      // 4403 the client does not retry (see shouldRetry): nothing is reconnecting.
      if (code === 1000 || code === 4401 || code === 4403 || !connectedBefore) settled("idle");
      else dropped();
    },
    // A socket that stopped answering (lost network) is killed, so the client retries.
    ping: (received) => {
      if (!received) pongTimer = setTimeout(() => ws.terminate(), PONG_WAIT_MS);
    },
    pong: (received) => {
      if (received) clearTimeout(pongTimer);
    },
  },
});

// Back online: do not wait for the next retry or ping, reconnect now.
window.addEventListener("online", () => {
  if (link.value !== "idle") ws.terminate();
});
window.addEventListener("offline", () => {
  if (link.value === "online") settled("reconnecting");
});

export const client = new Client({
  url: "/graphql",
  preferGetMethod: false,
  requestPolicy: "network-only",
  fetchOptions: (): RequestInit => {
    const current = token.value;
    const headers: Record<string, string> = current ? { authorization: `Bearer ${current}` } : {};
    return { headers };
  },
  exchanges: [
    fetchExchange,
    subscriptionExchange({
      forwardSubscription: (request) => ({
        subscribe: (sink) => ({
          unsubscribe: ws.subscribe({ ...request, query: request.query ?? "" }, sink),
        }),
      }),
    }),
  ],
});

export type Result<T> = { data: T; error?: undefined } | { data?: undefined; error: string; code: string | null };

function toResult<T>(data: T | undefined, error: CombinedError | undefined): Result<T> {
  if (error || data === undefined) {
    const code = error?.graphQLErrors[0]?.extensions["code"];
    if (code === "UNAUTHENTICATED") signOutLocally();
    return {
      error: error ? errorWords(error) : "No answer from the server.",
      code: typeof code === "string" ? code : null,
    };
  }
  return { data };
}

let queriesAsked = 0;

/** Run a query, always from the network: the live screens are driven by subscriptions and
 * reload when told of a change. Each call is its own operation: urql answers a query
 * identical to one already in flight with that flight's answer, which may predate the
 * change that prompted the reload. */
export async function query<T, V extends AnyVariables>(doc: TypedDocumentNode<T, V>, variables: V): Promise<Result<T>> {
  queriesAsked += 1;
  const request = { ...createRequest(doc, variables), key: -queriesAsked };
  const operation = client.createRequestOperation("query", request, { requestPolicy: "network-only" });
  const result = await client.executeRequestOperation(operation).toPromise();
  return toResult(result.data, result.error);
}

/**
 * One reload at a time, none lost: a call while a load runs is answered by one more load
 * after it (answers of overlapping requests may arrive out of order), so the last answer
 * applied was always asked for after the last call.
 */
export function coalesced<T>(load: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  let queued: Promise<T> | null = null;
  const start = (): Promise<T> => {
    const flight = load();
    running = flight;
    const done = (): void => {
      if (running === flight) running = null;
    };
    flight.then(done, done);
    return flight;
  };
  return () => {
    if (running === null) return start();
    if (queued === null) {
      const next = (): Promise<T> => {
        queued = null;
        return start();
      };
      queued = running.then(next, next);
    }
    return queued;
  };
}

/** Run a mutation. */
export async function mutate<T, V extends AnyVariables>(doc: TypedDocumentNode<T, V>, variables: V): Promise<Result<T>> {
  const result = await client.mutation(doc, variables).toPromise();
  return toResult(result.data, result.error);
}

/** Subscribe; returns the function that ends the subscription. */
export function live<T, V extends AnyVariables>(
  doc: TypedDocumentNode<T, V>,
  variables: V,
  onData: (data: T) => void,
  onError: (words: string, code: string | null) => void,
): () => void {
  const subscription = pipe(
    client.subscription(doc, variables),
    subscribe((result) => {
      if (result.data) onData(result.data);
      else if (result.error) {
        const code = result.error.graphQLErrors[0]?.extensions["code"];
        onError(errorWords(result.error), typeof code === "string" ? code : null);
      }
    }),
  );
  return () => subscription.unsubscribe();
}

export interface Me {
  id: string;
  username: string;
}

/** The signed-in player as last confirmed (shown at once on load; `me` re-checks it). */
export function cachedPlayer(): Me | null {
  try {
    const parsed = JSON.parse(localStorage.getItem(PLAYER_KEY) ?? "null") as Me | null;
    return parsed && typeof parsed.id === "string" && typeof parsed.username === "string" ? parsed : null;
  } catch {
    return null;
  }
}

export function savePlayer(player: Me): void {
  localStorage.setItem(PLAYER_KEY, JSON.stringify({ id: player.id, username: player.username }));
}

export function saveToken(value: string, player?: Me): void {
  localStorage.setItem(TOKEN_KEY, value);
  if (player) savePlayer(player);
  token.value = value;
}

/** Forget the token here (the server side is `signOut`). Open sockets are closed. */
export function signOutLocally(): void {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(PLAYER_KEY);
  token.value = null;
  ws.terminate();
}
