"""The Goti client SDK: an async, typed client for the tables, players and matchmaking
services.

It speaks in :mod:`goti.rules` types (Position, Move, Color, Outcome...) and small frozen
dataclasses of its own, never protobuf messages::

    import goti_client
    from goti_client import Opponent, MovePlayed

    async with goti_client.connect("localhost:50051", identity_file="~/.goti.json") as goti:
        table = await goti.create_table(opponent=Opponent.COMPUTER_EASY)
        async for update in goti.watch(table.table_id):
            turn = update.next if isinstance(update, MovePlayed) else None
            if turn is not None and table.role.holds(turn.side):
                await goti.play(table.table_id, turn.legal_moves[0])

Play online now is ``goti.seek(...)`` and ``goti.leaderboard(...)``
(:mod:`goti_client.matchmaking`).  Failed calls raise :class:`GotiError` subclasses
(:mod:`goti_client.errors`).
"""

from goti_client.client import Connection, GotiClient, MoveLike, connect
from goti_client.connection import Backoff, new_request_id
from goti_client.errors import (
    ActionRefusedError,
    AlreadyAtTableError,
    AuthenticationError,
    GotiError,
    IllegalMoveError,
    InvalidRequestError,
    NotYourTurnError,
    PermissionDeniedError,
    RateLimitedError,
    Reason,
    StaleSeqError,
    TableNotFoundError,
    UnavailableError,
)
from goti_client.events import (
    DrawAccepted,
    DrawDeclined,
    DrawOffered,
    GameOver,
    LobbySnapshot,
    LobbyUpdate,
    MovePlayed,
    MovesTakenBack,
    PlayerJoined,
    Rematch,
    RematchOffered,
    RematchStarted,
    Resigned,
    Snapshot,
    TableClosed,
    TableEvent,
    TableOpened,
    TableUpdate,
    UnknownEvent,
)
from goti_client.identity import Identity, IdentityFileError, load_identity, save_identity
from goti_client.matchmaking import (
    SEEK_TURN_TIMERS,
    Leaderboard,
    LeaderboardEntry,
    Seek,
    SeekPaired,
    SeekProgress,
    SeekWaiting,
)
from goti_client.tables import (
    GameView,
    Level,
    LobbyTable,
    Me,
    MoveSource,
    Opponent,
    Player,
    Rating,
    Record,
    Role,
    Seat,
    StartingPlayer,
    Table,
    TableStatus,
    Turn,
)
from goti_client.watches import LobbyWatch, TableWatch

__all__ = [
    "SEEK_TURN_TIMERS",
    "ActionRefusedError",
    "AlreadyAtTableError",
    "AuthenticationError",
    "Backoff",
    "Connection",
    "DrawAccepted",
    "DrawDeclined",
    "DrawOffered",
    "GameOver",
    "GameView",
    "GotiClient",
    "GotiError",
    "Identity",
    "IdentityFileError",
    "IllegalMoveError",
    "InvalidRequestError",
    "Leaderboard",
    "LeaderboardEntry",
    "Level",
    "LobbySnapshot",
    "LobbyTable",
    "LobbyUpdate",
    "LobbyWatch",
    "Me",
    "MoveLike",
    "MovePlayed",
    "MoveSource",
    "MovesTakenBack",
    "NotYourTurnError",
    "Opponent",
    "PermissionDeniedError",
    "Player",
    "PlayerJoined",
    "RateLimitedError",
    "Rating",
    "Reason",
    "Record",
    "Rematch",
    "RematchOffered",
    "RematchStarted",
    "Resigned",
    "Role",
    "Seat",
    "Seek",
    "SeekPaired",
    "SeekProgress",
    "SeekWaiting",
    "Snapshot",
    "StaleSeqError",
    "StartingPlayer",
    "Table",
    "TableClosed",
    "TableEvent",
    "TableNotFoundError",
    "TableOpened",
    "TableStatus",
    "TableUpdate",
    "TableWatch",
    "Turn",
    "UnavailableError",
    "UnknownEvent",
    "connect",
    "load_identity",
    "new_request_id",
    "save_identity",
]
