"""Play online now: seeking an opponent, and the leaderboards.

:meth:`MatchmakingCalls.seek` puts the player in the pool of one variant, one turn timer and
rated or casual games, and returns a :class:`Seek`: an async iterator of :class:`SeekWaiting`
progress (players in the pool, the rating range accepted now, the time waited) that ends with
one :class:`SeekPaired`, the new table with both players seated and the game under way::

    async with goti.seek(ENGLISH, turn_timer=30, rated=True) as seek:
        async for progress in seek:
            match progress:
                case SeekWaiting(seekers_in_pool=count, waited_seconds=waited): ...
                case SeekPaired(table=table, opponent=opponent): ...

The stream is the seek: closing it (``aclose()``, leaving its ``async with``, closing the
client) takes the player out of the pool as soon as the server hears of it.  To know the
player is out before showing anything else, ``await seek.cancel()``: it closes the stream
and returns once the server has taken the seek out of its pool, or with the
:class:`SeekPaired` of a pairing that came first (then the player is seated there: open that
table).  A stream that breaks is opened again by itself with the same request id, tried
often enough to land inside the server's resume window (10 s by default), so the player
keeps their place and the time waited, and hears a pairing the broken stream missed.
Refusals raise: :class:`~goti_client.errors.InvalidRequestError` (a variant Goti does not
pool, a turn timer no pool has, a malformed request id),
:class:`~goti_client.errors.ActionRefusedError` with reason ``SEEK_IN_PROGRESS`` (another seek
of the player's is open; or this one was resumed by its request id on another connection, and
goes on there) or ``SEEK_CANCELLED`` (the seek was cancelled, by :meth:`Seek.cancel` on
another connection), :class:`~goti_client.errors.AlreadyAtTableError` (a paired game to finish
first) and :class:`~goti_client.errors.RateLimitedError`.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, Final, Protocol, Self, TypeAlias, TypeVar

import grpc

from goti.api.v1 import game_pb2, matchmaking_pb2
from goti.rules import ENGLISH, Variant
from goti_client import wire
from goti_client.connection import SEEK_BACKOFF, Backoff, new_request_id
from goti_client.errors import InvalidRequestError, Reason, error_from_rpc
from goti_client.tables import Player, Rating, Table
from goti_client.watches import ReconnectingStream

if TYPE_CHECKING:
    from goti.api.v1 import matchmaking_pb2_grpc

RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT")

SEEK_TURN_TIMERS: Final[Mapping[int, matchmaking_pb2.SeekTimer.ValueType]] = MappingProxyType(
    {
        0: matchmaking_pb2.SEEK_TIMER_NONE,
        30: matchmaking_pb2.SEEK_TIMER_30_SECONDS,
        120: matchmaking_pb2.SEEK_TIMER_2_MINUTES,
    }
)
"""The turn timers the pools have, in seconds a move (0: no timer)."""
_ANY_RATING_BELOW: Final = -(2**31)
_ANY_RATING_ABOVE: Final = 2**31 - 1
"""The range limits the server sends once a seeker accepts any rating."""


@dataclass(frozen=True, slots=True)
class SeekWaiting:
    """A seek still waiting for an opponent."""

    seekers_in_pool: int
    """Players waiting in the pool now, the caller included."""
    min_rating: int | None
    """The lowest opponent's rating accepted now; None once any rating is (after a long
    wait).  The range widens with the wait."""
    max_rating: int | None
    """The highest opponent's rating accepted now; None once any rating is."""
    waited_seconds: float
    """How long the caller has waited, a resumed seek's earlier wait included."""
    rating: Rating
    """The caller's own rating in the pool's variant (a new player's 1500? at first)."""

    @property
    def accepts_any_rating(self) -> bool:
        """Whether the seek takes an opponent of any rating now."""
        return self.min_rating is None and self.max_rating is None


@dataclass(frozen=True, slots=True)
class SeekPaired:
    """A seek paired: the table is ready, both players seated, the game under way (who moves
    first was drawn at random).  Watch it from ``table.seq`` and play it like any table."""

    table: Table
    """The new table; its ``role`` is the caller's seat."""
    opponent: Player
    opponent_rating: Rating | None
    """The opponent's rating in the table's variant."""


