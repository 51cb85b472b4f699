"""The Goti client SDK: an async, typed client for the tables and players services."""
