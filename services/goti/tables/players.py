"""Guest players: their identities, the tokens that prove them, and their streaks.

A token is ``<player id>.<secret>``: the id says which player to look up, and only a digest
of the secret is stored, so a leak of the store leaks no token.  Verified tokens are
remembered (by digest) for a while, so a command costs no extra Redis call to authenticate.
Tokens never reach logs, events or listings.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from goti.api.v1 import errors_pb2, players_pb2, tables_pb2
from goti.tables import keys
from goti.tables.refusals import CallRefusedError
from goti.tables.store import TableStore

PLAYER_ID_BYTES: Final = 12
"""Random bytes in a player id: 16 URL-safe characters."""
SECRET_BYTES: Final = 32
"""Random bytes in a token's secret: 43 URL-safe characters (a token is at most 64)."""
RATE_WINDOW_MS: Final = 60_000
VERIFIED_TOKENS_KEPT: Final = 50_000

_BEARER: Final = "bearer "


@dataclass(frozen=True, slots=True)
class Me:
    """A player and their streaks against the computer."""

    player: players_pb2.Player
    streaks: players_pb2.Streaks


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def bearer_token(metadata: Iterable[tuple[str, str | bytes]]) -> str | None:
    """The token of an ``authorization: Bearer <token>`` entry; None when there is none.

    Raises TOKEN_REQUIRED for an authorization entry that is not a bearer token.
    """
    for key, value in metadata:
        if key.lower() != "authorization":
            continue
        text = value.decode(errors="replace") if isinstance(value, bytes) else value
        if not text.lower().startswith(_BEARER) or not text[len(_BEARER) :].strip():
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_TOKEN_REQUIRED,
                "the authorization metadata must be `Bearer <player token>`",
            )
        return text[len(_BEARER) :].strip()
    return None


def client_address(peer: str) -> str:
    """The host part of a gRPC peer (``ipv4:1.2.3.4:5678`` gives ``1.2.3.4``)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]")
    if kind == "ipv4":
        return rest.rpartition(":")[0]
    return peer


class Players:
    """Creates guests, checks tokens, keeps names and streaks."""

    def __init__(
        self,
        store: TableStore,
        *,
        guests_per_minute: int,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        self._store = store
        self._guests_per_minute = guests_per_minute
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._verified: OrderedDict[bytes, str] = OrderedDict()

    async def create_guest(self, display_name: str, address: str) -> tuple[players_pb2.Player, str]:
        """A new guest player and its token; ``display_name`` empty for a generated one."""
        if self._guests_per_minute:
            wait_ms = await self._store.hit_rate_limit(
                keys.address_rate_limit(address, "guest"), self._guests_per_minute, RATE_WINDOW_MS
            )
            if wait_ms:
                raise CallRefusedError.of(
                    errors_pb2.ERROR_REASON_RATE_LIMITED,
                    "too many guests created from this address; wait before trying again",
                    retryAfterMs=wait_ms,
                )
        name = display_name or f"Guest {1000 + secrets.randbelow(9000)}"
        while True:
            player_id = secrets.token_urlsafe(PLAYER_ID_BYTES)
            secret = secrets.token_urlsafe(SECRET_BYTES)
            created = await self._store.create_player(
                player_id,
                {
                    "name": name.encode(),
                    "token": _digest(secret),
                    "created": str(self._clock_ms()).encode(),
                    "win_streak": b"0",
                    "best_streak": b"0",
                },
            )
            if created:
                return players_pb2.Player(player_id=player_id, display_name=name), (
                    f"{player_id}.{secret}"
                )

    async def authenticate(self, metadata: Iterable[tuple[str, str | bytes]]) -> str:
        """The id of the player whose token the call carries; refuses calls without one."""
        player_id = await self.identify(metadata)
        if player_id is None:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_TOKEN_REQUIRED,
                "this call needs the player's token as `authorization: Bearer <token>`",
            )
        return player_id

    async def identify(self, metadata: Iterable[tuple[str, str | bytes]]) -> str | None:
        """The id of the player whose token the call carries; None for a call without one.

        Raises INVALID_TOKEN for a token that is not a player's.
        """
        token = bearer_token(metadata)
        if token is None:
            return None
        remembered_as = hashlib.sha256(token.encode()).digest()
        known = self._verified.get(remembered_as)
        if known is not None:
            self._verified.move_to_end(remembered_as)
            return known
        player_id, _, secret = token.partition(".")
        stored = (
            await self._store.player_field(player_id, "token")
            if player_id and secret and len(token) <= 64
            else None
        )
        if stored is None or not hmac.compare_digest(stored, _digest(secret)):
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_INVALID_TOKEN,
                "the token is not a player's: create a new guest and keep its token",
            )
        self._verified[remembered_as] = player_id
        while len(self._verified) > VERIFIED_TOKENS_KEPT:
            self._verified.popitem(last=False)
        return player_id

    async def me(self, player_id: str) -> Me:
        """A player with their streaks."""
        stored = await self._store.load_player(player_id)
        if stored is None:
            raise CallRefusedError.of(errors_pb2.ERROR_REASON_INVALID_TOKEN, "no such player")
        fields = stored.fields
        return Me(
            players_pb2.Player(player_id=player_id, display_name=fields["name"].decode()),
            players_pb2.Streaks(
                win_streak=int(fields.get("win_streak", b"0")),
                best_streak=int(fields.get("best_streak", b"0")),
            ),
        )

    async def seat(self, player_id: str) -> tables_pb2.Seat:
        """A seat for the player, with the name they have now."""
        return tables_pb2.Seat(player=(await self.me(player_id)).player)

    async def set_display_name(self, player_id: str, name: str) -> players_pb2.Player:
        """Rename a player (tables already seated keep the old name)."""
        if not await self._store.update_player(player_id, {"name": name.encode()}):
            raise CallRefusedError.of(errors_pb2.ERROR_REASON_INVALID_TOKEN, "no such player")
        return players_pb2.Player(player_id=player_id, display_name=name)