SeekProgress: TypeAlias = SeekWaiting | SeekPaired
"""What a :class:`Seek` yields."""


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One place on a leaderboard."""

    rank: int
    """1 for the best rating."""
    player: Player
    rating: Rating


@dataclass(frozen=True, slots=True)
class Leaderboard:
    """A variant's best-rated players (ratings no longer provisional), and the caller's place."""

    variant: Variant
    entries: tuple[LeaderboardEntry, ...]
    """The top 100 at most, best first."""
    you: LeaderboardEntry | None
    """The caller's place; None for a spectator, or while the caller's rating is provisional
    or missing."""


def _limit(value: int, any_rating: int) -> int | None:
    return None if value == any_rating else value


def _progress_of(response: matchmaking_pb2.SeekResponse) -> SeekProgress | None:
    kind = response.WhichOneof("progress")
    if kind == "waiting":
        waiting = response.waiting
        return SeekWaiting(
            seekers_in_pool=waiting.seekers_in_pool,
            min_rating=_limit(waiting.min_rating, _ANY_RATING_BELOW),
            max_rating=_limit(waiting.max_rating, _ANY_RATING_ABOVE),
            waited_seconds=waiting.waited.ToMilliseconds() / 1000,
            rating=wire.rating_from_proto(waiting.rating, field="waiting.rating"),
        )
    if kind == "paired":
        return _paired_of(response.paired)
    return None


def _paired_of(paired: matchmaking_pb2.SeekPaired) -> SeekPaired:
    return SeekPaired(
        table=wire.table_from_proto(paired.table, paired.your_role),
        opponent=wire.player_from_proto(paired.opponent),
        opponent_rating=(
            wire.rating_from_proto(paired.opponent_rating, field="paired.opponent_rating")
            if paired.HasField("opponent_rating")
            else None
        ),
    )


def _entry_of(message: matchmaking_pb2.LeaderboardEntry, field: str) -> LeaderboardEntry:
    return LeaderboardEntry(
        rank=message.rank,
        player=wire.player_from_proto(message.player),
        rating=wire.rating_from_proto(message.rating, field=f"{field}.rating"),
    )


def _refused(field: str, message: str) -> InvalidRequestError:
    return InvalidRequestError(
        message,
        code=grpc.StatusCode.INVALID_ARGUMENT,
        reason=Reason.INVALID_REQUEST,
        metadata={"field": field},
    )


def _variant_value(variant: Variant) -> game_pb2.Variant.ValueType:
    """The wire value of a variant Goti plays; an InvalidRequestError naming ``variant``, as
    the server would send, for any other."""
    try:
        return wire.variant_to_proto(variant)
    except KeyError:
        message = f"variant is {variant.name!r}, which Goti does not play: english or russian"
        raise _refused("variant", message) from None


class Seek(ReconnectingStream[matchmaking_pb2.SeekResponse, SeekProgress]):
    """A seek for an opponent, live: ``async for progress in seek`` yields
    :class:`SeekWaiting` (at once, then whenever the pool or the range changes, and every few
    seconds) and ends after one :class:`SeekPaired`.  The stream opens on the first read.

    Close it to stop seeking: ``aclose()`` (from any task), leaving ``async with seek``, or
    closing the client.  Breaking out of ``async for`` alone leaves the stream open until the
    seek is closed or dropped, so seek inside ``async with``.
    """

    def __init__(
        self,
        stub: matchmaking_pb2_grpc.MatchmakingServiceAsyncStub,
        request: matchmaking_pb2.SeekRequest,
        *,
        metadata: tuple[tuple[str, str], ...],
        on_table: Callable[[Table], object],
        cancel: Callable[[str], Awaitable[matchmaking_pb2.CancelSeekResponse]],
        backoff: Backoff,
    ) -> None:
        self._stub = stub
        self._request = request
        self._metadata = metadata
        self._on_table = on_table
        self._cancel = cancel
        self._waiting: SeekWaiting | None = None
        self._paired: SeekPaired | None = None
        super().__init__(backoff, give_up_after=None)

    @property
    def request_id(self) -> str:
        """The seek's id: every reopened stream sends it, so the server resumes the seek."""
        return self._request.request_id

    @property
    def waiting(self) -> SeekWaiting | None:
        """The latest progress yielded, while not paired."""
        return self._waiting

    @property
    def paired(self) -> SeekPaired | None:
        """The pairing, once yielded."""
        return self._paired

    async def cancel(self) -> SeekPaired | None:
        """Stop seeking for sure: close the stream, and return once the server has taken the
        seek out of its pool (None), or with the pairing that came first (the player is
        seated at that table).  Retried while the server is unreachable, up to the client's
        call timeout; safe to call again."""
        self.stop()
        response = await self._cancel(self.request_id)
        if not response.HasField("paired"):
            return None
        paired = _paired_of(response.paired)
        self._on_table(paired.table)
        self._waiting, self._paired = None, paired
        return paired

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _open(self) -> grpc.aio.UnaryStreamCall[object, matchmaking_pb2.SeekResponse]:
        return self._stub.Seek(self._request, metadata=self._metadata)  # type: ignore[return-value]

    async def _updates_of(self, response: matchmaking_pb2.SeekResponse) -> list[SeekProgress]:
        progress = _progress_of(response)
        if isinstance(progress, SeekWaiting):
            self._waiting = progress
        elif isinstance(progress, SeekPaired):
            self._on_table(progress.table)
            self._waiting, self._paired = None, progress
        return [] if progress is None else [progress]

    def _is_last(self, update: SeekProgress) -> bool:
        return isinstance(update, SeekPaired)

    def _reopens_after(self, error: grpc.aio.AioRpcError) -> bool:
        # A seek refused for its rate is the player's to hear; only a new seek counts
        # against the limit, never a stream reopened with the same request id.
        if error_from_rpc(error).reason is Reason.RATE_LIMITED:
            return False
        return super()._reopens_after(error)


