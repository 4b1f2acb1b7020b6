// Small helpers shared by the client scripts: plain GraphQL over fetch.
export async function call(httpUrl, query, variables = {}, token = null) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(httpUrl, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

export async function botTable(httpUrl, name) {
  const username = `${name.slice(0, 6)}${Math.floor(Math.random() * 1e12).toString(36)}`;
  const signUp = await call(
    httpUrl,
    "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }",
    { u: username, p: "password123" },
  );
  const token = signUp.signUp.token;
  const table = await call(httpUrl, "mutation { createTable(input: {}) { id } }", {}, token);
  const tableId = table.createTable.id;
  for (const seat of ["EAST", "SOUTH", "WEST"]) {
    await call(httpUrl, "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s) { id } }", { t: tableId, s: seat }, token);
  }
  return { token, tableId };
}

export function withTimeout(promise, ms, what) {
  return Promise.race([
    promise,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)),
  ]);
}
