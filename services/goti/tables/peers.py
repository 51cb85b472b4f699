"""The tables service's gRPC peers: the referee, which rules on every change to a game, and
the computer player.  Every call carries a deadline.

Game states travel as the bytes the store keeps: a request is the state's field followed by
the rest of the message, which protobuf reads as one message, so a state is never parsed and
serialized again on its way to the referee.

The referee's Apply, once or more for every move, goes over a few long-lived ApplyStreams
rather than as unary calls: a message each way on an open stream costs the caller about 70 µs
of CPU and the referee about 64 µs, where a unary call costs about 190 µs and 237 µs (measured
on grpc.aio over uvloop, 16 callers at once). The answers find their callers by ``call_id``;
a stream that ends (a referee stopping, a connection lost) has its unanswered requests sent
again on a new one, within each call's deadline, as the channel's retry policy does for unary
calls.

A peer that refuses a request with a Goti status (an illegal move, an action out of turn)
raises :class:`PeerRefusedError` carrying that status; a peer that cannot be reached, runs out
of time or fails without one raises :class:`PeerUnavailableError`.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Hashable, Mapping
from typing import Any, Final, Generic, TypeAlias, TypeVar

import grpc
from google.protobuf.message import Message

from goti.api.error_status import ErrorStatus
from goti.api.v1 import ai_pb2, game_pb2, referee_pb2

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
Response = TypeVar("Response", bound=Message)

REFEREE_SERVICE: Final = "/goti.api.v1.RefereeService/"
AI_SERVICE: Final = "/goti.api.v1.AiService/"

_STATE_FIELD_TAG: Final = b"\x0a"  # field 1, length-delimited: `state` in every request here
_CALL_ID_TAG: Final = b"\x08"  # field 1, varint: ApplyStreamRequest's `call_id`
_REQUEST_FIELD_TAG: Final = b"\x12"  # field 2, length-delimited: ApplyStreamRequest's `request`

APPLY_STREAMS: Final = 4
"""ApplyStreams a tables process keeps open to the referee. A stream goes to one replica, the
one round-robin picked when it opened (the referee closes connections after
``GOTI_MAX_CONNECTION_AGE_SECONDS``, and the streams open again, picked again): a few spread
each tables process's moves over the replicas; each more costs two idle tasks."""
_STREAM_ATTEMPTS: Final = 3
_RESEND_BACKOFF_SECONDS: Final = (0.05, 0.1)
"""As the channel's retry policy for unary calls (goti.serving.SERVICE_CONFIG): three attempts
in all, the second 50 ms after the first fails, the third 100 ms after that."""
_UNAVAILABLE_CODES: Final = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)


class PeerUnavailableError(Exception):
    """A peer did not answer in time, could not be reached, or failed without a reason."""

    def __init__(self, peer: str, message: str) -> None:
        super().__init__(f"the {peer} {message}")
        self.peer = peer


class PeerRefusedError(Exception):
    """A peer refused the request with a Goti status (``status``)."""

    def __init__(self, status: ErrorStatus) -> None:
        super().__init__(status.message)
        self.status = status


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def with_state(state: bytes, rest: Message) -> bytes:
    """The wire form of a request whose field 1 is the game state ``state`` (its bytes) and
    whose other fields are those of ``rest``."""
    return _STATE_FIELD_TAG + _varint(len(state)) + state + rest.SerializeToString()


def as_stream_request(call_id: int, request: bytes) -> bytes:
    """The wire form of an ApplyStreamRequest carrying ``call_id`` and the ApplyRequest whose
    bytes are ``request`` (as :func:`with_state` built them), which is not parsed again."""
    return _CALL_ID_TAG + _varint(call_id) + _REQUEST_FIELD_TAG + _varint(len(request)) + request


