"""Whole games through the public API: two people online, pass-and-play, and what every
watcher sees of them."""

from __future__ import annotations

import grpc
from redis.asyncio import Redis

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables.keys import KeySpace
from goti.tables.options import TablesOptions

from .table_calls import Guest, eventually, first_legal, kinds, new_guest, watching


async def play_out(
    table: tables_pb2.Table, seats: dict[int, Guest], *, max_plies: int = 400
) -> list[tables_pb2.TableEvent]:
    """Play the first legal move for whoever is to move until the game ends; the events."""
    appended: list[tables_pb2.TableEvent] = []
    seq = table.seq
    turn = table.game.turn
    for _ in range(max_plies):
        player = seats[turn.side]
        response = await player.play(table.table_id, first_legal(turn), seq)
        appended.extend(response.events)
        seq = response.events[-1].seq
        last = response.events[-1]
        if last.HasField("game_over"):
            return appended
        turn = response.events[0].move_played.next
    raise AssertionError("the game did not end")


async def test_two_people_play_a_whole_game_online(
    channel: grpc.aio.Channel, redis: Redis, options: TablesOptions, keyspace: KeySpace
) -> None:
    ann = await new_guest(channel, "Ann")
    bob = await new_guest(channel, "Bob")
    created = await ann.create(
        starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1, turn_timer_seconds=0
    )
    table = created.table
    assert created.your_role == tables_pb2.ROLE_BLACK  # English: Black moves first
    assert table.status == tables_pb2.TABLE_STATUS_WAITING
    assert table.seq == 0 and len(table.code) == 6
    assert table.join_url.endswith(table.code)
    spectator_view = await bob.get(table.table_id)
    assert spectator_view.your_role == tables_pb2.ROLE_SPECTATOR

    async with watching(channel, table.table_id) as watch:
        await eventually(lambda: bool(watch.messages))  # the snapshot, before anything happens
        typed = f" {table.code[:3].lower()}-{table.code[3:]} "
        joined = await bob.join(typed)
        assert joined.your_role == tables_pb2.ROLE_WHITE
        assert joined.table.status == tables_pb2.TABLE_STATUS_PLAYING
        assert joined.table.seq == 1
        assert joined.table.white.player.display_name == "Bob"
        assert (await bob.join(table.code)).your_role == tables_pb2.ROLE_WHITE  # again: same seat
        appended = await play_out(
            joined.table, {game_pb2.COLOR_BLACK: ann, game_pb2.COLOR_WHITE: bob}
        )
        last_seq = appended[-1].seq
        await watch.until_seq(last_seq)

    assert watch.messages[0].HasField("snapshot")
    seen = watch.events
    assert [event.seq for event in seen] == list(range(1, last_seq + 1))
    assert kinds(seen[:1]) == ["player_joined"]
    assert seen[1:] == appended
    assert kinds(appended)[-1] == "game_over"
    assert all(kind == "move_played" for kind in kinds(appended)[:-1])
    for event in appended[:-2]:
        assert event.move_played.next.legal_moves, "every move tells the next side its moves"
        assert event.move_played.board.fen

    # Finished, the table stays readable for a while, then Redis lets it go.
    kept = keyspace.table(table.table_id)
    for key in (kept.state, kept.log):
        assert 0 < await redis.ttl(key) <= options.finished_table_seconds
    finished = await ann.get(table.table_id)
    assert finished.table.status == tables_pb2.TABLE_STATUS_FINISHED
    assert finished.table.seq == last_seq
    assert finished.table.game.HasField("outcome")
    record = await ann.tables.GetRecord(tables_pb2.GetRecordRequest(table_id=table.table_id))
    assert '[White "Bob"]' in record.pdn and '[Black "Ann"]' in record.pdn
    assert appended[-1].game_over.result in record.pdn
    assert list(record.game.moves) == [
        event.move_played.record.move.notation for event in appended[:-1]
    ]


async def test_pass_and_play_one_player_moves_both_sides(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    created = await ann.create(
        variant=game_pb2.VARIANT_RUSSIAN, opponent=tables_pb2.OPPONENT_PASS_AND_PLAY
    )
    table = created.table
    assert created.your_role == tables_pb2.ROLE_BOTH
    assert table.status == tables_pb2.TABLE_STATUS_PLAYING
    assert table.game.turn.side == game_pb2.COLOR_WHITE  # Russian: White moves first
    appended = await play_out(table, {game_pb2.COLOR_WHITE: ann, game_pb2.COLOR_BLACK: ann})
    assert kinds(appended)[-1] == "game_over"
    assert [event.seq for event in appended] == list(range(1, len(appended) + 1))
