"""Guest players: their identities, the tokens that prove them, and their streaks.

A token is ``<player id>.<secret>``: the id says which player to look up, and only a digest
of the secret is stored, so a leak of the store leaks no token.  Verified tokens are
remembered (by digest) for a while, so a command costs no extra Redis call to authenticate.
Tokens never reach logs, events or listings.

A guest nobody uses goes away: its player hash expires ``idle_seconds``
(``GOTI_IDLE_GUEST_DAYS``) after its last use.  Renewing the expiry on every command would
cost every command a Redis call, so a replica renews it only when it reads the token from
Redis anyway: the first time it sees the token, and again once its verification is
:data:`REVERIFY_MS` (a day) old.  The expiry is set ``idle_seconds`` plus that day ahead, so
a guest is kept at least ``idle_seconds`` after its last use, whichever replica saw it, and a
day longer at most; and since no remembered verification is older than a day, none outlives
an expired guest.  Only a player removed some other way (an operator deleting the key) is
still let in, by a replica that verified it in the last day, for the rest of that day.  The
counted-results set needs nothing: it expires on its own soon after its last result.

Behind a proxy, the peer of a call is the proxy; :class:`TrustedProxies` finds the client's
address in ``x-forwarded-for``, believing only what trusted proxies wrote there.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from goti.api.v1 import errors_pb2, players_pb2, tables_pb2
from goti.setting_values import IpNetwork
from goti.settings import Settings
from goti.tables import keys
from goti.tables.player_store import PlayerStore
from goti.tables.rated_games import VARIANT_NAMES, StoredRating, rating_field, rating_message
from goti.tables.refusals import CallRefusedError

PLAYER_ID_BYTES: Final = 12
"""Random bytes in a player id: 16 URL-safe characters."""
SECRET_BYTES: Final = 32
"""Random bytes in a token's secret: 43 URL-safe characters (a token is at most 64)."""
RATE_WINDOW_MS: Final = 60_000
VERIFIED_TOKENS_KEPT: Final = 50_000
DAY_SECONDS: Final = 86_400
REVERIFY_MS: Final = DAY_SECONDS * 1000
"""How old a replica's verification of a token may grow before the replica reads the token
from Redis again, renewing the guest's expiry as it does."""


_BEARER: Final = "bearer "
_FORWARDED_FOR: Final = "x-forwarded-for"
_GONE: Final = (
    "the token is not a player's, or its guest went unused too long and was removed: create a "
    "new guest and keep its token"
)


@dataclass(frozen=True, slots=True)
class Me:
    """A player, their streaks against the computer and their ratings."""

    player: players_pb2.Player
    streaks: players_pb2.Streaks
    ratings: dict[int, StoredRating] = field(default_factory=dict)
    """Variant -> rating, for the variants the player has played a rated game in."""

    def rating_messages(self) -> list[players_pb2.Rating]:
        """The ratings as the API shows them, in the order of the variants."""
        return [rating_message(variant, stored) for variant, stored in sorted(self.ratings.items())]


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


def peer_host(peer: str) -> str:
    """The host part of a gRPC peer (``ipv4:1.2.3.4:5678`` gives ``1.2.3.4``)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]")
    if kind == "ipv4":
        return rest.rpartition(":")[0]
    return peer


def ip_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address an ``x-forwarded-for`` entry or a peer's host names (``1.2.3.4``,
    ``1.2.3.4:5678``, ``2001:db8::1``, ``[2001:db8::1]:5678``); an IPv4 address mapped into
    IPv6 (``::ffff:1.2.3.4``, as a dual-stack socket reports one) as plain IPv4.  None when it
    names no address."""
    entry = text.strip()
    if entry.startswith("["):
        entry = entry[1:].partition("]")[0]
    elif entry.count(":") == 1:
        entry = entry.partition(":")[0]
    try:
        address = ipaddress.ip_address(entry)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass(frozen=True, slots=True)