class _ClientPlumbing(Protocol):
    """What the matchmaking calls need of the client they are part of."""

    _matchmaking: matchmaking_pb2_grpc.MatchmakingServiceAsyncStub
    _watches: weakref.WeakSet[ReconnectingStream[Any, Any]]

    def _metadata(self) -> tuple[tuple[str, str], ...]: ...

    def _seen(self, table: Table) -> Table: ...

    async def _call(
        self,
        method: grpc.aio.UnaryUnaryMultiCallable[RequestT, ResponseT],
        request: RequestT,
        *,
        retry_codes: frozenset[grpc.StatusCode] = ...,
        metadata: tuple[tuple[str, str], ...] | None = None,
    ) -> ResponseT: ...


class MatchmakingCalls:
    """The :class:`~goti_client.GotiClient` calls of Play online now (a part of the client,
    mixed into it)."""

    def seek(
        self: _ClientPlumbing,
        variant: Variant = ENGLISH,
        *,
        turn_timer: int = 0,
        rated: bool = False,
        request_id: str | None = None,
    ) -> Seek:
        """Look for an opponent: ``variant``, ``turn_timer`` seconds a move (0, 30 or 120; 0
        is none), ``rated`` or casual.  Returns the :class:`Seek` to iterate and close (see
        there); pass an earlier seek's ``request_id`` to resume it from another connection.
        Raises :class:`~goti_client.errors.InvalidRequestError` at once for a variant or a
        turn timer that no pool has."""
        timer = SEEK_TURN_TIMERS.get(turn_timer)
        if timer is None:
            choices = ", ".join(str(seconds) for seconds in SEEK_TURN_TIMERS)
            message = f"turn_timer is {turn_timer} s, which no pool has: {choices}"
            raise _refused("turn_timer", message)
        request = matchmaking_pb2.SeekRequest(
            request_id=request_id or new_request_id(),
            variant=_variant_value(variant),
            timer=timer,
            rated=rated,
        )

        async def cancel(request_id: str) -> matchmaking_pb2.CancelSeekResponse:
            return await self._call(
                self._matchmaking.CancelSeek,
                matchmaking_pb2.CancelSeekRequest(request_id=request_id),
            )

        seek = Seek(
            self._matchmaking,
            request,
            metadata=self._metadata(),
            on_table=self._seen,
            cancel=cancel,
            backoff=SEEK_BACKOFF,
        )
        self._watches.add(seek)
        return seek

    async def leaderboard(self: _ClientPlumbing, variant: Variant = ENGLISH) -> Leaderboard:
        """The best-rated players of ``variant`` (the top 100) and, for a player, their own
        place."""
        response = await self._call(
            self._matchmaking.GetLeaderboard,
            matchmaking_pb2.GetLeaderboardRequest(variant=_variant_value(variant)),
        )
        return Leaderboard(
            variant=variant,
            entries=tuple(
                _entry_of(entry, f"entries[{index}]")
                for index, entry in enumerate(response.entries)
            ),
            you=_entry_of(response.you, "you") if response.HasField("you") else None,
        )
