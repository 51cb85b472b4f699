"""The bot's game against the computer with the raw generated stubs and no SDK: the calls a
mobile app makes, in the order it makes them.

    python clients/examples/raw_stubs.py --server localhost:50051

1. CreateGuest once, and keep the token (an app keeps it in the keychain or keystore).
2. CreateTable against the computer, with a fresh request_id.
3. WatchTable from seq 0: a snapshot, then every event.  Remember the last seq seen; when the
   stream breaks, open it again with after_seq = that seq after a jittered backoff.
4. On our turn, Play one of the legal moves the server listed, with a fresh request_id and
   expected_seq = the last seq seen.  Retry UNAVAILABLE with the same request_id.
5. Failed calls carry a google.rpc.Status with an ErrorInfo whose reason says what to show.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Final

import grpc
from google.rpc import error_details_pb2, status_pb2

from goti.api.v1 import (
    game_pb2,
    players_pb2,
    players_pb2_grpc,
    tables_pb2,
    tables_pb2_grpc,
)

CALL_TIMEOUT_SECONDS: Final = 10.0
"""A deadline on every unary call, none on the watch stream (tables.proto)."""
CHANNEL_OPTIONS: Final = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]
RETRYABLE: Final = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
STATUS_DETAILS_KEY: Final = "grpc-status-details-bin"


def reason_of(error: grpc.aio.AioRpcError) -> str:
    """The ErrorInfo reason of a failed call (``ILLEGAL_MOVE``...), or its status code."""
    for key, value in error.trailing_metadata() or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info.reason
    return error.code().name


def backoff(attempt: int) -> float:
    """0.5 s doubling to 30 s, each wait drawn between half and all of it."""
    ceiling = min(30.0, 0.5 * 2**attempt)
    return random.uniform(ceiling / 2, ceiling)


class RawClient:
    """A player's calls over one channel, with the token and the last seq seen."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.players = players_pb2_grpc.PlayersServiceStub(channel)
        self.tables = tables_pb2_grpc.TablesServiceStub(channel)
        self.metadata: tuple[tuple[str, str], ...] = ()
        self.last_seq = 0

    async def sign_up(self) -> players_pb2.Player:
        guest = await self.players.CreateGuest(
            players_pb2.CreateGuestRequest(), timeout=CALL_TIMEOUT_SECONDS
        )
        self.metadata = (("authorization", f"Bearer {guest.player_token}"),)
        return guest.player

    async def create_table(self) -> tables_pb2.CreateTableResponse:
        return await self.tables.CreateTable(
            tables_pb2.CreateTableRequest(
                request_id=uuid.uuid4().hex,
                opponent=tables_pb2.OPPONENT_COMPUTER_EASY,
                starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
                visibility=tables_pb2.VISIBILITY_PRIVATE,
            ),
            metadata=self.metadata,
            timeout=CALL_TIMEOUT_SECONDS,
        )

    async def play(self, table_id: str, move: game_pb2.Move) -> None:
        request = tables_pb2.PlayRequest(
            table_id=table_id,
            request_id=uuid.uuid4().hex,
            expected_seq=self.last_seq,
            path=game_pb2.MovePath(squares=move.path),
        )
        for attempt in range(4):
            try:
                await self.tables.Play(
                    request, metadata=self.metadata, timeout=CALL_TIMEOUT_SECONDS
                )
                return
            except grpc.aio.AioRpcError as error:
                # STALE_SEQ: an event is on its way; the watch brings it, then we try again.
                if error.code() not in RETRYABLE or attempt == 3:
                    print(f"move {move.notation} refused: {reason_of(error)}")
                    return
            await asyncio.sleep(backoff(attempt))

    async def watch(self, table_id: str) -> AsyncGenerator[tables_pb2.WatchTableResponse, None]:
        """The table's snapshot and events, each once, across broken streams."""
        attempt = 0
        while True:
            stream = self.tables.WatchTable(
                tables_pb2.WatchTableRequest(table_id=table_id, after_seq=self.last_seq),
                metadata=self.metadata,
            )
            try:
                async for message in stream:
                    kind = message.WhichOneof("message")
                    if kind == "snapshot":
                        self.last_seq = message.snapshot.table.seq
                    elif kind == "event":
                        if message.event.seq <= self.last_seq:
                            continue
                        self.last_seq = message.event.seq
                    else:
                        continue
                    attempt = 0
                    yield message
            except grpc.aio.AioRpcError as error:
                if error.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                    raise
            await asyncio.sleep(backoff(attempt))
            attempt += 1


def color_of(role: tables_pb2.Role.ValueType) -> game_pb2.Color.ValueType:
    return game_pb2.COLOR_BLACK if role == tables_pb2.ROLE_BLACK else game_pb2.COLOR_WHITE


async def follow(
    client: RawClient,
    table_id: str,
    color: game_pb2.Color.ValueType,
    messages: AsyncIterator[tables_pb2.WatchTableResponse],
) -> None:
    """Print the game as it goes and move on our turns, until it is over."""
    async for message in messages:
        turn = None
        if message.HasField("snapshot"):
            if message.snapshot.table.game.HasField("turn"):
                turn = message.snapshot.table.game.turn
        elif message.event.HasField("move_played"):
            played = message.event.move_played
            ply = played.record.ply
            print(
                f"{ply // 2 + 1:>3}{'.' if ply % 2 == 0 else '...'} {played.record.move.notation}"
            )
            if played.HasField("next"):
                turn = played.next
        elif message.event.HasField("game_over"):
            print(f"result {message.event.game_over.result}")
            return
        if turn is not None and turn.side == color and turn.legal_moves:
            # Captures are compulsory: when one is due the server lists only captures.
            best = max(turn.legal_moves, key=lambda move: len(move.captured))
            await client.play(table_id, best)


async def play(server: str) -> str:
    async with grpc.aio.insecure_channel(server, options=CHANNEL_OPTIONS) as channel:
        client = RawClient(channel)
        player = await client.sign_up()
        created = await client.create_table()
        table_id = created.table.table_id
        print(f"{player.display_name} at table {created.table.code}")
        async with contextlib.aclosing(client.watch(table_id)) as messages:
            await follow(client, table_id, color_of(created.your_role), messages)
        record = await client.tables.GetRecord(
            tables_pb2.GetRecordRequest(table_id=table_id),
            metadata=client.metadata,
            timeout=CALL_TIMEOUT_SECONDS,
        )
        return record.pdn


def main() -> None:
    parser = argparse.ArgumentParser(description="Play the computer with the raw stubs.")
    parser.add_argument("--server", default="localhost:50051", help="host:port of Goti")
    print(asyncio.run(play(parser.parse_args().server)))


if __name__ == "__main__":
    main()