class TrustedProxies:
    """The proxies whose ``x-forwarded-for`` Goti believes, and the client address that makes.

    Each proxy appends the address it was called from, so the entries are read from the
    right: past every trusted proxy, the first address that is not one is the client (what is
    further left, the client could have written).  An entry that is no address ends the
    reading, and the last trusted proxy read stands for the client.
    """

    networks: tuple[IpNetwork, ...] = ()

    def trusts(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        """Whether ``address`` is a trusted proxy's."""
        return any(address in network for network in self.networks)

    def client_address(self, peer: str, metadata: Iterable[tuple[str, str | bytes]]) -> str:
        """The address of the client behind a call from ``peer`` (as gRPC writes a peer)."""
        host = peer_host(peer)
        address = ip_address(host)
        if address is None:
            return host
        if not self.trusts(address):
            return str(address)
        entries = [
            entry
            for key, value in metadata
            if key.lower() == _FORWARDED_FOR
            for entry in (
                value.decode(errors="replace") if isinstance(value, bytes) else value
            ).split(",")
        ]
        for entry in reversed(entries):
            forwarded = ip_address(entry)
            if forwarded is None:
                break
            address = forwarded
            if not self.trusts(address):
                break
        return str(address)


@dataclass(frozen=True, slots=True)
class GuestPolicy:
    """How long guests nobody uses are kept, and whose word on a client's address is taken."""

    idle_seconds: int = 180 * DAY_SECONDS
    """0: forever."""
    trusted_proxies: TrustedProxies = TrustedProxies()

    @classmethod
    def from_settings(cls, settings: Settings) -> GuestPolicy:
        """The policy ``GOTI_IDLE_GUEST_DAYS`` and ``GOTI_TRUSTED_PROXIES`` set."""
        return cls(
            idle_seconds=settings.idle_guest_days * DAY_SECONDS,
            trusted_proxies=TrustedProxies(settings.trusted_proxies),
        )

    @property
    def kept_seconds(self) -> int:
        """The expiry a guest's key gets when renewed (0: none): a day more than
        ``idle_seconds``, as the module's notes explain."""
        return self.idle_seconds + REVERIFY_MS // 1000 if self.idle_seconds else 0


class Players:
    """Creates guests, checks tokens, keeps names and streaks."""

    def __init__(
        self,
        store: PlayerStore,
        *,
        guests_per_minute: int,
        policy: GuestPolicy | None = None,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        self._store = store
        self._guests_per_minute = guests_per_minute
        self._policy = policy or GuestPolicy()
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._verified: OrderedDict[bytes, tuple[str, int]] = OrderedDict()
        """Token digest -> the player id and when the token was last read from Redis (ms)."""

    def client_address(self, peer: str, metadata: Iterable[tuple[str, str | bytes]]) -> str:
        """The address of the client behind a call from ``peer``: the peer, or, when the peer
        is a trusted proxy, the address it forwards."""
        return self._policy.trusted_proxies.client_address(peer, metadata)

    async def create_guest(self, display_name: str, address: str) -> tuple[players_pb2.Player, str]:
        """A new guest player and its token; ``display_name`` empty for a generated one."""
        await self.enforce_rate_limit(
            keys.address_rate_limit(address, "guest"),
            self._guests_per_minute,
            "too many guests created from this address",
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
                keep_seconds=self._policy.kept_seconds,
            )
            if created:
                return players_pb2.Player(player_id=player_id, display_name=name), (
                    f"{player_id}.{secret}"
                )

    async def enforce_rate_limit(self, counter: str, per_minute: int, too_many: str) -> None:
        """Count one more hit on ``counter`` in the current minute; past ``per_minute`` (0: no
        limit) refuse with RATE_LIMITED, saying ``too many`` and when to try again."""
        if not per_minute:
            return
        wait_ms = await self._store.hit_rate_limit(counter, per_minute, RATE_WINDOW_MS)
        if wait_ms:
            raise CallRefusedError.of(
                errors_pb2.ERROR_REASON_RATE_LIMITED,
                f"{too_many}; wait before trying again",
                retryAfterMs=wait_ms,
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

        Raises INVALID_TOKEN for a token that is not a player's, or no longer is one.
        """
        token = bearer_token(metadata)
        if token is None:
            return None
        remembered_as = hashlib.sha256(token.encode()).digest()
        now_ms = self._clock_ms()
        known = self._verified.get(remembered_as)
        if known is not None and now_ms - known[1] < REVERIFY_MS:
            self._verified.move_to_end(remembered_as)
            return known[0]
        player_id, _, secret = token.partition(".")
        # Kept forever when guests do not expire: a guest made while they did stops expiring.
        stored = (
            await self._store.player_token(player_id, keep_seconds=self._policy.kept_seconds)
            if player_id and secret and len(token) <= 64
            else None
        )
        if stored is None or not hmac.compare_digest(stored, _digest(secret)):
            self._verified.pop(remembered_as, None)
            raise CallRefusedError.of(errors_pb2.ERROR_REASON_INVALID_TOKEN, _GONE)
        self._verified[remembered_as] = (player_id, now_ms)
        self._verified.move_to_end(remembered_as)
        while len(self._verified) > VERIFIED_TOKENS_KEPT:
            self._verified.popitem(last=False)
        return player_id

    async def me(self, player_id: str) -> Me:
        """A player with their streaks and ratings."""
        stored = await self._store.load_player(player_id)
        if stored is None:
            raise CallRefusedError.of(errors_pb2.ERROR_REASON_INVALID_TOKEN, _GONE)
        fields = stored.fields
        return Me(
            players_pb2.Player(player_id=player_id, display_name=fields["name"].decode()),
            players_pb2.Streaks(
                win_streak=int(fields.get("win_streak", b"0")),
                best_streak=int(fields.get("best_streak", b"0")),
            ),
            {
                variant: StoredRating.decode(fields[rating_field(variant)])
                for variant in VARIANT_NAMES
                if rating_field(variant) in fields
            },
        )

    async def seat(self, player_id: str, *, rated_in: int | None = None) -> tables_pb2.Seat:
        """A seat for the player, with the name they have now and, when ``rated_in`` names a
        variant, their rating in it (a new player's when they have none yet)."""
        me = await self.me(player_id)
        seat = tables_pb2.Seat(player=me.player)
        if rated_in is not None:
            seat.rating.CopyFrom(rating_message(rated_in, me.ratings.get(rated_in, StoredRating())))
        return seat

    async def set_display_name(self, player_id: str, name: str) -> players_pb2.Player:
        """Rename a player (tables already seated keep the old name)."""
        if not await self._store.update_player(player_id, {"name": name.encode()}):
            raise CallRefusedError.of(errors_pb2.ERROR_REASON_INVALID_TOKEN, _GONE)
        return players_pb2.Player(player_id=player_id, display_name=name)
