"""Play online now: a player's seek stream, and the pairing every replica runs.

:class:`Seeking` serves one ``Seek``: it refuses a second open seek and a player still at
an unfinished paired table, puts the seek in its pool (:mod:`goti.tables.pool_store`), and
streams ``SeekWaiting`` until the seek is paired, then the ``SeekPaired`` that ends it.  It
listens on the seeker's channel for the wake-up a pairing publishes, and also looks at the
seek's record every ``seek_poll_seconds``, so a lost wake-up costs at most that long.  When
the stream ends unpaired the seek leaves its pool at once, its record kept
``GOTI_SEEK_RESUME_SECONDS`` so that the same request id resumes it with its wait.  A stream
whose seek another stream resumed meanwhile (the app reconnected while the server still held
the old one) ends with ``SEEK_IN_PROGRESS``: the seek, its pairing included, goes on in the
new one.  :meth:`Seeking.cancel` (CancelSeek) takes a seek out of its pool for good,
whichever stream or replica holds it, and answers once it is out, or with the pairing that
came first; the seek's stream then ends with ``SEEK_CANCELLED``.  The player's hash is read
once a seek, for the rating the pool pairs by and the seat (name and rating) the seek stores
for the table a pairing makes.

:class:`PairingWorker` pairs the pools: each round it takes (or renews) the lease of each
pool with someone in it, and pairs those it holds by :func:`goti.tables.pairing.pairs`, one
Lua script a couple.  A stopped replica's leases end by themselves.  While someone waits in a
pool, or this replica held a lease lately (so that it renews it as soon as someone comes),
the rounds run every ``pairing_poll_seconds``; otherwise every ``pairing_idle_poll_seconds``,
or at once when a seek enters a pool through this replica: an idle replica reads the pools'
sizes seldom instead of five times a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Final

from goti.api.v1 import (
    errors_pb2,
    game_pb2,
    matchmaking_pb2,
    players_pb2,
    referee_pb2,
    tables_pb2,
)
from goti.ratings import Rating
from goti.tables import keys, pairing, seating
from goti.tables.background import Next, PollingLoop
from goti.tables.fanout import CLOSING, Fanout, FanoutClosedError, Listener
from goti.tables.loading import TableReader
from goti.tables.options import TablesOptions
from goti.tables.peers import PeerUnavailableError, Referee
from goti.tables.players import Players
from goti.tables.pool_steps import NewTable, PairOutcome
from goti.tables.pool_store import (
    PairedBeforeError,
    PairedTable,
    PoolEntry,
    PoolStore,
    SeekCancelledError,
    SeekInProgressError,
    SeekRecord,
    SeekState,
    SeekStillHeldError,
)
from goti.tables.rated_games import StoredRating, rating_message
from goti.tables.redis_calls import StoreUnavailableError
from goti.tables.refusals import CallRefusedError

log = logging.getLogger(__name__)

TIMER_SECONDS: Final[dict[int, int]] = {
    matchmaking_pb2.SEEK_TIMER_NONE: 0,
    matchmaking_pb2.SEEK_TIMER_30_SECONDS: 30,
    matchmaking_pb2.SEEK_TIMER_2_MINUTES: 120,
}
"""Each pool's turn timer, in seconds a move (0: none)."""
VARIANTS: Final = (game_pb2.VARIANT_ENGLISH, game_pb2.VARIANT_RUSSIAN)
_TABLE_ATTEMPTS: Final = 8
_ALIVE_POLLS: Final = 4
"""Polls a waiting seek's stream may miss before pairing takes it for gone (its replica
stopped)."""


@dataclass(frozen=True, slots=True)
class Pool:
    """Where seekers wait to be paired: one variant, one turn timer, rated or casual."""

    variant: game_pb2.Variant.ValueType
    timer: matchmaking_pb2.SeekTimer.ValueType
    rated: bool

    @property
    def key(self) -> str:
        return keys.seek_pool(self.variant, self.timer, self.rated)

    @property
    def turn_timer_seconds(self) -> int:
        return TIMER_SECONDS[self.timer]


