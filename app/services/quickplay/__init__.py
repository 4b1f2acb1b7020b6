"""Quick play (docs/rules.md, Quick play): tickets, who watches them, the matchmaking
turn and its waves, and the tables they open."""
