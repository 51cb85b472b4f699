"""Table records built without Redis or gRPC, for the tests of the pure modules."""

from __future__ import annotations

from goti.api.v1 import game_pb2, players_pb2, tables_pb2
from goti.tables import seating


def anns_table(opponent: tables_pb2.Opponent.ValueType) -> tables_pb2.Table:
    """A new public English table that Ann opened as White, against ``opponent``."""
    return seating.new_table(
        creator=tables_pb2.Seat(player=players_pb2.Player(player_id="ann", display_name="Ann")),
        creator_color=game_pb2.COLOR_WHITE,
        variant=game_pb2.VARIANT_ENGLISH,
        opponent=opponent,
        visibility=tables_pb2.VISIBILITY_PUBLIC,
        turn_timer_seconds=0,
        code="K7QX2M",
        created_ms=1_000,
    )