ALL_POOLS: Final = tuple(
    Pool(variant, timer, rated)  # type: ignore[arg-type]
    for variant in VARIANTS
    for timer in TIMER_SECONDS
    for rated in (False, True)
)


def _range_limits(rating: float, waited_ms: int) -> tuple[int, int]:
    accepted = pairing.accepted_range(waited_ms)
    if accepted is None:
        return -(2**31), 2**31 - 1
    return round(rating) - accepted, round(rating) + accepted


class Seeking:
    """Serves players' seek streams."""

    def __init__(
        self,
        pools: PoolStore,
        reader: TableReader,
        players: Players,
        fanout: Fanout,
        options: TablesOptions,
        *,
        clock_ms: Callable[[], int],
        entered: Callable[[], None],
    ) -> None:
        self._pools = pools
        self._reader = reader
        self._players = players
        self._fanout = fanout
        self._options = options
        self._clock_ms = clock_ms
        self._entered = entered
        """Called once a seek is in its pool: the pairing worker's wake."""
        self._kept_ms = options.seek_resume_seconds * 1000
        self._leaving: set[asyncio.Future[None]] = set()
        self._alive_ms = max(round(options.seek_poll_seconds * 1000) * _ALIVE_POLLS, 2000)

    async def seek(
        self, player_id: str, request_id: str, pool: Pool
    ) -> AsyncGenerator[matchmaking_pb2.SeekResponse]:
        """The seek's progress, ending with its pairing."""
        recorded, paired_before = await self._pools.seek_and_paired_table(player_id)
        if (
            recorded is not None
            and recorded.request_id == request_id
            and recorded.state is SeekState.PAIRED
        ):
            # This very seek, paired before its stream heard: it hears its table again.
            yield await self._paired(player_id, recorded.table_id, recorded.opponent_rating)
            return
        await self._refuse_if_seated(paired_before)
        # The player's hash is read once: the rating the pool pairs by, and the seat (name
        # and rating) the pairing puts at the table.
        me = await self._players.me(player_id)
        stored = me.ratings.get(pool.variant, StoredRating())
        seat = tables_pb2.Seat(player=me.player, rating=rating_message(pool.variant, stored))
        stream = secrets.token_urlsafe(12)
        try:
            async with self._fanout.listen(keys.seeker_channel(player_id), bytes.decode) as wake:
                try:
                    entered = await self._enter(
                        player_id,
                        request_id,
                        pool,
                        stored.rating,
                        seat,
                        stream,
                        recorded,
                        paired_before,
                    )
                except PairedBeforeError:
                    yield await self._paired_meanwhile(player_id)
                    return
                try:
                    progress = self._progress(player_id, pool, stream, entered, seat.rating, wake)
                    async with contextlib.aclosing(progress):
                        async for message in progress:
                            yield message
                finally:
                    # Shielded: a cancelled stream still leaves its pool.  Kept, so that a
                    # stopping replica closes Redis only once the leave is done.
                    leaving = asyncio.ensure_future(self._leave(player_id, pool, stream))
                    self._leaving.add(leaving)
                    leaving.add_done_callback(self._leaving.discard)
                    await asyncio.shield(leaving)
        except FanoutClosedError:
            raise _shutting_down() from None

    async def _progress(
        self,
        player_id: str,
        pool: Pool,
        stream: str,
        entered: int,
        shown: players_pb2.Rating,
        wake: Listener[str],
    ) -> AsyncGenerator[matchmaking_pb2.SeekResponse]:
        """Waiting messages while the seek waits on this stream, then its pairing."""
        last: tuple[int, int, int] | None = None
        last_sent = 0.0
        loop = asyncio.get_running_loop()
        while True:
            status = await self._pools.status(
                player_id,
                pool.key,
                stream=stream,
                kept_ms=self._kept_ms,
                alive_until_ms=self._clock_ms() + self._alive_ms,
            )
            if not status.own:
                raise CallRefusedError.of(
                    errors_pb2.ERROR_REASON_SEEK_IN_PROGRESS,
                    "this seek was resumed by another Seek stream of yours (the same "
                    "request_id), which carries on with it",
                )
            if status.state is SeekState.PAIRED:
                yield await self._paired(player_id, status.table_id, status.opponent_rating)
                return
            if status.state is SeekState.CANCELLED:
                raise _cancelled()
            if status.state is not SeekState.WAITING:
                raise CallRefusedError.unavailable(
                    "your seek was taken out of its pool (this server did not keep it alive "
                    "in time): seek again with the same request_id to resume it with its wait"
                )
            waited = self._clock_ms() - entered
            low, high = _range_limits(shown.rating, waited)
            now = (status.seekers_in_pool, low, high)
            if now != last or loop.time() - last_sent >= self._options.seek_heartbeat_seconds:
                yield _waiting(now, waited, shown)
                last, last_sent = now, loop.time()
            if await wake.next(self._options.seek_poll_seconds) is CLOSING:
                raise _shutting_down()

    async def _enter(
        self,
        player_id: str,
        request_id: str,
        pool: Pool,
        rating: Rating,
        seat: tables_pb2.Seat,
        stream: str,
        recorded: SeekRecord | None,
        paired_before: PairedTable | None,
    ) -> int:
        if recorded is None or recorded.request_id != request_id:
            await self._players.enforce_rate_limit(
                keys.rate_limit(player_id, "seek"),
                self._options.seeks_per_minute,
                "too many seeks in a minute",
            )
        try:
            entered = await self._pools.enter(
                player_id,
                request_id,
                pool.key,
                rating=rating.rating,
                stored_rating=seat.rating.SerializeToString(),
                now_ms=self._clock_ms(),
                stream=stream,
                kept_ms=self._kept_ms,
                alive_ms=self._alive_ms,
                last_opponent="" if paired_before is None else paired_before.opponent,
                seat=seat.SerializeToString(),
            )
        except SeekInProgressError:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_SEEK_IN_PROGRESS,
                "another seek of yours is open: cancel it, or resume it with its request_id",
            ) from None
        except SeekCancelledError:
            raise _cancelled() from None
        self._entered()
        return entered.entered_ms

    async def cancel(self, player_id: str, request_id: str) -> matchmaking_pb2.CancelSeekResponse:
        """Take the player's seek out of its pool for good; the answer carries the pairing
        that came first, if one did."""
        try:
            paired = await self._pools.cancel(player_id, request_id, kept_ms=self._kept_ms)
        except SeekStillHeldError:
            raise CallRefusedError.unavailable(
                "a pairing is still settling this seek: call CancelSeek again"
            ) from None
        if paired is None:
            return matchmaking_pb2.CancelSeekResponse()
        found = await self._paired(player_id, paired.table_id, paired.opponent_rating)
        return matchmaking_pb2.CancelSeekResponse(paired=found.paired)

    async def finish(self) -> None:
        """Wait for the seeks leaving their pools now (their streams ended or were cut off)."""
        if self._leaving:
            await asyncio.wait(set(self._leaving))

    async def _leave(self, player_id: str, pool: Pool, stream: str) -> None:
        try:
            await self._pools.leave(player_id, pool.key, stream=stream, kept_ms=self._kept_ms)
        except StoreUnavailableError:
            # Its record stops being renewed: the next pairing that meets it takes it out.
            log.warning("could not take a seek out of its pool", exc_info=True)

    async def _refuse_if_seated(self, paired_before: PairedTable | None) -> None:
        """Refuse a player at an unfinished table a seek paired them at."""
        if paired_before is None:
            return
        table_id = paired_before.table_id
        try:
            loaded = await self._reader.load(table_id)
        except CallRefusedError as refusal:
            if refusal.status.reason == "TABLE_NOT_FOUND":
                return
            raise
        if loaded.record.status != tables_pb2.TABLE_STATUS_FINISHED:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_ALREADY_AT_TABLE,
                "you are at an unfinished game: finish it (or resign) before seeking another",
                tableId=table_id,
            )

    async def _paired_meanwhile(self, player_id: str) -> matchmaking_pb2.SeekResponse:
        """The pairing of a seek paired between its record's first read and its entry."""
        recorded = await self._pools.seek_record(player_id)
        if recorded is None or recorded.state is not SeekState.PAIRED:
            raise CallRefusedError.unavailable("the seek's table could not be read; seek again")
        return await self._paired(player_id, recorded.table_id, recorded.opponent_rating)

    async def _paired(
        self, player_id: str, table_id: str, opponent_rating: bytes
    ) -> matchmaking_pb2.SeekResponse:
        seated = await self._reader.get_table(table_id, player_id)
        mine = seating.colors_of(seated.table, player_id)
        other = seating.seat(seated.table, seating.opponent_color(mine[0]))
        paired = matchmaking_pb2.SeekPaired(
            table=seated.table,
            your_role=seated.role,
            opponent=other.player,
            opponent_rating=players_pb2.Rating.FromString(opponent_rating),
        )
        return matchmaking_pb2.SeekResponse(paired=paired)


