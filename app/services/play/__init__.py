"""Services of play at a table once it is set up: rematch, and bot thinking off the event
loop."""
