"""What an operator does to a running installation (the `spades` operator commands): check
every table against its move log, close a table. Each is a service so that the command
line and any future admin operation share it."""
