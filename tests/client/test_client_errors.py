"""Refused calls come back as typed errors carrying Goti's reason and metadata, and change
nothing."""

from __future__ import annotations

import grpc
import pytest

import goti_client
from goti.rules import Color
from goti_client import (
    ActionRefusedError,
    AuthenticationError,
    IllegalMoveError,
    NotYourTurnError,
    PermissionDeniedError,
    Reason,
    StaleSeqError,
    TableNotFoundError,
)

from .conftest import Clients, SeatedGame


async def assert_unchanged(game: SeatedGame) -> None:
    table = await game.alice.get_table(game.table_id)
    assert table.seq == game.table.seq and table.game.moves == ()


async def test_an_illegal_move_says_which_moves_are_legal(game: SeatedGame) -> None:
    with pytest.raises(IllegalMoveError) as refused:
        await game.alice.play(game.table_id, "1-5")

    error = refused.value
    assert error.reason is Reason.ILLEGAL_MOVE and error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(error.legal_moves) == {"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}
    assert "1-5" in str(error)
    await assert_unchanged(game)


async def test_text_that_is_no_move_is_an_invalid_move(game: SeatedGame) -> None:
    with pytest.raises(IllegalMoveError) as refused:
        await game.alice.play(game.table_id, "eleven to fifteen")

    assert refused.value.reason is Reason.INVALID_MOVE
    await assert_unchanged(game)


async def test_a_stale_seq_is_refused_with_the_current_one(game: SeatedGame) -> None:
    with pytest.raises(StaleSeqError) as refused:
        await game.alice.play(game.table_id, "11-15", expected_seq=0)

    assert refused.value.reason is Reason.STALE_SEQ
    assert refused.value.code is grpc.StatusCode.ABORTED
    assert refused.value.current_seq == game.table.seq
    await assert_unchanged(game)


async def test_moving_out_of_turn_is_not_your_turn(game: SeatedGame) -> None:
    with pytest.raises(NotYourTurnError) as refused:
        await game.bob.play(game.table_id, "22-18")

    assert refused.value.reason is Reason.NOT_YOUR_TURN
    assert isinstance(refused.value, ActionRefusedError)
    await assert_unchanged(game)


async def test_moving_for_the_other_seat_is_not_your_seat(game: SeatedGame) -> None:
    with pytest.raises(PermissionDeniedError) as refused:
        await game.bob.play(game.table_id, "11-15", side=Color.BLACK)

    assert refused.value.reason is Reason.NOT_YOUR_SEAT
    assert refused.value.code is grpc.StatusCode.PERMISSION_DENIED
    await assert_unchanged(game)


async def test_a_player_without_a_seat_may_watch_but_not_move(
    game: SeatedGame, clients: Clients
) -> None:
    stranger = await clients.open()

    assert (await stranger.get_table(game.table_id)).role is goti_client.Role.SPECTATOR
    with pytest.raises(PermissionDeniedError) as refused:
        await stranger.play(game.table_id, "11-15")

    assert refused.value.reason is Reason.NOT_A_PLAYER
    await assert_unchanged(game)


async def test_a_draw_offer_before_both_sides_moved_is_refused(game: SeatedGame) -> None:
    with pytest.raises(ActionRefusedError) as refused:
        await game.alice.offer_draw(game.table_id)

    assert refused.value.reason is Reason.DRAW_OFFER_BEFORE_BOTH_MOVED
    await assert_unchanged(game)


async def test_an_unknown_table_is_not_found(game: SeatedGame) -> None:
    with pytest.raises(TableNotFoundError) as refused:
        await game.alice.get_table("no-such-table")
    assert refused.value.reason is Reason.TABLE_NOT_FOUND

    with pytest.raises(TableNotFoundError):
        await game.alice.join_table("ZZZZZZ")


async def test_commands_need_a_token(game: SeatedGame, clients: Clients) -> None:
    spectator = await clients.open(guest=False)
    assert spectator.identity is None

    with pytest.raises(AuthenticationError) as refused:
        await spectator.play(game.table_id, "11-15")

    assert refused.value.reason is Reason.TOKEN_REQUIRED
    await assert_unchanged(game)


async def test_a_token_the_server_does_not_know_is_refused_at_connect(clients: Clients) -> None:
    with pytest.raises(AuthenticationError) as refused:
        await clients.open(token="not-a-real-token")

    assert refused.value.reason is Reason.INVALID_TOKEN
    assert refused.value.code is grpc.StatusCode.UNAUTHENTICATED


async def test_watching_an_unknown_table_raises_at_once(clients: Clients) -> None:
    spectator = await clients.open(guest=False)

    with pytest.raises(TableNotFoundError):
        async for _ in spectator.watch("no-such-table"):
            pass
