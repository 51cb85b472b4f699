"""Goti in the browser: the tables and players services over Connect and gRPC-Web, served with
the page that plays through them, from the tables process's own event loop."""
