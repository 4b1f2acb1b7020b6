"""How clients reach the schema: GraphQL over HTTP (refusals with codes, media types,
persisted queries, trusted documents), both WebSocket subprotocols, GraphiQL and the
security headers of HTML responses."""
