"""Draw offers and their cooldown, resignation and rematches between two people."""

from __future__ import annotations

import grpc

from goti.api.v1 import game_pb2, tables_pb2

from .table_calls import Guest, first_legal, kinds, new_guest, refusal, watching


class Game:
    """Ann (Black, moving first) against Bob (White), keeping the seq and the turn."""

    def __init__(self, ann: Guest, bob: Guest, table: tables_pb2.Table) -> None:
        self.ann, self.bob = ann, bob
        self.table_id = table.table_id
        self.seq = table.seq
        self.turn = table.game.turn

    def player(self, side: int) -> Guest:
        return self.ann if side == game_pb2.COLOR_BLACK else self.bob

    def take(self, appended: list[tables_pb2.TableEvent]) -> list[tables_pb2.TableEvent]:
        self.seq = appended[-1].seq
        for event in appended:
            if event.HasField("move_played") and event.move_played.HasField("next"):
                self.turn = event.move_played.next
        return appended

    async def move(self) -> list[tables_pb2.TableEvent]:
        player = self.player(self.turn.side)
        response = await player.play(self.table_id, first_legal(self.turn), self.seq)
        return self.take(list(response.events))


async def _start(channel: grpc.aio.Channel) -> Game:
    ann = await new_guest(channel, "Ann")
    bob = await new_guest(channel, "Bob")
    created = await ann.create(starting_player=tables_pb2.STARTING_PLAYER_PLAYER_1)
    joined = await bob.join(created.table.code)
    return Game(ann, bob, joined.table)


async def test_draw_offers_follow_the_rules_and_the_cooldown(channel: grpc.aio.Channel) -> None:
    game = await _start(channel)
    status = await refusal(game.ann.offer_draw(game.table_id, game.seq))
    assert status.reason == "DRAW_OFFER_BEFORE_BOTH_MOVED"
    await game.move()
    await game.move()
    assert game.turn.may_offer_draw
    offered = game.take(list((await game.ann.offer_draw(game.table_id, game.seq)).events))
    assert kinds(offered) == ["draw_offered"]
    assert offered[0].draw_offered.by == game_pb2.COLOR_BLACK
    status = await refusal(game.ann.offer_draw(game.table_id, game.seq))
    assert status.reason == "DRAW_ALREADY_OFFERED"
    status = await refusal(game.bob.answer_draw(game.table_id, game.seq, accept=True))
    assert status.reason == "NOT_YOUR_TURN"
    await game.move()  # Ann moves; her offer stays open while Bob thinks
    assert (await game.bob.get(game.table_id)).table.game.draw_offer == game_pb2.COLOR_BLACK
    status = await refusal(game.bob.offer_draw(game.table_id, game.seq))
    assert status.reason == "DRAW_OFFER_PENDING"
    declined = game.take(
        list((await game.bob.answer_draw(game.table_id, game.seq, accept=False)).events)
    )
    assert kinds(declined) == ["draw_declined"]
    await game.move()  # Bob
    status = await refusal(game.ann.offer_draw(game.table_id, game.seq))
    assert status.reason == "DRAW_OFFER_TOO_SOON"
    assert status.metadata["movesToWait"] == "4"
    for _ in range(8):
        await game.move()
    assert game.turn.side == game_pb2.COLOR_BLACK and game.turn.may_offer_draw
    game.take(list((await game.ann.offer_draw(game.table_id, game.seq)).events))
    await game.move()  # Ann
    moved = await game.move()  # Bob moves instead of answering: that declines
    assert moved[0].move_played.record.declined_draw_offer
    status = await refusal(game.ann.answer_draw(game.table_id, game.seq, accept=True))
    assert status.reason == "NO_DRAW_OFFER"


async def test_an_accepted_draw_ends_the_game(channel: grpc.aio.Channel) -> None:
    game = await _start(channel)
    await game.move()
    await game.move()
    game.take(list((await game.ann.offer_draw(game.table_id, game.seq)).events))
    await game.move()
    accepted = game.take(
        list((await game.bob.answer_draw(game.table_id, game.seq, accept=True)).events)
    )
    assert kinds(accepted) == ["draw_accepted", "game_over"]
    assert accepted[1].game_over.outcome.termination == game_pb2.TERMINATION_AGREEMENT
    assert accepted[1].game_over.result == "1/2-1/2"
    status = await refusal(game.ann.play(game.table_id, first_legal(game.turn), game.seq))
    assert status.reason == "GAME_OVER"


async def test_resignation_and_a_rematch_with_colours_swapped(channel: grpc.aio.Channel) -> None:
    game = await _start(channel)
    await game.move()
    status = await refusal(game.ann.resign(game.table_id, game.seq))
    assert status.reason == "NOT_YOUR_TURN"
    async with watching(channel, game.table_id, after_seq=game.seq) as watch:
        resigned = game.take(list((await game.bob.resign(game.table_id, game.seq)).events))
        assert kinds(resigned) == ["resigned", "game_over"]
        assert resigned[1].game_over.outcome.winner == game_pb2.COLOR_BLACK
        assert resigned[1].game_over.result == "0-1"

        asked = await game.ann.rematch(game.table_id, game.seq)
        assert kinds(asked.events) == ["rematch_offered"]
        assert not asked.HasField("rematch_table")
        game.take(list(asked.events))
        started = await game.bob.rematch(game.table_id, game.seq)
        assert kinds(started.events) == ["rematch_started"]
        game.take(list(started.events))
        await watch.until_seq(game.seq)

    rematch = started.rematch_table
    assert started.your_role == tables_pb2.ROLE_BLACK
    assert started.events[0].rematch_started.table_id == rematch.table_id
    assert rematch.status == tables_pb2.TABLE_STATUS_PLAYING
    assert rematch.white.player.player_id == game.ann.player_id
    assert rematch.black.player.player_id == game.bob.player_id
    assert rematch.seq == 0 and rematch.game.turn.side == game_pb2.COLOR_BLACK
    assert kinds(watch.events)[-2:] == ["rematch_offered", "rematch_started"]
    again = await game.ann.rematch(game.table_id, game.seq)
    assert not again.events and again.rematch_table.table_id == rematch.table_id
    assert again.your_role == tables_pb2.ROLE_WHITE
    old = await game.ann.get(game.table_id)
    assert old.table.rematch_table_id == rematch.table_id
    assert old.table.rematch_offered_by == game_pb2.COLOR_BLACK
    # The new game goes on: Bob (Black now) moves first.
    first = await game.bob.play(rematch.table_id, first_legal(rematch.game.turn), 0)
    assert first.events[0].move_played.record.side == game_pb2.COLOR_BLACK
