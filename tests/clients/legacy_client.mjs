// The legacy protocol (subscriptions-transport-ws, subprotocol graphql-ws), every operation
// over the one socket: a query, a subscription to a table (its SNAPSHOT), a refused
// mutation (playCard while bidding), the caller's bid as a mutation, and the updates of
// that move.
// Usage: node legacy_client.mjs <http url> <ws url>.
// Prints {me, events, versions, refusedCode, turnVersion, myBidVersion, bidCompleted}.
import { SubscriptionClient } from "subscriptions-transport-ws";
import WebSocket from "ws";
import { botTable, withTimeout } from "./common.mjs";

const [httpUrl, wsUrl] = process.argv.slice(2);
const { token, tableId } = await botTable(httpUrl, "legacy");

const client = new SubscriptionClient(
  wsUrl,
  { connectionParams: { Authorization: `Bearer ${token}` }, reconnect: false },
  WebSocket,
);

// A query or mutation: its one result, and whether the server then completed it.
function once(query, variables = {}) {
  return withTimeout(
    new Promise((resolve, reject) => {
      let result = null;
      client.request({ query, variables }).subscribe({
        next(value) {
          result = value;
        },
        error: reject,
        complete() {
          resolve({ result, completed: true });
        },
      });
    }),
    10000,
    query,
  );
}

const me = await once("query { me { username } }");
if (me.result.errors) throw new Error(JSON.stringify(me.result.errors));

const events = [];
const versions = [];
let waiting = null;
const seen = () => waiting && waiting();

const query = `subscription($t: ID!) { gameUpdates(tableId: $t) {
  event seat view { version turn viewerSeat phase } } }`;
let latest = null;
const subscription = client.request({ query, variables: { t: tableId } }).subscribe({
  next(result) {
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    const update = result.data.gameUpdates;
    events.push(update.event);
    versions.push(update.view.version);
    latest = update.view;
    seen();
  },
  error(err) {
    console.error("subscription error", err);
    process.exit(1);
  },
});

function until(condition, what) {
  return withTimeout(
    new Promise((resolve) => {
      waiting = () => condition() && resolve();
      seen();
    }),
    10000,
    what,
  );
}

await until(() => latest && latest.turn === latest.viewerSeat, "my turn to bid");
const turnVersion = latest.version;
const refused = await once(
  "mutation($t: ID!) { playCard(tableId: $t, card: {suit: SPADES, rank: ACE}) { version } }",
  { t: tableId },
);
const refusedCode = refused.result.errors[0].extensions.code;
const bid = await once(
  "mutation($t: ID!, $b: BidInput!) { placeBid(tableId: $t, bid: $b) { version } }",
  { t: tableId, b: { kind: "TRICKS", tricks: 3 } },
);
if (bid.result.errors) throw new Error(JSON.stringify(bid.result.errors));
const myBidVersion = bid.result.data.placeBid.version;
await until(() => versions.includes(myBidVersion) && versions.at(-1) > myBidVersion, "updates after my bid");
subscription.unsubscribe();
client.close();
console.log(
  JSON.stringify({
    me: me.result.data.me.username,
    events,
    versions,
    refusedCode,
    turnVersion,
    myBidVersion,
    bidCompleted: bid.completed,
  }),
);
process.exit(0);
