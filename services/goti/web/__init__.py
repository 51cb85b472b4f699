"""Goti in the browser: the tables, players and matchmaking services over Connect and gRPC-Web,
served with the page that plays through them, from the tables process's own event loop."""
