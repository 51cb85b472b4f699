"""Tables against the computer: its replies through the AI service and the referee, take
backs, draw offers, rematches and the player's streaks.  They need the AI service."""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from functools import partial

import grpc
import pytest

from goti import serving
from goti.ai import Level, choose_move
from goti.ai.search import Searcher
from goti.api import convert
from goti.api.v1 import ai_pb2, ai_pb2_grpc, game_pb2, tables_pb2
from goti.rules.game import Game
from goti.settings import Settings
from goti.tables.options import TablesOptions

from .table_calls import (
    Guest,
    eventually,
    first_legal,
    kinds,
    new_guest,
    new_request_id,
    watching,
)

LEVELS = {
    tables_pb2.OPPONENT_COMPUTER_EASY: ai_pb2.LEVEL_EASY,
    tables_pb2.OPPONENT_COMPUTER_NORMAL: ai_pb2.LEVEL_NORMAL,
    tables_pb2.OPPONENT_COMPUTER_HARD: ai_pb2.LEVEL_HARD,
}


async def _computer_opened(
    channel: grpc.aio.Channel, guest: Guest, table_id: str, human: int
) -> None:
    """Wait for the computer's first move at a table where it starts, and check it."""
    async with watching(channel, table_id) as watch:
        await watch.until_seq(1, timeout=60)
    # The move may have come before the watch began: then only the snapshot shows it.
    if watch.events:
        assert watch.events[0].move_played.source == tables_pb2.MOVE_SOURCE_COMPUTER
    table = (await guest.get(table_id)).table
    assert table.seq == 1 and len(table.game.moves) == 1
    assert table.game.turn.side == human


async def _computer_replies(
    channel: grpc.aio.Channel, table_id: str, after_seq: int
) -> list[tables_pb2.TableEvent]:
    """The events up to and including the computer's next move (or the end of the game)."""
    async with watching(channel, table_id, after_seq=after_seq) as watch:
        await eventually(
            lambda: any(
                event.HasField("game_over")
                or (
                    event.HasField("move_played")
                    and event.move_played.source == tables_pb2.MOVE_SOURCE_COMPUTER
                )
                for event in watch.events
            ),
            timeout=60,
        )
    return watch.events


@pytest.mark.parametrize("opponent", sorted(LEVELS))
async def test_a_whole_game_against_each_level(
    channel: grpc.aio.Channel, opponent: tables_pb2.Opponent.ValueType
) -> None:
    ann = await new_guest(channel, "Ann")
    created = await ann.create(
        opponent=opponent, starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1
    )
    table = created.table
    assert created.your_role == tables_pb2.ROLE_BLACK
    assert table.white.computer and table.white.computer_level == LEVELS[opponent]
    assert table.status == tables_pb2.TABLE_STATUS_PLAYING
    seq, turn = 0, table.game.turn
    history: list[tables_pb2.TableEvent] = []
    for _ in range(100):
        played = await ann.play(table.table_id, first_legal(turn), seq)
        history += played.events
        seq = played.events[-1].seq
        if played.events[-1].HasField("game_over"):
            break
        replies = await _computer_replies(channel, table.table_id, seq)
        history += replies
        seq = replies[-1].seq
        if replies[-1].HasField("game_over"):
            break
        reply = replies[-1].move_played
        assert reply.record.side == game_pb2.COLOR_WHITE
        turn = reply.next
    if not history[-1].HasField("game_over"):
        # A long, quiet game: the player gives up rather than play it to the move limit.
        history += (await ann.resign(table.table_id, seq)).events
    assert history[-1].HasField("game_over")
    assert [event.seq for event in history] == list(range(1, len(history) + 1))
    me = await ann.me()
    human_won = history[-1].game_over.outcome.winner == game_pb2.COLOR_BLACK
    assert me.streaks.win_streak == (1 if human_won else 0)
    assert me.streaks.best_streak == me.streaks.win_streak


