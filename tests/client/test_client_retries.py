"""A command whose reply is lost is tried again with the same request id, and the move it
carries is played once."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio

from goti.api.v1 import tables_pb2
from goti_client import MovePlayed, UnavailableError

from .conftest import Clients, seat_game
from .relay import Relay

PLAY = "/goti.api.v1.TablesService/Play"


@pytest_asyncio.fixture
async def relay(target: str) -> AsyncIterator[Relay]:
    async with grpc.aio.insecure_channel(target) as upstream:
        relay = Relay(upstream)
        await relay.start()
        try:
            yield relay
        finally:
            await relay.stop()


async def test_a_move_whose_reply_is_lost_is_retried_and_played_once(
    relay: Relay, clients: Clients
) -> None:
    clients.target = f"127.0.0.1:{relay.port}"
    game = await seat_game(clients)
    relay.lose_replies(PLAY, 1)

    events = await game.alice.play(game.table_id, "11-15")

    tries = [tables_pb2.PlayRequest.FromString(raw) for raw in relay.requests[PLAY]]
    assert len(tries) == 2
    assert tries[0] == tries[1]  # same request id, same expected seq, same move
    assert tries[0].request_id and tries[0].expected_seq == game.table.seq
    (played,) = events
    assert isinstance(played, MovePlayed) and played.notation == "11-15"
    assert played.seq == game.table.seq + 1
    table = await game.bob.get_table(game.table_id)
    assert table.seq == played.seq and table.game.moves == ("11-15",)


async def test_a_command_that_never_gets_a_reply_gives_up_after_its_retries(
    relay: Relay, clients: Clients
) -> None:
    clients.target = f"127.0.0.1:{relay.port}"
    game = await seat_game(clients)
    relay.lose_replies(PLAY, 10)

    with pytest.raises(UnavailableError) as failed:
        await game.alice.play(game.table_id, "11-15")

    assert failed.value.code is grpc.StatusCode.UNAVAILABLE
    tries = [tables_pb2.PlayRequest.FromString(raw) for raw in relay.requests[PLAY]]
    assert len(tries) == 4  # the first try and three retries
    assert len({attempt.request_id for attempt in tries}) == 1
    # The first try was played; the retries only read its stored result.
    table = await game.bob.get_table(game.table_id)
    assert table.game.moves == ("11-15",)