class _Memo(Generic[K, V]):
    """The last ``size`` answers by key; concurrent askers of one key share a single call,
    which goes on even if the asker that started it gives up."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._done: OrderedDict[K, V] = OrderedDict()
        self._pending: dict[K, asyncio.Task[V]] = {}

    def remember(self, key: K, value: V) -> None:
        self._done[key] = value
        self._done.move_to_end(key)
        while len(self._done) > self._size:
            self._done.popitem(last=False)

    async def get(self, key: K, compute: Callable[[], Coroutine[Any, Any, V]]) -> V:
        found = self._done.get(key)
        if found is not None:
            self._done.move_to_end(key)
            return found
        task = self._pending.get(key)
        if task is None:
            task = asyncio.ensure_future(compute())
            self._pending[key] = task
            task.add_done_callback(lambda finished: self._settle(key, finished))
        return await asyncio.shield(task)

    def _settle(self, key: K, task: asyncio.Task[V]) -> None:
        if self._pending.get(key) is task:
            del self._pending[key]
        if not task.cancelled() and task.exception() is None:
            self.remember(key, task.result())


class _Peer:
    def __init__(self, name: str, channel: grpc.aio.Channel, service: str) -> None:
        self._name = name
        self._channel = channel
        self._service = service
        self._methods: dict[str, grpc.aio.UnaryUnaryMultiCallable[bytes, Message]] = {}

    async def call(
        self, method: str, request: bytes, response_type: type[Response], deadline: float
    ) -> Response:
        multicallable = self._methods.get(method)
        if multicallable is None:
            multicallable = self._channel.unary_unary(
                self._service + method,
                request_serializer=bytes,
                response_deserializer=response_type.FromString,
            )
            self._methods[method] = multicallable
        try:
            response = await multicallable(request, timeout=deadline)
        except grpc.aio.AioRpcError as error:
            raise self.failure(method, error) from error
        assert isinstance(response, response_type)
        return response

    def failure(self, method: str, error: grpc.aio.AioRpcError) -> Exception:
        """The peer error a failed call of ``method`` raises."""
        status = ErrorStatus.from_rpc_error(error)
        if status is not None and error.code() not in _UNAVAILABLE_CODES:
            return PeerRefusedError(status)
        if error.code() is grpc.StatusCode.DEADLINE_EXCEEDED:
            return PeerUnavailableError(self._name, f"did not answer {method} in time")
        return PeerUnavailableError(
            self._name, f"failed {method}: {error.code().name} {error.details()}"
        )


class _StreamEndedError(Exception):
    """The stream a request went on ended before its answer came: ``error`` says how (None:
    the referee ended it with OK)."""

    def __init__(self, error: grpc.aio.AioRpcError | None) -> None:
        super().__init__("the stream ended" if error is None else error.code().name)
        self.error = error

    @property
    def worth_resending(self) -> bool:
        """Whether the request may be answered on a new stream: what ends a stream when a
        referee stops or a connection drops, not a refusal of the stream itself."""
        return self.error is None or self.error.code() in {
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.CANCELLED,
        }


_StreamCall: TypeAlias = "grpc.aio.StreamStreamCall[bytes, referee_pb2.ApplyStreamResponse]"


class _ApplyStream:
    """One open ApplyStream: a task writes the requests in turn (a caller that gives up never
    cancels a write under way, which would cancel the whole stream), and a task reads the
    answers and hands each to the caller waiting for its ``call_id``."""

    def __init__(self, call: _StreamCall) -> None:
        self._call = call
        self._waiting: dict[int, asyncio.Future[referee_pb2.ApplyStreamResponse]] = {}
        self._outgoing: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.ended = False
        self._writing = asyncio.ensure_future(self._write())
        self._reading = asyncio.ensure_future(self._read())

    def send(self, call_id: int, request: bytes) -> asyncio.Future[referee_pb2.ApplyStreamResponse]:
        """Queue ``request`` (an ApplyStreamRequest's bytes); the future is its answer, or
        fails with :class:`_StreamEndedError`."""
        future: asyncio.Future[referee_pb2.ApplyStreamResponse] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiting[call_id] = future
        self._outgoing.put_nowait(request)
        return future

    def forget(self, call_id: int) -> None:
        """Stop waiting for ``call_id``'s answer: a late one is dropped."""
        self._waiting.pop(call_id, None)

    async def _write(self) -> None:
        try:
            while (request := await self._outgoing.get()) is not None:
                await self._call.write(request)
            await self._call.done_writing()
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            # The stream is over: the reader hears how, and fails what waits.
            return

    async def _read(self) -> None:
        error: grpc.aio.AioRpcError | None = None
        try:
            while (answer := await self._call.read()) is not grpc.aio.EOF:
                assert isinstance(answer, referee_pb2.ApplyStreamResponse)
                future = self._waiting.pop(answer.call_id, None)
                if future is not None and not future.done():
                    future.set_result(answer)
        except grpc.aio.AioRpcError as failed:
            error = failed
        finally:
            self.ended = True
            self._writing.cancel()
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(_StreamEndedError(error))
            self._waiting.clear()

    async def close(self, patience: float) -> None:
        """Say no more requests will come and wait ``patience`` seconds for the answers to
        those sent; then cancel the stream."""
        self._outgoing.put_nowait(None)
        done, _ = await asyncio.wait({self._reading}, timeout=patience)
        if not done:
            self._call.cancel()
        await asyncio.gather(self._reading, self._writing, return_exceptions=True)


_CLOSE_PATIENCE_SECONDS: Final = 1.0


class _ApplyStreams:
    """Apply over ``count`` ApplyStreams, each opened when first needed and again when it has
    ended; calls take turns among them."""

    def __init__(self, channel: grpc.aio.Channel, count: int) -> None:
        self._open_stream: grpc.aio.StreamStreamMultiCallable[
            bytes, referee_pb2.ApplyStreamResponse
        ] = channel.stream_stream(
            REFEREE_SERVICE + "ApplyStream",
            request_serializer=None,
            response_deserializer=referee_pb2.ApplyStreamResponse.FromString,
        )
        self._streams: list[_ApplyStream | None] = [None] * count
        self._turns = itertools.cycle(range(count))
        self._call_ids = itertools.count(1)
        self._closed = False

    def _stream(self) -> _ApplyStream:
        if self._closed:
            raise PeerUnavailableError("referee", "client is closed")
        turn = next(self._turns)
        stream = self._streams[turn]
        if stream is None or stream.ended:
            stream = self._streams[turn] = _ApplyStream(self._open_stream())
        return stream

    async def apply(self, request: bytes) -> referee_pb2.ApplyStreamResponse:
        """The answer to ``request`` (an ApplyRequest's bytes), sent again on a new stream when
        its stream ends first; raises the last :class:`_StreamEndedError` when every attempt
        ended so, or one not worth another. The caller bounds it with its deadline."""
        call_id = next(self._call_ids)
        framed = as_stream_request(call_id, request)
        for attempt in range(_STREAM_ATTEMPTS):
            if attempt:
                await asyncio.sleep(_RESEND_BACKOFF_SECONDS[attempt - 1])
            stream = self._stream()
            try:
                return await stream.send(call_id, framed)
            except _StreamEndedError as ended:
                if not ended.worth_resending or attempt + 1 == _STREAM_ATTEMPTS:
                    raise
            finally:
                stream.forget(call_id)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def close(self) -> None:
        """End every stream, once the answers to what was sent have come (briefly)."""
        self._closed = True
        streams = [stream for stream in self._streams if stream is not None]
        self._streams = [None] * len(self._streams)
        await asyncio.gather(*(stream.close(_CLOSE_PATIENCE_SECONDS) for stream in streams))


class Referee:
    """The referee, over gRPC; remembers recent game descriptions, which depend only on the
    game state. Apply goes over :data:`APPLY_STREAMS` long-lived streams; :meth:`close`
    ends them."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        deadline_seconds: float,
        memo_size: int = 4096,
        apply_streams: int = APPLY_STREAMS,
    ) -> None:
        self._peer = _Peer("referee", channel, REFEREE_SERVICE)
        self._streams = _ApplyStreams(channel, apply_streams)
        self._deadline = deadline_seconds
        self._views: _Memo[bytes, game_pb2.GameView] = _Memo(memo_size)

    async def start_game(
        self, variant: game_pb2.Variant.ValueType
    ) -> referee_pb2.StartGameResponse:
        """A new game of ``variant`` from its start position."""
        request = referee_pb2.StartGameRequest(variant=variant).SerializeToString()
        response = await self._peer.call(
            "StartGame", request, referee_pb2.StartGameResponse, self._deadline
        )
        self._views.remember(response.state.SerializeToString(), response.view)
        return response

    async def describe(self, state: bytes) -> game_pb2.GameView:
        """The game as players see it."""

        async def ask() -> game_pb2.GameView:
            response = await self._peer.call(
                "DescribeGame",
                with_state(state, referee_pb2.DescribeGameRequest()),
                referee_pb2.DescribeGameResponse,
                self._deadline,
            )
            return response.view

        return await self._views.get(state, ask)

    def remember_view(self, state: bytes, view: game_pb2.GameView) -> None:
        """Keep a description the referee gave with another answer."""
        self._views.remember(state, view)

    async def apply(
        self, state: bytes, action: referee_pb2.ApplyRequest
    ) -> referee_pb2.ApplyResponse:
        """Apply an action (``action`` without its state) to the game ``state``."""
        request = with_state(state, action)
        try:
            async with asyncio.timeout(self._deadline):
                answer = await self._streams.apply(request)
        except TimeoutError:
            raise PeerUnavailableError("referee", "did not answer Apply in time") from None
        except _StreamEndedError as ended:
            if ended.error is None:
                raise PeerUnavailableError("referee", "ended the Apply stream unanswered") from None
            if ended.error.code() is grpc.StatusCode.UNIMPLEMENTED:
                # A referee older than ApplyStream, during a deploy.
                return await self._peer.call(
                    "Apply", request, referee_pb2.ApplyResponse, self._deadline
                )
            raise self._peer.failure("Apply", ended.error) from ended.error
        if answer.WhichOneof("result") == "response":
            return answer.response
        status = ErrorStatus.from_details(answer.refusal)
        if status is None or status.code in _UNAVAILABLE_CODES:
            raise PeerUnavailableError("referee", "refused Apply without a Goti status")
        raise PeerRefusedError(status)

    async def close(self) -> None:
        """End the Apply streams; calls after this fail as unavailable."""
        await self._streams.close()

    async def export_pdn(self, state: bytes, tags: Mapping[str, str]) -> str:
        """The game as PDN, with ``tags``."""
        response = await self._peer.call(
            "ExportPdn",
            with_state(state, referee_pb2.ExportPdnRequest(tags=dict(tags))),
            referee_pb2.ExportPdnResponse,
            self._deadline,
        )
        return response.pdn


class ComputerPlayer:
    """The AI service, over gRPC."""

    def __init__(self, channel: grpc.aio.Channel, *, deadline_seconds: Mapping[int, float]) -> None:
        self._peer = _Peer("computer player", channel, AI_SERVICE)
        self._deadlines = dict(deadline_seconds)

    def _deadline(self, level: ai_pb2.Level.ValueType) -> float:
        return self._deadlines.get(level, max(self._deadlines.values(), default=10.0))

    async def choose_move(
        self, state: bytes, level: ai_pb2.Level.ValueType
    ) -> ai_pb2.ChooseMoveResponse:
        """A move for the side to move, at ``level``."""
        return await self._peer.call(
            "ChooseMove",
            with_state(state, ai_pb2.ChooseMoveRequest(level=level)),
            ai_pb2.ChooseMoveResponse,
            self._deadline(level),
        )

    async def accepts_draw(self, state: bytes, level: ai_pb2.Level.ValueType) -> bool:
        """Whether the side to move accepts the opponent's open draw offer."""
        response = await self._peer.call(
            "DecideDraw",
            with_state(state, ai_pb2.DecideDrawRequest(level=level)),
            ai_pb2.DecideDrawResponse,
            self._deadline(level),
        )
        return response.accept
