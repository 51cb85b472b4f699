"""What the terminal client keeps between runs: one identity file per server, and the table
of the game left unfinished on each."""

from __future__ import annotations

from pathlib import Path

from goti_client.terminal.player_files import PlayerFiles, server_slug


def test_each_server_has_its_own_identity_file(tmp_path: Path) -> None:
    files = PlayerFiles(tmp_path / "config", tmp_path / "data")
    here = files.identity_file("localhost:50051")
    there = files.identity_file("goti.example.org:443")
    assert here != there
    assert here.parent == tmp_path / "config" / "identities"
    assert server_slug("[::1]:50051") == "1_50051"
    assert server_slug("dns:///goti:50051") == "dns_goti_50051"


def test_the_unfinished_game_is_kept_per_server_until_forgotten(tmp_path: Path) -> None:
    files = PlayerFiles(tmp_path / "config", tmp_path / "data")
    assert files.unfinished_table("a:1") is None
    files.remember_table("a:1", "table-1")
    files.remember_table("b:2", "table-2")
    assert PlayerFiles(tmp_path / "config", tmp_path / "data").unfinished_table("a:1") == (
        "table-1"
    )
    files.forget_table("a:1", "another-table")
    assert files.unfinished_table("a:1") == "table-1"
    files.forget_table("a:1", "table-1")
    assert files.unfinished_table("a:1") is None
    assert files.unfinished_table("b:2") == "table-2"
    files.forget_table("b:2")
    assert files.unfinished_table("b:2") is None


def test_a_damaged_games_file_is_read_as_empty(tmp_path: Path) -> None:
    files = PlayerFiles(tmp_path / "config", tmp_path / "data")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "unfinished-games.json").write_text("{not json", encoding="utf-8")
    assert files.unfinished_table("a:1") is None
    files.remember_table("a:1", "table-1")
    assert files.unfinished_table("a:1") == "table-1"
