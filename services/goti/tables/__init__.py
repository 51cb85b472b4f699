"""The tables service: tables, the lobby, players and timers, with all state in Redis.

Served over gRPC as ``TablesService`` and ``PlayersService``; ``python -m goti.tables`` (or
``goti serve tables``) runs it.  Every replica is stateless and serves any table.

- :mod:`goti.tables.seating`, :mod:`goti.tables.events`, :mod:`goti.tables.validation`: pure
  decisions — who sits where and may act, the events and tables sent, the request checks;
- :mod:`goti.tables.dealer`: one method per action — load, ask the referee, commit;
- :mod:`goti.tables.players`: guest identities and their tokens;
- :mod:`goti.tables.watching` over :mod:`goti.tables.fanout`: the watch streams, over one
  Redis pub/sub connection per process;
- :mod:`goti.tables.timers`: the worker that claims due timers (computer turns, turn timers),
  and :mod:`goti.tables.background`: stopping background tasks for sure;
- :mod:`goti.tables.store` (Redis, with :mod:`goti.tables.keys`) and
  :mod:`goti.tables.peers` (the referee and the AI): the only I/O;
- :mod:`goti.tables.servicer`: requests in, answers and statuses out;
- :mod:`goti.tables.runtime` and ``__main__``: everything wired and served.
"""
