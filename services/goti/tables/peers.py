"""The tables service's gRPC peers: the referee, which rules on every change to a game, and
the computer player.  Every call carries a deadline.

Game states travel as the bytes the store keeps: a request is the state's field followed by
the rest of the message, which protobuf reads as one message, so a state is never parsed and
serialized again on its way to the referee.

A peer that refuses a request with a Goti status (an illegal move, an action out of turn)
raises :class:`PeerRefusedError` carrying that status; a peer that cannot be reached, runs out
of time or fails without one raises :class:`PeerUnavailableError`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Hashable, Mapping
from typing import Any, Final, Generic, TypeVar

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
            raise self._failure(method, error) from error
        assert isinstance(response, response_type)
        return response

    def _failure(self, method: str, error: grpc.aio.AioRpcError) -> Exception:
        status = ErrorStatus.from_rpc_error(error)
        if status is not None and error.code() not in _UNAVAILABLE_CODES:
            return PeerRefusedError(status)
        if error.code() is grpc.StatusCode.DEADLINE_EXCEEDED:
            return PeerUnavailableError(self._name, f"did not answer {method} in time")
        return PeerUnavailableError(
            self._name, f"failed {method}: {error.code().name} {error.details()}"
        )


class Referee:
    """The referee, over gRPC; remembers recent game descriptions, which depend only on the
    game state."""

    def __init__(
        self, channel: grpc.aio.Channel, *, deadline_seconds: float, memo_size: int = 4096
    ) -> None:
        self._peer = _Peer("referee", channel, REFEREE_SERVICE)
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
        return await self._peer.call(
            "Apply", with_state(state, action), referee_pb2.ApplyResponse, self._deadline
        )

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
