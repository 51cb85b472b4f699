"""Tables found by what their players were shown: the code as typed, or the whole join link.
A spectator who has only that watches the table and sees the next move live; a player
joins with the link itself; lookups are rate-limited and bad ones named precisely."""

from __future__ import annotations

import dataclasses

import grpc
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, tables_pb2, tables_pb2_grpc
from goti.tables.options import TablesOptions

from .conftest import StartReplica
from .table_calls import (
    CALL_TIMEOUT,
    eventually,
    first_legal,
    new_guest,
    refusal,
    watching,
)


async def test_a_spectator_with_only_the_join_link_watches_the_next_move(
    channel: grpc.aio.Channel,
) -> None:
    ann = await new_guest(channel, "Ann")
    bob = await new_guest(channel, "Bob")
    carol = await new_guest(channel, "Carol")
    created = (await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)).table
    # Bob joins with the link itself, as pasted.
    joined = await bob.join(f"  {created.join_url}/  ")
    assert joined.your_role == tables_pb2.ROLE_WHITE
    # Carol finds the table from its link, then from its code as typed, with no token too.
    for text in (created.join_url, f"{created.code[:3].lower()}-{created.code[3:]}"):
        found = await carol.tables.GetTable(
            tables_pb2.GetTableRequest(code=text), metadata=carol.metadata, timeout=CALL_TIMEOUT
        )
        assert found.table.table_id == created.table_id
        assert found.your_role == tables_pb2.ROLE_SPECTATOR
    anonymous = await tables_pb2_grpc.TablesServiceStub(channel).GetTable(
        tables_pb2.GetTableRequest(code=created.code), timeout=CALL_TIMEOUT
    )
    assert anonymous.table.table_id == created.table_id
    # Watching the id the lookup gave: the snapshot, then Ann's move as she plays it.
    async with watching(channel, anonymous.table.table_id) as watch:
        await eventually(lambda: bool(watch.messages))
        assert watch.messages[0].snapshot.table.seq == joined.table.seq
        played = await ann.play(created.table_id, first_legal(joined.table.game.turn), 1)
        await watch.until_seq(played.events[-1].seq)
    assert watch.events == list(played.events)
    assert watch.events[0].move_played.next.side == game_pb2.COLOR_WHITE


async def test_bad_lookups_name_their_field_and_change_nothing(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    table = (await ann.create()).table
    cases = [
        (tables_pb2.GetTableRequest(), "INVALID_REQUEST", "table_id"),
        (
            tables_pb2.GetTableRequest(table_id=table.table_id, code=table.code),
            "INVALID_REQUEST",
            "code",
        ),
        (tables_pb2.GetTableRequest(code="https://example.org/join/"), "INVALID_REQUEST", "code"),
        (tables_pb2.GetTableRequest(code="K7QX2"), "INVALID_REQUEST", "code"),
        (tables_pb2.GetTableRequest(code="x" * 3000), "INVALID_REQUEST", "code"),
    ]
    for request, reason, field in cases:
        status = await refusal(
            ann.tables.GetTable(request, metadata=ann.metadata, timeout=CALL_TIMEOUT)
        )
        assert (status.code, status.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
        assert status.metadata["field"] == field
    unknown = "ABCDEF" if table.code != "ABCDEF" else "ABCDEG"
    status = await refusal(
        ann.tables.GetTable(
            tables_pb2.GetTableRequest(code=unknown), metadata=ann.metadata, timeout=CALL_TIMEOUT
        )
    )
    assert (status.code, status.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    assert status.metadata["field"] == "code"
    assert (await ann.get(table.table_id)).table.seq == 0


async def test_lookups_by_code_are_rate_limited_per_player_and_per_address(
    start_replica: StartReplica, options: TablesOptions, redis: Redis
) -> None:
    replica = await start_replica(options=dataclasses.replace(options, joins_per_minute=2))
    ann = await new_guest(replica.channel, "Ann")
    bob = await new_guest(replica.channel, "Bob")
    code = (await ann.create()).table.code
    stub = tables_pb2_grpc.TablesServiceStub(replica.channel)
    for caller in (ann.metadata, bob.metadata, ()):
        for _ in range(2):
            request = tables_pb2.GetTableRequest(code=code)
            await stub.GetTable(request, metadata=caller, timeout=CALL_TIMEOUT)
        status = await refusal(
            stub.GetTable(
                tables_pb2.GetTableRequest(code=code), metadata=caller, timeout=CALL_TIMEOUT
            )
        )
        assert (status.code, status.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
        assert int(status.metadata["retryAfterMs"]) > 0
    # By id, reading a table is never limited.
    table_id = (await bob.join(code)).table.table_id
    for _ in range(5):
        await stub.GetTable(tables_pb2.GetTableRequest(table_id=table_id), timeout=CALL_TIMEOUT)
