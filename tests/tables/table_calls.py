"""What the tables tests share: guests calling the raw generated stubs with their token,
watch streams collected in the background, and failed calls read back as Goti statuses."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

import grpc
import pytest

from goti.api.error_status import ErrorStatus
from goti.api.v1 import (
    game_pb2,
    players_pb2,
    players_pb2_grpc,
    tables_pb2,
    tables_pb2_grpc,
)

Tables: TypeAlias = "tables_pb2_grpc.TablesServiceAsyncStub"
Players: TypeAlias = "players_pb2_grpc.PlayersServiceAsyncStub"

CALL_TIMEOUT = 30.0
"""Seconds; generous, for a busy machine."""
WAIT_TIMEOUT = 30.0


def new_request_id() -> str:
    return uuid.uuid4().hex


@dataclass
class Guest:
    """A guest player with a token, calling one tables server."""

    player: players_pb2.Player
    token: str
    tables: Tables
    players: Players

    @property
    def player_id(self) -> str:
        return self.player.player_id

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    def on(self, channel: grpc.aio.Channel) -> Guest:
        """The same guest calling another server."""
        return Guest(
            self.player,
            self.token,
            tables_pb2_grpc.TablesServiceStub(channel),
            players_pb2_grpc.PlayersServiceStub(channel),
        )

    async def create(self, **fields: Any) -> tables_pb2.CreateTableResponse:
        fields.setdefault("request_id", new_request_id())
        return await self.tables.CreateTable(
            tables_pb2.CreateTableRequest(**fields), metadata=self.metadata, timeout=CALL_TIMEOUT
        )

    async def join(self, code: str) -> tables_pb2.JoinTableResponse:
        return await self.tables.JoinTable(
            tables_pb2.JoinTableRequest(request_id=new_request_id(), code=code),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT,
        )

    async def get(self, table_id: str) -> tables_pb2.GetTableResponse:
        return await self.tables.GetTable(
            tables_pb2.GetTableRequest(table_id=table_id),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT,
        )

    async def play(
        self,
        table_id: str,
        move: str | Sequence[int],
        expected_seq: int,
        *,
        request_id: str | None = None,
        side: game_pb2.Color.ValueType = game_pb2.COLOR_UNSPECIFIED,
    ) -> tables_pb2.PlayResponse:
        request = tables_pb2.PlayRequest(
            table_id=table_id,
            request_id=request_id or new_request_id(),
            expected_seq=expected_seq,
            side=side,
        )
        if isinstance(move, str):
            request.notation = move
        else:
            request.path.squares.extend(move)
        return await self.tables.Play(request, metadata=self.metadata, timeout=CALL_TIMEOUT)

    async def offer_draw(self, table_id: str, expected_seq: int) -> tables_pb2.OfferDrawResponse:
        return await self.tables.OfferDraw(
            tables_pb2.OfferDrawRequest(
                table_id=table_id, request_id=new_request_id(), expected_seq=expected_seq
            ),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT,
        )

    async def answer_draw(
        self, table_id: str, expected_seq: int, *, accept: bool
    ) -> tables_pb2.AnswerDrawResponse:
        return await self.tables.AnswerDraw(
            tables_pb2.AnswerDrawRequest(
                table_id=table_id,
                request_id=new_request_id(),
                expected_seq=expected_seq,
                accept=accept,
            ),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT,
        )

    async def resign(self, table_id: str, expected_seq: int) -> tables_pb2.ResignResponse:
        return await self.tables.Resign(
            tables_pb2.ResignRequest(
                table_id=table_id, request_id=new_request_id(), expected_seq=expected_seq
            ),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT,
        )

    async def take_back(self, table_id: str, expected_seq: int) -> tables_pb2.TakeBackResponse:
        return await self.tables.TakeBack(
            tables_pb2.TakeBackRequest(
                table_id=table_id, request_id=new_request_id(), expected_seq=expected_seq
            ),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT,
        )

    async def rematch(self, table_id: str, expected_seq: int) -> tables_pb2.RematchResponse:
        return await self.tables.Rematch(
            tables_pb2.RematchRequest(
                table_id=table_id, request_id=new_request_id(), expected_seq=expected_seq
            ),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT,
        )

    async def me(self) -> players_pb2.GetMeResponse:
        return await self.players.GetMe(
            players_pb2.GetMeRequest(), metadata=self.metadata, timeout=CALL_TIMEOUT
        )


async def new_guest(channel: grpc.aio.Channel, name: str = "") -> Guest:
    """A new guest player on the server at the other end of ``channel``."""
    players = players_pb2_grpc.PlayersServiceStub(channel)
    created = await players.CreateGuest(
        players_pb2.CreateGuestRequest(display_name=name), timeout=CALL_TIMEOUT
    )
    return Guest(
        created.player, created.player_token, tables_pb2_grpc.TablesServiceStub(channel), players
    )


async def refusal(call: Awaitable[object]) -> ErrorStatus:
    """The Goti status a call fails with; it must fail, with one, and never with INTERNAL."""
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    error = raised.value
    assert error.code() is not grpc.StatusCode.INTERNAL, error.details()
    status = ErrorStatus.from_rpc_error(error)
    assert status is not None, f"{error.code()} without a Goti status: {error.details()}"
    assert status.code is error.code()
    return status


T = TypeVar("T")


async def until_read(
    read: Callable[[], Awaitable[T]],
    holds: Callable[[T], bool],
    *,
    timeout: float = 30.0,
    what: str = "timed out waiting",
    every: float = 0.02,
) -> T:
    """Read (Redis, say) until what ``read()`` gives ``holds``; that value.  Fails with
    ``what`` and the last value read after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not holds(value := await read()):
        assert loop.time() < deadline, f"{what}: last read {value!r}"
        await asyncio.sleep(every)
    return value


