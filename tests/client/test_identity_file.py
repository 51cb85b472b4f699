"""The identity file: what the terminal client keeps between runs, readable by its owner only."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from goti_client import Identity, IdentityFileError, load_identity, save_identity


def test_an_identity_comes_back_as_it_was_saved(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "identity.json"
    identity = Identity("p_123", "Guest 4821", "secret-token")

    save_identity(path, identity)

    assert load_identity(path) == identity
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [entry.name for entry in path.parent.iterdir()] == ["identity.json"]


def test_saving_again_replaces_the_identity_and_keeps_the_file_private(tmp_path: Path) -> None:
    path = tmp_path / "identity.json"
    path.write_text("{}")
    path.chmod(0o644)

    save_identity(path, Identity("p_2", "Second", "token-2"))

    assert load_identity(path) == Identity("p_2", "Second", "token-2")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_no_file_means_no_identity(tmp_path: Path) -> None:
    assert load_identity(tmp_path / "absent.json") is None


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        json.dumps({"player_id": "p_1"}),
        json.dumps({"player_id": "", "token": "t"}),
    ],
)
def test_a_file_that_is_no_identity_is_refused_by_name(tmp_path: Path, text: str) -> None:
    path = tmp_path / "identity.json"
    path.write_text(text)

    with pytest.raises(IdentityFileError, match=r"identity\.json is not a Goti identity file"):
        load_identity(path)


def test_the_token_stays_out_of_the_repr() -> None:
    assert "secret" not in repr(Identity("p_1", "Ana", "secret"))
