"""Game play services: bot thinking off the event loop."""
