"""Services of play at a table once it is set up (rematch)."""