def _waiting(
    now: tuple[int, int, int], waited_ms: int, rating: players_pb2.Rating
) -> matchmaking_pb2.SeekResponse:
    count, low, high = now
    waiting = matchmaking_pb2.SeekWaiting(
        seekers_in_pool=count, min_rating=low, max_rating=high, rating=rating
    )
    waiting.waited.FromMilliseconds(max(waited_ms, 0))
    return matchmaking_pb2.SeekResponse(waiting=waiting)


def _cancelled() -> CallRefusedError:
    return CallRefusedError.of(
        errors_pb2.ERROR_REASON_SEEK_CANCELLED,
        "this seek was cancelled (CancelSeek); seek again with a new request_id",
    )


def _shutting_down() -> CallRefusedError:
    return CallRefusedError.unavailable(
        "this server is shutting down: seek again on another replica with the same "
        "request_id to keep your place"
    )


class PairingWorker:
    """Pairs the pools this replica holds the lease of."""

    def __init__(
        self,
        pools: PoolStore,
        referee: Referee,
        players: Players,
        options: TablesOptions,
        *,
        clock_ms: Callable[[], int],
    ) -> None:
        self._pools = pools
        self._referee = referee
        self._players = players
        self._options = options
        self._clock_ms = clock_ms
        self.holder = secrets.token_urlsafe(12)
        """This replica's name on the leases it holds."""
        self._lease_ms = round(options.pairing_lease_seconds * 1000)
        self._held_until_ms = 0
        """When the last lease this replica took or renewed ends."""
        self._loop = PollingLoop(
            "pairing",
            self._round,
            poll_seconds=options.pairing_poll_seconds,
            idle_seconds=options.pairing_idle_poll_seconds,
            transient=(StoreUnavailableError, PeerUnavailableError),
        )

    def start(self) -> None:
        """Start pairing in the background."""
        self._loop.start()

    def wake(self) -> None:
        """A seek has entered a pool through this replica: an idle worker pairs now (a busy
        one's next round is at most ``pairing_poll_seconds`` away)."""
        self._loop.wake()

    async def stop(self) -> None:
        """Stop pairing; the leases held end by themselves, as a crashed replica's do."""
        await self._loop.stop()

    async def _round(self) -> Next:
        someone_waits = await self.pair_round()
        if someone_waits or self._clock_ms() < self._held_until_ms:
            return Next.POLL
        return Next.IDLE

    async def pair_round(self) -> bool:
        """Pair every pool this replica holds (or can take) once; whether anyone was
        waiting in a pool."""
        sizes = await self._pools.sizes([pool.key for pool in ALL_POOLS])
        for pool, size in zip(ALL_POOLS, sizes, strict=True):
            # A pool of one is held too, so that its lease is ready when a second arrives.
            held = size > 0 and await self._pools.hold(pool.key, self.holder, self._lease_ms)
            if held:
                self._held_until_ms = self._clock_ms() + self._lease_ms
            if held and size >= 2:
                await self._pair_pool(pool)
        return any(sizes)

    async def _pair_pool(self, pool: Pool) -> None:
        now = self._clock_ms()
        entries = {entry.player_id: entry for entry in await self._pools.waiting(pool.key)}
        couples = pairing.pairs([_seeker(entry) for entry in entries.values()], now)
        if not couples:
            return
        # Every game of a variant starts from the same position: asked once a round.
        started = await self._referee.start_game(pool.variant)
        for first, second in couples:
            seats = [
                await self._seat(entries[first.player_id], pool),
                await self._seat(entries[second.player_id], pool),
            ]
            await self._pair(pool, seats, started)

    async def _seat(self, entry: PoolEntry, pool: Pool) -> tables_pb2.Seat:
        """The seat the seek stored; read from the player only for a seek that stored none
        (entered by a replica of an earlier version)."""
        if entry.seat:
            return tables_pb2.Seat.FromString(entry.seat)
        return await self._players.seat(entry.player_id, rated_in=pool.variant)

    async def _pair(
        self, pool: Pool, seats: list[tables_pb2.Seat], started: referee_pb2.StartGameResponse
    ) -> None:
        first, second = (seat.player.player_id for seat in seats)
        for _ in range(_TABLE_ATTEMPTS):
            now = self._clock_ms()
            table_id = seating.new_table_id()
            # A code whose key shares the table's slot on a Redis Cluster.
            code = self._pools.keys.code_for(table_id, seating.new_code)
            table = self._new_table(pool, seats, started.view.variant, now, code)
            fields = {"table": table.SerializeToString(), "game": started.state.SerializeToString()}
            outcome = await self._pools.pair(
                pool.key,
                first,
                second,
                NewTable(
                    table_id,
                    table.code,
                    fields,
                    self._options.idle_table_seconds,
                    now + pool.turn_timer_seconds * 1000 if pool.turn_timer_seconds else None,
                ),
                now_ms=now,
                kept_ms=self._options.seek_resume_seconds * 1000,
                paired_kept_seconds=self._options.idle_table_seconds,
            )
            if outcome is not PairOutcome.TABLE_TAKEN:
                return

    def _new_table(
        self,
        pool: Pool,
        seats: list[tables_pb2.Seat],
        variant: game_pb2.Variant.ValueType,
        now: int,
        code: str,
    ) -> tables_pb2.Table:
        """Both seekers seated, who moves first drawn at random, the game under way."""
        record = seating.new_table(
            creator=seats[0],
            creator_color=seating.creator_color(variant, tables_pb2.STARTING_PLAYER_RANDOM),
            variant=variant,
            opponent=tables_pb2.OPPONENT_HUMAN,
            visibility=tables_pb2.VISIBILITY_PRIVATE,
            turn_timer_seconds=pool.turn_timer_seconds,
            code=code,
            created_ms=now,
        )
        color = seating.open_color(record)
        assert color is not None, "a new table for a person has an open seat"
        seats[1].color = color
        seating.seat(record, color).CopyFrom(seats[1])
        record.status = tables_pb2.TABLE_STATUS_PLAYING
        record.rated = pool.rated
        if pool.turn_timer_seconds:
            record.turn_deadline.FromMilliseconds(now + pool.turn_timer_seconds * 1000)
        return record


def _seeker(entry: PoolEntry) -> pairing.Seeker:
    return pairing.Seeker(entry.player_id, entry.rating, entry.entered_ms, entry.last_opponent)
