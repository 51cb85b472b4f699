"""Guests go away when nobody uses them, and a proxy in front of Goti does not put every
client behind one guest rate limit: the client's address comes from ``x-forwarded-for``
when, and only when, a trusted proxy sent it."""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

import grpc
import pytest
from connectrpc.client import ConnectClient
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from redis.asyncio import Redis

from goti import serving
from goti.api.v1 import players_pb2, players_pb2_grpc, tables_pb2_grpc
from goti.settings import Settings
from goti.tables import keys
from goti.tables.options import TablesOptions
from goti.tables.player_store import PlayerStore
from goti.tables.players import (
    DAY_SECONDS,
    REVERIFY_MS,
    GuestPolicy,
    Players,
    TrustedProxies,
)
from goti.tables.refusals import CallRefusedError
from goti.tables.runtime import TablesRuntime, open_redis
from goti.tables.servicer import PLAYERS_SERVICE, PlayersServicer
from goti.web.adapter import method_info
from goti.web.server import start_web_server

from .table_calls import CALL_TIMEOUT, Guest, new_guest, refusal

KEPT_SECONDS = 180 * DAY_SECONDS + REVERIFY_MS // 1000
"""A guest's expiry under the default policy, renewed: 180 days and the day a replica may go
without reading its token."""
SLACK_SECONDS = 60
"""How far below the expiry Goti set the TTL may have run by the time the test reads it."""


@dataclass
class Clock:
    """The time Players read, moved by the test."""

    now_ms: int = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now_ms


@dataclass
class PlayersReplica:
    """The players service of one tables replica, on a real gRPC server."""

    players: Players
    channel: grpc.aio.Channel


StartPlayers = Callable[..., Awaitable[PlayersReplica]]


@pytest.fixture
async def start_players(
    redis_url: str, redis: Redis, settings: Settings
) -> AsyncIterator[StartPlayers]:
    """Start players services on the shared Redis, emptied first; all stop at the end of the
    test."""
    async with contextlib.AsyncExitStack() as stack:

        async def start(
            *,
            policy: GuestPolicy | None = None,
            clock: Clock | None = None,
            guests_per_minute: int = 0,
        ) -> PlayersReplica:
            client = open_redis(redis_url)
            stack.push_async_callback(client.connection_pool.disconnect)
            stack.push_async_callback(client.aclose)
            players = Players(
                PlayerStore(client),
                guests_per_minute=guests_per_minute,
                policy=policy,
                clock_ms=clock,
            )
            servicer = PlayersServicer(players)
            server = await serving.start_server(
                "tables",
                lambda server: [serving.add_servicer(server, PLAYERS_SERVICE, servicer)],
                settings,
                port=0,
            )
            stack.push_async_callback(server.stop, None)
            channel = serving.open_channel(server.target, settings)
            stack.push_async_callback(channel.close)
            return PlayersReplica(players, channel)

        yield start


async def seconds_left(redis: Redis, guest: Guest) -> int:
    return int(await redis.ttl(keys.player(guest.player_id)))


# -- how long guests are kept -------------------------------------------------------------


async def test_a_new_guest_is_kept_the_idle_days_and_a_day(
    start_players: StartPlayers, redis: Redis
) -> None:
    replica = await start_players()
    guest = await new_guest(replica.channel, "Ann")
    assert KEPT_SECONDS - SLACK_SECONDS <= await seconds_left(redis, guest) <= KEPT_SECONDS


async def test_use_renews_the_expiry_at_most_once_a_day_per_replica(
    start_players: StartPlayers, redis: Redis
) -> None:
    clock = Clock()
    replica = await start_players(clock=clock)
    guest = await new_guest(replica.channel, "Ann")
    key = keys.player(guest.player_id)

    await redis.expire(key, 1000)
    await guest.me()  # the replica's first sight of the token: read, and renewed
    assert await seconds_left(redis, guest) > KEPT_SECONDS - SLACK_SECONDS

    await redis.expire(key, 1000)
    clock.now_ms += REVERIFY_MS - 1
    await guest.me()
    assert await seconds_left(redis, guest) <= 1000, "verified within the day: no renewal"

    clock.now_ms += 1
    await guest.me()
    assert await seconds_left(redis, guest) > KEPT_SECONDS - SLACK_SECONDS

    other = await start_players(clock=clock)
    await redis.expire(key, 1000)
    await calling(other, guest).me()
    assert await seconds_left(redis, guest) > KEPT_SECONDS - SLACK_SECONDS, "another replica"


def calling(replica: PlayersReplica, guest: Guest) -> Guest:
    """The same guest, calling another replica."""
    return Guest(
        guest.player,
        guest.token,
        tables_pb2_grpc.TablesServiceStub(replica.channel),
        players_pb2_grpc.PlayersServiceStub(replica.channel),
    )


