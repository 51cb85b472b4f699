"""The tables service: tables, the lobby, players and timers, with all state in Redis.

Served over gRPC as ``TablesService`` and ``PlayersService``; ``python -m goti.tables`` (or
``goti serve tables``) runs it.  Every replica is stateless and serves any table.

- :mod:`goti.tables.seating`, :mod:`goti.tables.events`, :mod:`goti.tables.validation`: pure
  decisions — who sits where and may act, the events and tables sent, the request checks;
- a command's path, in order: :mod:`goti.tables.commands` (typed commands, judged),
  :mod:`goti.tables.playing` (load, judge, referee, commit), :mod:`goti.tables.loading`
  (tables read), :mod:`goti.tables.committing` (the compare-and-set, which returns what must
  follow) and :mod:`goti.tables.followups` (the computer's turn, timer moves, streaks);
  :mod:`goti.tables.opening` (tables created, joined, rematched) and
  :mod:`goti.tables.restoring` (logged events in full, for watchers and retries);
- :mod:`goti.tables.players`: guest identities and their tokens;
- :mod:`goti.tables.watching` over :mod:`goti.tables.fanout`: the watch streams, over one
  Redis pub/sub connection per process (:mod:`goti.tables.subscriptions`; one per node on a
  Redis Cluster);
- :mod:`goti.tables.timers`: the worker that claims due timers (computer turns, turn timers),
  and :mod:`goti.tables.background`: the polling loop it and the pairing run, and stopping
  background tasks for sure;
- :mod:`goti.tables.store` (Redis, with :mod:`goti.tables.keys`: one Redis's names, or a
  cluster's shards; pairings in single-slot steps on a cluster in
  :mod:`goti.tables.pool_steps`) and
  :mod:`goti.tables.peers` (the referee and the AI): the only I/O;
- :mod:`goti.tables.servicer`: requests in, answers and statuses out;
- :mod:`goti.tables.runtime` and ``__main__``: everything wired and served.
"""
