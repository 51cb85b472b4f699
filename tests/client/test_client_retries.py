"""A command whose reply is lost is tried again with the same request id, and the move it
carries is played once."""

from __future__ import annotations

import time
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


async def test_a_move_cut_off_by_a_stopping_server_is_retried_and_played_once(
    relay: Relay, clients: Clients
) -> None:
    clients.target = f"127.0.0.1:{relay.port}"
    game = await seat_game(clients)
    relay.lose_replies(PLAY, 2, code=grpc.StatusCode.CANCELLED)

    (played,) = await game.alice.play(game.table_id, "11-15")

    tries = [tables_pb2.PlayRequest.FromString(raw) for raw in relay.requests[PLAY]]
    assert len(tries) == 3 and len({attempt.SerializeToString() for attempt in tries}) == 1
    assert isinstance(played, MovePlayed) and played.seq == game.table.seq + 1
    table = await game.bob.get_table(game.table_id)
    assert table.game.moves == ("11-15",)


DEADLINE_SECONDS = 5.0
GIVING_UP_SLACK_SECONDS = 30.0


async def test_a_command_that_never_gets_a_reply_is_tried_until_its_deadline(
    relay: Relay, clients: Clients
) -> None:
    clients.target = f"127.0.0.1:{relay.port}"
    game = await seat_game(clients)
    assert game.alice.identity is not None
    alice = await clients.open(token=game.alice.identity.token, timeout=DEADLINE_SECONDS)
    relay.lose_replies(PLAY, 10_000)

    started = time.monotonic()
    with pytest.raises(UnavailableError) as failed:
        await alice.play(game.table_id, "11-15", expected_seq=game.table.seq)
    took = time.monotonic() - started

    # The last try's own failure, or, when the deadline came while it was on its way (a busy
    # machine's tries are slow), the deadline's.
    assert failed.value.code in {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
    # Tried again and again with jittered, growing waits (0.1 s doubling: half a dozen tries
    # in 5 s as a rule), until the deadline came near; then it gave up. The bounds leave a busy
    # machine room: its tries are slower, so fewer, and its giving up later.
    assert DEADLINE_SECONDS / 2 < took <= DEADLINE_SECONDS + GIVING_UP_SLACK_SECONDS
    tries = [tables_pb2.PlayRequest.FromString(raw) for raw in relay.requests[PLAY]]
    assert len(tries) >= 2
    assert len({attempt.request_id for attempt in tries}) == 1
    # The first try was played; the retries only read its stored result.
    table = await game.bob.get_table(game.table_id)
    assert table.game.moves == ("11-15",)