async def test_an_expired_guest_is_refused_invalid_token(
    start_players: StartPlayers, redis: Redis
) -> None:
    clock = Clock()
    replica = await start_players(clock=clock)
    guest = await new_guest(replica.channel, "Ann")
    await guest.me()
    await redis.pexpire(keys.player(guest.player_id), 1)
    while await redis.exists(keys.player(guest.player_id)):
        pass

    status = await refusal(guest.me())
    assert (status.code, status.reason) == (grpc.StatusCode.UNAUTHENTICATED, "INVALID_TOKEN")
    assert "unused too long" in status.message and "create a new guest" in status.message

    fresh = await start_players(clock=clock)
    status = await refusal(calling(fresh, guest).me())
    assert status.reason == "INVALID_TOKEN"


async def test_a_replica_lets_a_removed_guest_in_for_the_rest_of_its_day_at_most(
    start_players: StartPlayers, redis: Redis
) -> None:
    """Authentication is remembered for a day, so a guest removed by other means than its
    expiry (which always lies further ahead) is let in until the replica reads it again."""
    clock = Clock()
    replica = await start_players(clock=clock)
    guest = await new_guest(replica.channel, "Ann")
    metadata = guest.metadata
    assert await replica.players.authenticate(metadata) == guest.player_id
    await redis.delete(keys.player(guest.player_id))

    clock.now_ms += REVERIFY_MS - 1
    assert await replica.players.authenticate(metadata) == guest.player_id
    clock.now_ms += 1
    with pytest.raises(CallRefusedError) as refused:
        await replica.players.authenticate(metadata)
    assert refused.value.status.reason == "INVALID_TOKEN"
    clock.now_ms -= REVERIFY_MS
    with pytest.raises(CallRefusedError):
        await replica.players.authenticate(metadata)  # forgotten, not let in again


async def test_zero_idle_days_keep_guests_forever(
    start_players: StartPlayers, redis: Redis
) -> None:
    forever = GuestPolicy.from_settings(Settings.from_env({"GOTI_IDLE_GUEST_DAYS": "0"}))
    replica = await start_players(policy=forever)
    guest = await new_guest(replica.channel, "Ann")
    assert await seconds_left(redis, guest) == -1
    await redis.expire(keys.player(guest.player_id), 1000)
    await guest.me()
    assert await seconds_left(redis, guest) == -1, "a guest made while guests expired"


async def test_the_idle_days_setting_sets_the_expiry(
    start_players: StartPlayers, redis: Redis
) -> None:
    policy = GuestPolicy.from_settings(Settings.from_env({"GOTI_IDLE_GUEST_DAYS": "3"}))
    replica = await start_players(policy=policy)
    guest = await new_guest(replica.channel)
    kept = 4 * DAY_SECONDS
    assert kept - SLACK_SECONDS <= await seconds_left(redis, guest) <= kept


# -- the client address behind a proxy ----------------------------------------------------

LOCAL = ipaddress.ip_network("127.0.0.1/32")
ELSEWHERE = ipaddress.ip_network("10.0.0.0/8")


def trusting(*networks: ipaddress.IPv4Network | ipaddress.IPv6Network) -> GuestPolicy:
    return GuestPolicy(trusted_proxies=TrustedProxies(networks))


async def create_guest(channel: grpc.aio.Channel, forwarded_for: str | None) -> None:
    metadata = () if forwarded_for is None else (("x-forwarded-for", forwarded_for),)
    await players_pb2_grpc.PlayersServiceStub(channel).CreateGuest(
        players_pb2.CreateGuestRequest(), metadata=metadata, timeout=CALL_TIMEOUT
    )


async def rate_limited_addresses(redis: Redis) -> set[str]:
    prefix = keys.address_rate_limit("", "guest")
    return {key.decode().removeprefix(prefix) async for key in redis.scan_iter(f"{prefix}*")}


async def test_a_trusted_proxys_forwarded_address_is_the_rate_limited_one(
    start_players: StartPlayers, redis: Redis
) -> None:
    replica = await start_players(policy=trusting(LOCAL), guests_per_minute=1)
    await create_guest(replica.channel, "203.0.113.5")
    await create_guest(replica.channel, "198.51.100.7, 203.0.113.6")
    status = await refusal(create_guest(replica.channel, "203.0.113.5"))
    assert status.reason == "RATE_LIMITED"
    assert await rate_limited_addresses(redis) == {"203.0.113.5", "203.0.113.6"}


async def test_an_untrusted_peers_forwarded_address_is_ignored(
    start_players: StartPlayers, redis: Redis
) -> None:
    replica = await start_players(policy=trusting(ELSEWHERE), guests_per_minute=1)
    await create_guest(replica.channel, "203.0.113.5")
    status = await refusal(create_guest(replica.channel, "203.0.113.6"))
    assert status.reason == "RATE_LIMITED"
    assert await rate_limited_addresses(redis) == {"127.0.0.1"}