async def test_the_computer_moves_first_when_it_starts(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    created = await ann.create(
        opponent=tables_pb2.OPPONENT_COMPUTER_EASY,
        starting_player=tables_pb2.STARTING_PLAYER_PLAYER_2,
    )
    assert created.your_role == tables_pb2.ROLE_WHITE
    await _computer_opened(channel, ann, created.table.table_id, game_pb2.COLOR_WHITE)


@pytest.mark.parametrize("variant", [game_pb2.VARIANT_ENGLISH, game_pb2.VARIANT_RUSSIAN])
async def test_master_answers_on_the_watch_and_the_player_moves_on(
    channel: grpc.aio.Channel, variant: game_pb2.Variant.ValueType
) -> None:
    ann = await new_guest(channel, "Ann")
    created = await ann.create(
        variant=variant,
        opponent=tables_pb2.OPPONENT_COMPUTER_MASTER,
        starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
    )
    table = created.table
    computer = table.black if created.your_role == tables_pb2.ROLE_WHITE else table.white
    assert computer.computer and computer.computer_level == ai_pb2.LEVEL_MASTER
    assert computer.player.display_name == "Computer (Master)"
    async with watching(channel, table.table_id) as watch:
        played = await ann.play(table.table_id, first_legal(table.game.turn), 0)
        seq = played.events[-1].seq
        await watch.until_seq(seq + 1, timeout=60)
    answer = next(event for event in watch.events if event.seq == seq + 1).move_played
    assert answer.source == tables_pb2.MOVE_SOURCE_COMPUTER
    assert answer.record.side == computer.color
    assert answer.next.side != answer.record.side and answer.next.legal_moves
    again = await ann.play(table.table_id, first_legal(answer.next), seq + 1)
    assert kinds(again.events)[0] == "move_played"
    assert again.events[0].seq == seq + 2
    assert len((await ann.get(table.table_id)).table.game.moves) == 3


async def test_taking_back_a_move_and_the_computers_reply(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    table = (
        await ann.create(
            opponent=tables_pb2.OPPONENT_COMPUTER_NORMAL,
            starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
        )
    ).table
    played = await ann.play(table.table_id, first_legal(table.game.turn), 0)
    replies = await _computer_replies(channel, table.table_id, played.events[-1].seq)
    seq = replies[-1].seq
    taken = await ann.take_back(table.table_id, seq)
    assert kinds(taken.events) == ["moves_taken_back"]
    back = taken.events[0].moves_taken_back
    assert back.by == game_pb2.COLOR_BLACK
    assert list(back.moves) == [
        replies[-1].move_played.record.move.notation,
        played.events[0].move_played.record.move.notation,
    ]
    assert list(back.game.moves) == [] and back.game.turn.side == game_pb2.COLOR_BLACK
    assert back.game.turn.legal_moves
    now = await ann.get(table.table_id)
    assert now.table.seq == seq + 1 and list(now.table.game.moves) == []


async def test_the_computer_answers_a_draw_offer(channel: grpc.aio.Channel) -> None:
    ann = await new_guest(channel, "Ann")
    table = (
        await ann.create(
            opponent=tables_pb2.OPPONENT_COMPUTER_HARD,
            starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
        )
    ).table
    played = await ann.play(table.table_id, first_legal(table.game.turn), 0)
    replies = await _computer_replies(channel, table.table_id, played.events[-1].seq)
    seq, turn = replies[-1].seq, replies[-1].move_played.next
    offered = await ann.offer_draw(table.table_id, seq)
    assert kinds(offered.events) == ["draw_offered"]
    moved = await ann.play(table.table_id, first_legal(turn), offered.events[-1].seq)
    answer = await _computer_replies(channel, table.table_id, moved.events[-1].seq)
    assert kinds(answer)[0] in {"draw_declined", "draw_accepted"}
    if kinds(answer)[0] == "draw_declined":
        assert kinds(answer)[1] == "move_played"
        assert not answer[1].move_played.record.declined_draw_offer
    else:
        assert kinds(answer) == ["draw_accepted", "game_over"]


async def test_resigning_resets_the_streak_and_a_rematch_starts_at_once(
    channel: grpc.aio.Channel,
) -> None:
    ann: Guest = await new_guest(channel, "Ann")
    table = (
        await ann.create(
            opponent=tables_pb2.OPPONENT_COMPUTER_EASY,
            starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
        )
    ).table
    resigned = await ann.resign(table.table_id, 0)
    assert kinds(resigned.events) == ["resigned", "game_over"]
    me = await ann.me()
    assert (me.streaks.win_streak, me.streaks.best_streak) == (0, 0)
    rematch = await ann.rematch(table.table_id, resigned.events[-1].seq)
    assert kinds(rematch.events) == ["rematch_started"]
    assert rematch.your_role == tables_pb2.ROLE_WHITE
    assert rematch.rematch_table.black.computer
    # The computer has Black now, which moves first: its move follows by itself.
    await _computer_opened(channel, ann, rematch.rematch_table.table_id, game_pb2.COLOR_WHITE)


def _game_of(table: tables_pb2.Table) -> Game:
    """The table's game rebuilt from its move list."""
    game = Game("english")
    for text in table.game.moves:
        game.play(text)
    return game


async def _strong_move(pool: Executor, game: Game) -> str:
    """Hard's move in ``game``, thought in a search process so that the servers running in
    this process are not held up."""
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(pool, partial(choose_move, game.state(), Level.HARD))
    return result.notation


async def _streaks(guest: Guest, win_streak: int) -> tuple[int, int]:
    """The guest's streaks, once the win streak reads ``win_streak``: a game is counted just
    after its GameOver is committed."""
    latest = (await guest.me()).streaks

    async def counted() -> bool:
        nonlocal latest
        latest = (await guest.me()).streaks
        return latest.win_streak == win_streak

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not await counted() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return latest.win_streak, latest.best_streak


async def test_the_computer_resigns_a_lost_game_and_the_win_counts_once(
    channel: grpc.aio.Channel, ai_pool: Executor, options: TablesOptions
) -> None:
    """A strong player beats Easy: the computer resigns on its turn once every move loses,
    rather than play on until its last piece is taken; the watcher sees the Resigned and the
    GameOver, the win counts once, and a rematch plays on."""
    ann = await new_guest(channel, "Ann")
    table = (
        await ann.create(
            opponent=tables_pb2.OPPONENT_COMPUTER_EASY,
            starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1,
        )
    ).table
    table_id = table.table_id
    async with watching(channel, table_id, after_seq=0) as watch:
        for _ in range(150):
            game = _game_of(table)
            request_id = new_request_id()
            move = await _strong_move(ai_pool, game)
            played = await ann.play(table_id, move, table.seq, request_id=request_id)
            last_command = (move, table.seq, request_id, list(played.events))
            assert not played.events[-1].HasField("game_over"), (
                f"the game ended on Ann's move {played.events[0].move_played.record.move.notation}"
                f" after {game.moves}: the computer played on in a lost game"
            )
            await watch.until_seq(played.events[-1].seq + 1, timeout=60)
            table = (await ann.get(table_id)).table
            if table.status == tables_pb2.TABLE_STATUS_FINISHED:
                break
        await watch.until_seq(table.seq, timeout=60)
    assert table.status == tables_pb2.TABLE_STATUS_FINISHED
    events = watch.events
    assert [event.seq for event in events] == list(range(1, table.seq + 1))
    assert kinds(events[-3:]) == ["move_played", "resigned", "game_over"]
    assert events[-3].move_played.record.side == game_pb2.COLOR_BLACK
    assert events[-2].resigned.by == game_pb2.COLOR_WHITE
    outcome = events[-1].game_over.outcome
    assert outcome.winner == game_pb2.COLOR_BLACK
    assert outcome.termination == game_pb2.TERMINATION_RESIGNATION
    assert "resigned" not in kinds(events[:-2])
    assert await _streaks(ann, 1) == (1, 1)
    # Past the end: a watcher resuming from any seq gets exactly what it missed (a snapshot
    # when the log no longer reaches back), and Ann's last move, retried, its first answer.
    for after in range(table.seq + 1):
        async with watching(channel, table_id, after_seq=after) as resumed:
            await resumed.until_seq(table.seq)
        assert resumed.error is None, resumed.error
        if after == 0 or after < table.seq - options.table_log_events:
            assert resumed.messages[0].snapshot.table.game.outcome == outcome
        else:
            assert resumed.events == events[after:]
    move, expected_seq, request_id, answered = last_command
    again = await ann.play(table_id, move, expected_seq, request_id=request_id)
    assert list(again.events) == answered
    assert await _streaks(ann, 1) == (1, 1)

    rematch = await ann.rematch(table_id, table.seq)
    assert kinds(rematch.events) == ["rematch_started"]
    assert rematch.your_role == tables_pb2.ROLE_WHITE
    second = rematch.rematch_table
    assert second.black.computer
    await _computer_opened(channel, ann, second.table_id, game_pb2.COLOR_WHITE)
    opened = (await ann.get(second.table_id)).table
    played = await ann.play(second.table_id, first_legal(opened.game.turn), opened.seq)
    replies = await _computer_replies(channel, second.table_id, played.events[-1].seq)
    assert replies[-1].move_played.source == tables_pb2.MOVE_SOURCE_COMPUTER
    assert replies[-1].move_played.record.side == game_pb2.COLOR_BLACK
    assert await _streaks(ann, 1) == (1, 1)


def _losing_move(game: Game) -> str:
    """The move that a two-ply look scores worst: it gives pieces away."""
    scores = Searcher(game.position).score_all(depth=2)
    assert scores is not None
    moves = list(game.legal_moves)
    return game.notation(moves[scores.index(min(scores))])


async def test_the_turn_timer_never_resigns_for_a_person(
    channel: grpc.aio.Channel, ai_target: str, settings: Settings
) -> None:
    """A person whose game is lost and whose time runs out gets a quick move played for
    them: only the person may resign."""
    ann = await new_guest(channel, "Ann")
    lost: Game | None = None
    # On a busy machine the 3 s timer may play moves too, and even end a game before White
    # is seen lost: then a new game.
    for _ in range(3):
        table = (
            await ann.create(opponent=tables_pb2.OPPONENT_PASS_AND_PLAY, turn_timer_seconds=3)
        ).table
        table_id = table.table_id
        for _ in range(200):
            table = (await ann.get(table_id)).table
            if table.status != tables_pb2.TABLE_STATUS_PLAYING:
                break
            game = _game_of(table)
            white_to_move = table.game.turn.side == game_pb2.COLOR_WHITE
            if white_to_move and choose_move(game.state(), Level.EASY, seed=1).proven_loss:
                lost = game
                break
            if white_to_move:
                move = _losing_move(game)
            else:
                move = choose_move(game.state(), Level.QUICK).notation
            try:
                await ann.play(table_id, move, table.seq)
            except grpc.aio.AioRpcError as error:
                # The timer moved first: play on from where it left the game.
                assert error.code() is grpc.StatusCode.ABORTED
        if lost is not None:
            break
    assert lost is not None, "three games ended before White was seen lost"
    async with serving.open_channel(ai_target, settings) as ai_channel:
        quick = await ai_pb2_grpc.AiServiceStub(ai_channel).ChooseMove(
            ai_pb2.ChooseMoveRequest(
                state=convert.game_state_to_proto(lost.state()), level=ai_pb2.LEVEL_QUICK
            ),
            timeout=30,
        )
    assert quick.proven_loss  # what the timer's quick move is told, and must not act on
    async with watching(channel, table_id, after_seq=table.seq) as watch:
        await watch.until_seq(table.seq + 1, timeout=30)
    timed = watch.events[0]
    assert timed.move_played.source == tables_pb2.MOVE_SOURCE_TIMER
    assert timed.move_played.record.side == game_pb2.COLOR_WHITE
    assert "resigned" not in kinds(watch.events)
