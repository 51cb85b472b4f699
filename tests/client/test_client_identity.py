"""Connecting keeps a guest's identity on disk and comes back as the same player."""

from __future__ import annotations

import stat
from pathlib import Path

from goti_client import Identity, load_identity, save_identity

from .conftest import Clients


async def test_the_first_connect_makes_a_guest_and_later_ones_are_that_guest(
    clients: Clients, tmp_path: Path
) -> None:
    path = tmp_path / "goti" / "identity.json"

    first = await clients.open(identity_file=path, display_name="Ana")
    kept = load_identity(path)
    again = await clients.open(identity_file=path)

    assert first.identity is not None and first.identity == kept
    assert first.identity.display_name == "Ana"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert again.identity == kept
    assert (await again.me()).player == first.player


async def test_a_token_is_enough_to_act_as_its_player(clients: Clients) -> None:
    guest = await clients.open(display_name="Ana")
    assert guest.identity is not None

    same = await clients.open(token=guest.identity.token)

    assert same.player == guest.player


async def test_a_kept_identity_the_server_does_not_know_is_replaced_by_a_new_guest(
    clients: Clients, tmp_path: Path
) -> None:
    path = tmp_path / "identity.json"
    forgotten = Identity("p_gone", "Gone", "a-token-from-another-server")
    save_identity(path, forgotten)

    client = await clients.open(identity_file=path)

    assert client.identity is not None and client.identity != forgotten
    assert load_identity(path) == client.identity
    assert (await client.me()).player == client.player


async def test_a_spectator_connects_without_becoming_a_player(
    clients: Clients, tmp_path: Path
) -> None:
    path = tmp_path / "identity.json"

    spectator = await clients.open(guest=False, identity_file=path)

    assert spectator.identity is None and spectator.player is None
    assert not path.exists()