async def test_malformed_forwarded_addresses_are_not_believed(
    start_players: StartPlayers, redis: Redis
) -> None:
    replica = await start_players(policy=trusting(LOCAL, ELSEWHERE), guests_per_minute=5)
    for garbage in ("not an address", "", " , ", "999.1.1.1", "203.0.113.9, bogus, 10.1.2.3"):
        await create_guest(replica.channel, garbage)
    assert await rate_limited_addresses(redis) == {"127.0.0.1", "10.1.2.3"}


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("ipv4:127.0.0.1:5000", [], "127.0.0.1"),
        ("ipv4:127.0.0.1:5000", ["203.0.113.5"], "203.0.113.5"),
        ("ipv4:192.0.2.1:5000", ["203.0.113.5"], "192.0.2.1"),
        ("ipv4:127.0.0.1:5000", ["203.0.113.5, 10.0.0.2"], "203.0.113.5"),
        ("ipv4:127.0.0.1:5000", ["198.51.100.1", "203.0.113.5, 10.0.0.2"], "203.0.113.5"),
        ("ipv4:127.0.0.1:5000", ["10.0.0.3, 10.0.0.2"], "10.0.0.3"),
        ("ipv4:127.0.0.1:5000", ["203.0.113.5:41234"], "203.0.113.5"),
        ("ipv4:127.0.0.1:5000", ["[2001:db8::7]:41234"], "2001:db8::7"),
        ("ipv4:127.0.0.1:5000", ["2001:db8::7"], "2001:db8::7"),
        ("ipv4:127.0.0.1:5000", ["::ffff:203.0.113.5"], "203.0.113.5"),
        ("ipv6:[::ffff:127.0.0.1]:5000", ["203.0.113.5"], "203.0.113.5"),
        ("ipv6:[::1]:5000", ["203.0.113.5"], "203.0.113.5"),
        ("ipv6:[2001:db8::9]:5000", ["203.0.113.5"], "2001:db8::9"),
        ("ipv4:127.0.0.1:5000", ["unknown"], "127.0.0.1"),
        ("ipv4:127.0.0.1:5000", ["203.0.113.5,"], "127.0.0.1"),
        ("ipv4:127.0.0.1:5000", ["203.0.113.5, 10.0.0.2 10.0.0.3"], "127.0.0.1"),
        ("ipv4:127.0.0.1:5000", ["\u00e9\u00e9"], "127.0.0.1"),
        ("unix:/run/goti.sock", ["203.0.113.5"], "unix:/run/goti.sock"),
    ],
)
def test_the_client_address_is_read_from_the_right(
    peer: str, forwarded: Sequence[str], client: str
) -> None:
    proxies = TrustedProxies(
        (LOCAL, ELSEWHERE, ipaddress.ip_network("::1/128"), ipaddress.ip_network("fd00::/8"))
    )
    metadata = [("X-Forwarded-For", value) for value in forwarded]
    assert proxies.client_address(peer, metadata) == client
    as_bytes = [(key, value.encode()) for key, value in metadata]
    assert proxies.client_address(peer, as_bytes) == client


async def test_the_web_port_takes_the_forwarded_address_from_trusted_proxies_only(
    redis_url: str, redis: Redis, settings: Settings
) -> None:
    for policy, expected in ((trusting(LOCAL), "203.0.113.5"), (trusting(), "127.0.0.1")):
        await redis.flushdb()
        async with (
            web_port(redis_url, settings, policy) as url,
            ConnectClient(
                url,
                codec=google_protobuf_binary_codec(),
                protocol=ProtocolType.CONNECT,
                send_compression=None,
                accept_compression=(),
            ) as client,
        ):
            method = method_info(PLAYERS_SERVICE, PLAYERS_SERVICE.methods_by_name["CreateGuest"])
            forwarded = {"x-forwarded-for": "203.0.113.5"}
            request = players_pb2.CreateGuestRequest()
            timeout_ms = int(CALL_TIMEOUT * 1000)
            await client.execute_unary(
                request=request, method=method, headers=forwarded, timeout_ms=timeout_ms
            )
            with pytest.raises(ConnectError, match="too many guests"):
                await client.execute_unary(
                    request=request, method=method, headers=forwarded, timeout_ms=timeout_ms
                )
            # uvicorn on its own would believe any local peer: Goti's setting alone decides.
            assert await rate_limited_addresses(redis) == {expected}


@contextlib.asynccontextmanager
async def web_port(redis_url: str, settings: Settings, policy: GuestPolicy) -> AsyncIterator[str]:
    """A tables runtime's web port (no referee or AI is needed to create guests)."""
    async with contextlib.AsyncExitStack() as stack:
        redis = open_redis(redis_url)
        stack.push_async_callback(redis.connection_pool.disconnect)
        stack.push_async_callback(redis.aclose)
        nowhere = serving.open_channel("localhost:1", settings)
        stack.push_async_callback(nowhere.close)
        runtime = TablesRuntime.assemble(
            redis, nowhere, nowhere, TablesOptions(guests_per_minute=1), guests=policy
        )
        stack.push_async_callback(runtime.close)
        web = await start_web_server(
            runtime.tables_servicer,
            runtime.players_servicer,
            runtime.matchmaking_servicer,
            settings,
            port=0,
        )
        stack.push_async_callback(web.stop)
        yield web.url.rstrip("/")
