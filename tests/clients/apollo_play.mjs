// Apollo Client 4, configured as its docs say and no more: InMemoryCache with no type
// policies, PersistedQueryLink (automatic persisted queries, GET for hashed queries) over
// HttpLink, graphql-ws for subscriptions. One player and three bots play a whole hand.
// Usage: node apollo_play.mjs <http url> <ws url>. Prints a JSON summary.
import { createHash } from "node:crypto";
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { getMainDefinition } from "@apollo/client/utilities";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { botTable, withTimeout } from "./common.mjs";

const [httpUrl, wsUrl] = process.argv.slice(2);
const { token, tableId } = await botTable(httpUrl, "apollo");

const requests = [];
const countingFetch = async (url, options) => {
  const method = options.method || "GET";
  const body = options.body ? JSON.parse(options.body) : null;
  const res = await fetch(url, options);
  const answer = await res.clone().json();
  requests.push({
    method,
    withQuery: method === "POST" ? Boolean(body.query) : new URL(url).searchParams.has("query"),
    notFound: (answer.errors || []).some((e) => e.extensions?.code === "PERSISTED_QUERY_NOT_FOUND"),
  });
  return res;
};

const http = new HttpLink({
  uri: httpUrl,
  headers: { authorization: `Bearer ${token}`, "apollographql-client-name": "tests" },
  fetch: countingFetch,
});
const persisted = new PersistedQueryLink({
  sha256: (text) => createHash("sha256").update(text).digest("hex"),
  useGETForHashedQueries: true,
});
const ws = new GraphQLWsLink(
  createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
  }),
);
const link = ApolloLink.split(
  ({ query }) => {
    const definition = getMainDefinition(query);
    return definition.kind === "OperationDefinition" && definition.operation === "subscription";
  },
  ws,
  persisted.concat(http),
);
const client = new ApolloClient({ link, cache: new InMemoryCache() });

const VIEW = gql`
  fragment View on GameView {
    id tableId phase turn viewerSeat version handWithheld
    legalPlays { suit rank }
    seats { id seat isBot bid { kind tricks } tricksWon cardCount }
    teams { id team score bags target }
  }
`;
const GAME = gql`query Game($t: ID!) { game(tableId: $t) { ...View } } ${VIEW}`;
const UPDATES = gql`subscription Updates($t: ID!) { gameUpdates(tableId: $t) { event seat view { ...View } } } ${VIEW}`;
const BID = gql`mutation Bid($t: ID!, $b: BidInput!) { placeBid(tableId: $t, bid: $b) { ...View } } ${VIEW}`;
const PLAY = gql`mutation Play($t: ID!, $c: CardInput!) { playCard(tableId: $t, card: $c) { ...View } } ${VIEW}`;

const first = await client.query({ query: GAME, variables: { t: tableId }, fetchPolicy: "network-only" });
const events = [];
const versions = [];
let moves = 0;
let acting = false;
// The newest view seen: an update that gives us the turn can arrive while our previous
// move's response is still in flight, and must not be lost (nobody else moves for us).
let latest = null;
let finish;
const done = new Promise((resolve, reject) => { finish = { resolve, reject }; });

async function act(view) {
  if (acting || view.turn !== view.viewerSeat) return;
  acting = true;
  try {
    if (view.phase === "BIDDING") {
      await client.mutate({ mutation: BID, variables: { t: tableId, b: { kind: "TRICKS", tricks: 3 } } });
    } else if (view.phase === "PLAYING") {
      const card = view.legalPlays[0];
      await client.mutate({ mutation: PLAY, variables: { t: tableId, c: { suit: card.suit, rank: card.rank } } });
    }
    moves += 1;
  } catch (error) {
    // A move raced by a newer update (CONFLICT/NOT_YOUR_TURN) is retried on the next one.
    if (!/NOT_YOUR_TURN|CONFLICT|WRONG_PHASE/.test(String(error))) finish.reject(error);
  } finally {
    acting = false;
  }
  if (latest !== null && latest !== view) act(latest);
}

const subscription = client.subscribe({ query: UPDATES, variables: { t: tableId } }).subscribe({
  next: ({ data, error }) => {
    if (error) return finish.reject(error);
    const update = data.gameUpdates;
    events.push(update.event);
    versions.push(update.view.version);
    if (update.event === "HAND_SCORED") return finish.resolve();
    latest = update.view;
    act(latest);
  },
  error: (error) => finish.reject(error),
});

await withTimeout(done, 90000, "a whole hand");
subscription.unsubscribe();
const cache = client.cache.extract();
const cachedView = cache[`GameView:${tableId}`];
console.log(
  JSON.stringify({
    firstVersion: first.data.game.version,
    events,
    versions,
    moves,
    requests,
    cachedVersion: cachedView ? cachedView.version : null,
    cachedSeats: Object.keys(cache).filter((k) => k.startsWith("SeatState:")).length,
    cachedTeams: Object.keys(cache).filter((k) => k.startsWith("TeamState:")).length,
  }),
);
await client.stop?.();
process.exit(0);
