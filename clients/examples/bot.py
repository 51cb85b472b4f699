"""A bot that plays the computer at Easy through the Goti SDK, then prints the game's PDN.

python clients/examples/bot.py --server localhost:50051
"""

from __future__ import annotations

import argparse
import asyncio

import goti_client
from goti.rules import Move
from goti_client import GameOver, MovePlayed, Opponent, Snapshot, StartingPlayer


def choose(moves: tuple[Move, ...]) -> Move:
    """The move that captures most (the server lists only captures when one is due)."""
    return max(moves, key=lambda move: len(move.captured))


async def play(server: str) -> str:
    async with goti_client.connect(server) as goti:
        table = await goti.create_table(
            opponent=Opponent.COMPUTER_EASY, starting_player=StartingPlayer.PLAYER_1
        )
        print(f"table {table.code}: we play {table.role.value}")
        async for update in goti.watch(table.table_id):
            turn = None
            if isinstance(update, Snapshot):
                turn = update.table.game.turn
            elif isinstance(update, MovePlayed):
                ply = update.record.ply
                print(f"{ply // 2 + 1:>3}{'.' if ply % 2 == 0 else '...'} {update.notation}")
                turn = update.next
            elif isinstance(update, GameOver):
                print(f"result {update.result} ({update.outcome.termination.value})")
                break
            if turn is not None and table.role.holds(turn.side):
                await goti.play(table.table_id, choose(turn.legal_moves))
        record = await goti.record(table.table_id)
        return record.pdn


def main() -> None:
    parser = argparse.ArgumentParser(description="Play the computer at Easy, then print PDN.")
    parser.add_argument("--server", default="localhost:50051", help="host:port of Goti")
    print(asyncio.run(play(parser.parse_args().server)))


if __name__ == "__main__":
    main()
