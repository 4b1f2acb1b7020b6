// The legacy protocol (subscriptions-transport-ws, subprotocol graphql-ws): subscribe to a
// table, receive its SNAPSHOT, bid, and receive the updates of that move.
// Usage: node legacy_client.mjs <http url> <ws url>. Prints {events, versions, myBidVersion}.
import { SubscriptionClient } from "subscriptions-transport-ws";
import WebSocket from "ws";
import { botTable, call, withTimeout } from "./common.mjs";

const [httpUrl, wsUrl] = process.argv.slice(2);
const { token, tableId } = await botTable(httpUrl, "legacy");

const client = new SubscriptionClient(
  wsUrl,
  { connectionParams: { Authorization: `Bearer ${token}` }, reconnect: false },
  WebSocket,
);
const events = [];
const versions = [];
let myBidVersion = null;
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
const bid = await call(
  httpUrl,
  "mutation($t: ID!, $b: BidInput!) { placeBid(tableId: $t, bid: $b) { version } }",
  { t: tableId, b: { kind: "TRICKS", tricks: 3 } },
  token,
);
myBidVersion = bid.placeBid.version;
await until(() => versions.includes(myBidVersion) && versions.at(-1) > myBidVersion, "updates after my bid");
subscription.unsubscribe();
client.close();
console.log(JSON.stringify({ events, versions, myBidVersion }));
process.exit(0);
