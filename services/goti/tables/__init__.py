"""The tables service: tables, the lobby, players and timers, with all state in Redis."""
