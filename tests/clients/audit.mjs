// The GraphQL-over-HTTP spec's reference audit (graphql-http) against a live server.
// Usage: node audit.mjs <http url>. Prints one JSON line: {ok, warn, error, failures}.
import { auditServer } from "graphql-http";

const url = process.argv[2];
const results = await auditServer({ url });
const count = (status) => results.filter((r) => r.status === status).length;
const failures = results
  .filter((r) => r.status !== "ok")
  .map((r) => ({ id: r.id, name: r.name, status: r.status, reason: r.reason }));
console.log(JSON.stringify({ ok: count("ok"), warn: count("warn"), error: count("error"), failures }));