async def eventually(
    check: Callable[[], bool],
    timeout: float = WAIT_TIMEOUT,
    *,
    what: str = "timed out waiting",
    every: float = 0.02,
) -> None:
    """Wait until ``check()`` holds; fails with ``what`` after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(what)
        await asyncio.sleep(every)


@dataclass
class Watch:
    """A table's watch stream, read in the background into ``messages``."""

    after_seq: int = 0
    messages: list[tables_pb2.WatchTableResponse] = field(default_factory=list)
    error: grpc.aio.AioRpcError | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def events(self) -> list[tables_pb2.TableEvent]:
        return [message.event for message in self.messages if message.HasField("event")]

    @property
    def last_seq(self) -> int:
        seq = self.after_seq
        for message in self.messages:
            if message.HasField("snapshot"):
                seq = message.snapshot.table.seq
            elif message.HasField("event"):
                seq = message.event.seq
        return seq

    async def until_seq(self, seq: int, timeout: float = WAIT_TIMEOUT) -> None:
        await eventually(lambda: self.last_seq >= seq or self.ended.is_set(), timeout)
        assert self.last_seq >= seq, f"the stream ended at seq {self.last_seq}: {self.error}"


@contextlib.asynccontextmanager
async def watching(
    channel: grpc.aio.Channel,
    table_id: str,
    after_seq: int = 0,
    metadata: tuple[tuple[str, str], ...] = (),
) -> AsyncIterator[Watch]:
    """Watch a table while the block runs."""
    tables = tables_pb2_grpc.TablesServiceStub(channel)
    watch = Watch(after_seq)
    call = tables.WatchTable(
        tables_pb2.WatchTableRequest(table_id=table_id, after_seq=after_seq), metadata=metadata
    )

    async def read() -> None:
        try:
            async for message in call:
                watch.messages.append(message)
        except grpc.aio.AioRpcError as error:
            if error.code() is not grpc.StatusCode.CANCELLED:
                watch.error = error
        finally:
            watch.ended.set()

    reader = asyncio.ensure_future(read())
    try:
        yield watch
    finally:
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


def legal_paths(view: game_pb2.GameView) -> list[list[int]]:
    """The legal moves of the side to move, as paths."""
    return [list(move.path) for move in view.turn.legal_moves]


def first_legal(turn: game_pb2.Turn) -> list[int]:
    return list(turn.legal_moves[0].path)


def kinds(events: Sequence[tables_pb2.TableEvent]) -> list[str]:
    return [event.WhichOneof("kind") or "" for event in events]


async def redis_contents(redis: Any) -> dict[bytes, bytes]:
    """Every Goti key in Redis with its value (DUMP), to show that nothing changed."""
    contents = {}
    async for key in redis.scan_iter(match="goti:*"):
        contents[key] = await redis.dump(key)
    return contents


@dataclass
class ResumingWatch:
    """A table watched as an app would: on a broken stream it reconnects (to the next target
    in turn) and resumes from the last seq it has.  Every event it was sent is kept, so a
    test can check there was no gap and no duplicate."""

    table_id: str
    channels: list[grpc.aio.Channel]
    events: list[tables_pb2.TableEvent] = field(default_factory=list)
    snapshots: list[tables_pb2.TableSnapshot] = field(default_factory=list)
    breaks: list[grpc.StatusCode] = field(default_factory=list)

    @property
    def last_seq(self) -> int:
        seq = 0
        if self.snapshots:
            seq = self.snapshots[-1].table.seq
        if self.events and self.events[-1].seq > seq:
            seq = self.events[-1].seq
        return seq

    async def run(self) -> None:
        attempt = 0
        while True:
            channel = self.channels[attempt % len(self.channels)]
            tables = tables_pb2_grpc.TablesServiceStub(channel)
            call = tables.WatchTable(
                tables_pb2.WatchTableRequest(table_id=self.table_id, after_seq=self.last_seq)
            )
            try:
                async for message in call:
                    if message.HasField("snapshot"):
                        self.snapshots.append(message.snapshot)
                    elif message.HasField("event"):
                        self.events.append(message.event)
            except grpc.aio.AioRpcError as error:
                if error.code() not in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                ):
                    raise
                self.breaks.append(error.code())
            attempt += 1
            await asyncio.sleep(0.1)

    def check_unbroken(self, first_seq: int = 1) -> None:
        """The events form one unbroken run, no duplicate, from ``first_seq``."""
        seqs = [event.seq for event in self.events]
        assert seqs == list(range(first_seq, first_seq + len(seqs))), seqs

    def check_matches(self, applied: Sequence[tables_pb2.TableEvent]) -> None:
        """After its first snapshot, the watch saw exactly the events ``applied`` appended
        there, each once, in order."""
        start = self.snapshots[0].table.seq
        self.check_unbroken(first_seq=start + 1)
        assert self.events == [event for event in applied if event.seq > start]


@contextlib.asynccontextmanager
async def resuming(table_id: str, channels: list[grpc.aio.Channel]) -> AsyncIterator[ResumingWatch]:
    """Watch a table, reconnecting as needed, while the block runs."""
    watch = ResumingWatch(table_id, channels)
    task = asyncio.ensure_future(watch.run())
    try:
        yield watch
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
