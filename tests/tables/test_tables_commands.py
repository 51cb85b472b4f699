"""Commands refused with their reasons (and nothing changed), retries applied once, races
won once, and malformed requests answered precisely."""

from __future__ import annotations

import asyncio

import grpc
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, players_pb2, players_pb2_grpc, tables_pb2, tables_pb2_grpc

from .table_calls import (
    CALL_TIMEOUT,
    Guest,
    first_legal,
    new_guest,
    new_request_id,
    redis_contents,
    refusal,
)


async def _game(channel: grpc.aio.Channel) -> tuple[Guest, Guest, tables_pb2.Table]:
    """Ann (Black, to move) and Bob (White) at a table that has just started."""
    ann = await new_guest(channel, "Ann")
    bob = await new_guest(channel, "Bob")
    created = await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)
    joined = await bob.join(created.table.code)
    return ann, bob, joined.table


async def test_calls_without_a_good_token_are_refused(
    channel: grpc.aio.Channel, redis: Redis
) -> None:
    ann, _, table = await _game(channel)
    before = await redis_contents(redis)
    move = first_legal(table.game.turn)
    tables = tables_pb2_grpc.TablesServiceStub(channel)
    request = tables_pb2.PlayRequest(
        table_id=table.table_id, request_id=new_request_id(), expected_seq=table.seq
    )
    request.path.squares.extend(move)
    cases = [
        ((), "TOKEN_REQUIRED"),
        ((("authorization", "Basic abc"),), "TOKEN_REQUIRED"),
        ((("authorization", "Bearer "),), "TOKEN_REQUIRED"),
        ((("authorization", "Bearer nobody.secret"),), "INVALID_TOKEN"),
        ((("authorization", f"Bearer {ann.player_id}.wrong-secret"),), "INVALID_TOKEN"),
        ((("authorization", "Bearer " + "x" * 500),), "INVALID_TOKEN"),
    ]
    for metadata, reason in cases:
        status = await refusal(tables.Play(request, metadata=metadata, timeout=CALL_TIMEOUT))
        assert (status.code, status.reason) == (grpc.StatusCode.UNAUTHENTICATED, reason)
        assert ann.token not in status.message
    players = players_pb2_grpc.PlayersServiceStub(channel)
    status = await refusal(players.GetMe(players_pb2.GetMeRequest(), timeout=CALL_TIMEOUT))
    assert status.reason == "TOKEN_REQUIRED"
    assert await redis_contents(redis) == before


