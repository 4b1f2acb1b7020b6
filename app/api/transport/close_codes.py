"""The WebSocket close codes of the contract (docs/api.md, "Transport"); the close reason says
which limit or check it was."""

from __future__ import annotations

# Not signed in: a missing, bad, expired, revoked or signed-out token.
CLOSE_UNAUTHORIZED = 4401
# Forbidden: a page on an origin that is not allowed.
CLOSE_FORBIDDEN = 4403
# Too slow: the client did not read its updates in time (it reconnects and resubscribes
# with `since`). Sent by the subscription streams' back-pressure, not by this package.
CLOSE_TOO_SLOW = 4410
# Too many connections or subscriptions, or rate limited.
CLOSE_TOO_MANY = 4429
# The protocols' own code for a malformed message (graphql-transport-ws uses it too).
CLOSE_BAD_MESSAGE = 4400
