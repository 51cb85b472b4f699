"""Durability on failover: a change a player hears of is held by the replicas too.

Redis replicates asynchronously: the primary answers a write before any replica has it, and
a failover in that moment promotes a replica that never got it.  With
``GOTI_REDIS_WAIT_REPLICAS`` above 0, a commit's script goes to Redis together with ``WAIT``
(one round trip, on one connection, which is the connection whose writes WAIT counts), and
the player is answered once that many replicas hold the change, or once
``GOTI_REDIS_WAIT_TIMEOUT_SECONDS`` have passed.

When WAIT times out the change stands: it is committed on the primary, and watchers may have
it already.  The player is answered as usual and the shortfall is logged; refusing would not
undo the change, only make the player's retry find it and answer the same.  Where taking
moves nobody has replicated is worse than taking none, Redis's own ``min-replicas-to-write``
makes the primary refuse the write itself (NOREPLICAS: the player is told to retry).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any, Final

from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

from goti.tables.redis_calls import RedisClient

log = logging.getLogger(__name__)

SHORTFALL_LOG_SECONDS: Final = 10.0
"""At most one warning this often while WAIT keeps timing out (a replica down, say)."""


class ReplicaWait:
    """Runs a commit's script, then waits for ``replicas`` replicas to hold what it wrote."""

    def __init__(self, redis: RedisClient, replicas: int = 0, timeout_seconds: float = 0.5) -> None:
        self._redis = redis
        self._replicas = replicas
        # WAIT takes milliseconds, and 0 would wait for ever.
        self._timeout_ms = max(1, math.ceil(timeout_seconds * 1000))
        self._shortfalls = 0
        self._logged_at = -math.inf

    @property
    def replicas(self) -> int:
        """Replicas waited for (0: none, the script's reply is the answer)."""
        return self._replicas

    async def run(
        self, script: AsyncScript, *, keys: Sequence[str | bytes], args: Sequence[Any]
    ) -> Any:
        """``script``'s reply, once the replicas hold what it wrote (or the wait timed out)."""
        if not self._replicas:
            return await script(keys=keys, args=args)
        try:
            reply, acknowledged = await self._with_wait(script, keys, args)
        except NoScriptError:
            # A primary new since the last call (a restart, a failover) has not seen it yet.
            await self._redis.script_load(script.script)
            reply, acknowledged = await self._with_wait(script, keys, args)
        if acknowledged < self._replicas:
            self._report_shortfall(acknowledged)
        return reply

    async def _with_wait(
        self, script: AsyncScript, keys: Sequence[str | bytes], args: Sequence[Any]
    ) -> tuple[Any, int]:
        async with self._redis.pipeline(transaction=False) as pipeline:
            if isinstance(self._redis, RedisCluster):
                # redis-py's cluster pipeline refuses its evalsha helper, as a script might
                # name keys of several slots; Goti's name one.  WAIT has no key: sent to the
                # node of the script's slot, it travels with the script on that node's one
                # connection of the pipeline.  (A script redirected by MOVED or ASK runs on
                # another connection, and WAIT then counts nothing: a shortfall, logged.)
                pipeline.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
                first = keys[0]
                node = self._redis.get_node_from_key(
                    first.decode() if isinstance(first, bytes) else first
                )
                pipeline.execute_command(
                    "WAIT", self._replicas, self._timeout_ms, target_nodes=node
                )
            else:
                pipeline.evalsha(script.sha, len(keys), *keys, *args)
                pipeline.wait(self._replicas, self._timeout_ms)
            try:
                reply, acknowledged = await pipeline.execute()
            except AttributeError as error:
                # redis-py 8.1's cluster pipeline may write on a connection that a node's
                # failure closed a moment before (its writer gone, seen once in a failover
                # test): the connection was lost before the script was sent, so the caller
                # gets UNAVAILABLE and retries, as after any lost connection.
                raise RedisConnectionError(f"connection closed mid-pipeline: {error}") from error
        return reply, int(acknowledged)

    def _report_shortfall(self, acknowledged: int) -> None:
        self._shortfalls += 1
        now = time.monotonic()
        if now - self._logged_at < SHORTFALL_LOG_SECONDS:
            return
        log.warning(
            "%d change(s) answered before %d replica(s) held them: WAIT timed out after "
            "%d ms, the last with %d replica(s); such changes are lost if the primary fails "
            "before its replicas catch up",
            self._shortfalls,
            self._replicas,
            self._timeout_ms,
            acknowledged,
        )
        self._shortfalls = 0
        self._logged_at = now
