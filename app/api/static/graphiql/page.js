// GraphiQL for this server, from the server's own assets (no other origin: see the
// Content-Security-Policy of the page). Queries and mutations go over HTTP to /graphql,
// subscriptions over WebSocket (graphql-transport-ws) to /graphql; the headers editor's
// Authorization is sent on both (as connection_init payload on the WebSocket).
(function () {
  "use strict";
  var here = new URL(window.location.href);
  var url = here.origin + here.pathname;
  var socket = new URL(url);
  socket.protocol = here.protocol === "https:" ? "wss:" : "ws:";
  var parameters = here.searchParams;

  var fetcher = GraphiQL.createFetcher({
    url: url,
    subscriptionUrl: socket.toString(),
  });

  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      // ?q= and ?headers= (a link to a prepared operation) win over what GraphiQL stored.
      query: parameters.get("q") || undefined,
      headers: parameters.get("headers") || undefined,
      defaultQuery: "{\n  __typename\n}\n",
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
      defaultEditorToolsVisibility: true,
      inputValueDeprecation: true,
    }),
  );
})();