async def test_spectators_and_the_wrong_seat_cannot_act(
    channel: grpc.aio.Channel, redis: Redis
) -> None:
    ann, bob, table = await _game(channel)
    carl = await new_guest(channel, "Carl")
    move = first_legal(table.game.turn)
    before = await redis_contents(redis)
    status = await refusal(carl.play(table.table_id, move, table.seq))
    assert (status.code, status.reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_A_PLAYER")
    status = await refusal(carl.resign(table.table_id, table.seq))
    assert status.reason == "NOT_A_PLAYER"
    # Bob holds White: he may not move Black's piece, nor move out of turn.
    status = await refusal(bob.play(table.table_id, move, table.seq, side=game_pb2.COLOR_BLACK))
    assert (status.code, status.reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
    status = await refusal(bob.play(table.table_id, move, table.seq))
    assert (status.code, status.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    status = await refusal(ann.play(table.table_id, "9-10", table.seq))
    assert status.code == grpc.StatusCode.INVALID_ARGUMENT
    assert status.reason in {"ILLEGAL_MOVE", "INVALID_MOVE"}
    status = await refusal(ann.play(table.table_id, [9, 18], table.seq))
    assert status.reason == "ILLEGAL_MOVE" and "legalMoves" in status.metadata
    status = await refusal(ann.play(table.table_id, "11-15", table.seq + 5))
    assert (status.code, status.reason) == (grpc.StatusCode.ABORTED, "STALE_SEQ")
    assert status.metadata["currentSeq"] == str(table.seq)
    status = await refusal(ann.take_back(table.table_id, table.seq))
    assert status.reason == "TAKE_BACK_NOT_ALLOWED"
    status = await refusal(ann.rematch(table.table_id, table.seq))
    assert status.reason == "GAME_IN_PROGRESS"
    assert await redis_contents(redis) == before


async def test_a_waiting_table_takes_no_moves_and_a_full_one_no_third_player(
    channel: grpc.aio.Channel,
) -> None:
    ann = await new_guest(channel, "Ann")
    created = await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)
    table = created.table
    status = await refusal(ann.play(table.table_id, first_legal(table.game.turn), 0))
    assert (status.code, status.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "WAITING_FOR_OPPONENT",
    )
    bob = await new_guest(channel, "Bob")
    await bob.join(table.code)
    carl = await new_guest(channel, "Carl")
    status = await refusal(carl.join(table.code))
    assert (status.code, status.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FULL")
    status = await refusal(carl.join("ZZZZZZ"))
    assert (status.code, status.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    assert status.metadata["field"] == "code"


async def test_a_retried_request_is_applied_once(channel: grpc.aio.Channel, redis: Redis) -> None:
    ann, bob, table = await _game(channel)
    move = first_legal(table.game.turn)
    request_id = new_request_id()
    first = await ann.play(table.table_id, move, table.seq, request_id=request_id)
    again = await ann.play(table.table_id, move, table.seq, request_id=request_id)
    assert again.events == first.events
    assert (await ann.get(table.table_id)).table.seq == table.seq + 1
    # Bob may use the same request id: ids are the player's own.
    reply = first_legal(first.events[0].move_played.next)
    answered = await bob.play(table.table_id, reply, first.events[0].seq, request_id=request_id)
    seq = answered.events[-1].seq
    # A late retry still gets the first result, and changes nothing.
    before = await redis_contents(redis)
    late = await ann.play(table.table_id, move, table.seq, request_id=request_id)
    assert late.events == first.events
    # The same request id for another command is an app bug, and said so.
    status = await refusal(
        ann.tables.Resign(
            tables_pb2.ResignRequest(
                table_id=table.table_id, request_id=request_id, expected_seq=seq
            ),
            metadata=ann.metadata,
            timeout=CALL_TIMEOUT,
        )
    )
    assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    assert status.metadata["field"] == "request_id"
    assert await redis_contents(redis) == before


async def test_a_retried_creation_returns_the_same_table(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    request_id = new_request_id()
    first = await ann.create(request_id=request_id, opponent=tables_pb2.OPPONENT_PASS_AND_PLAY)
    again = await ann.create(request_id=request_id, opponent=tables_pb2.OPPONENT_PASS_AND_PLAY)
    assert again.table.table_id == first.table.table_id
    status = await refusal(ann.create(request_id=request_id, variant=game_pb2.VARIANT_RUSSIAN))
    assert status.reason == "REQUEST_ID_REUSED"


async def test_two_clients_racing_the_same_move_land_it_once(channel: grpc.aio.Channel) -> None:
    ann, _, table = await _game(channel)
    legal = [list(move.path) for move in table.game.turn.legal_moves]
    results = await asyncio.gather(
        *(ann.play(table.table_id, legal[index % len(legal)], table.seq) for index in range(12)),
        return_exceptions=True,
    )
    landed = [result for result in results if isinstance(result, tables_pb2.PlayResponse)]
    refused = [result for result in results if isinstance(result, grpc.aio.AioRpcError)]
    assert len(landed) == 1 and len(refused) == 11
    assert {error.code() for error in refused} == {grpc.StatusCode.ABORTED}
    after = await ann.get(table.table_id)
    assert after.table.seq == table.seq + 1
    assert len(after.table.game.moves) == 1
