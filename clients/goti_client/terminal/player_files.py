"""What the terminal client keeps between runs: the player's identity on each server, and the
table of the game left unfinished there.

A token belongs to one server, so each server gets its own identity file; losing one would
lose the player's tables and streaks there.  The identity lives in the user's config folder
(``~/.config/goti`` on Linux), the unfinished game in the data folder
(``~/.local/share/goti``), and what gRPC logs while the client runs in the state folder
(``~/.local/state/goti/play.log``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "goti"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def server_slug(server: str) -> str:
    """A file name for a server target (``localhost:50051`` -> ``localhost_50051``)."""
    return _UNSAFE.sub("_", server).strip("_") or "server"


def log_file_for_user() -> Path:
    """Where ``goti play`` keeps the lines gRPC logs while it runs, off the screen."""
    return platformdirs.user_state_path(APP_NAME) / "play.log"


@dataclass(frozen=True, slots=True)
class PlayerFiles:
    """The folders the client keeps its files in."""

    config_folder: Path
    data_folder: Path

    @classmethod
    def for_user(cls) -> PlayerFiles:
        """The current user's folders, as the platform names them."""
        return cls(platformdirs.user_config_path(APP_NAME), platformdirs.user_data_path(APP_NAME))

    def identity_file(self, server: str) -> Path:
        """Where the player's identity on ``server`` is kept."""
        return self.config_folder / "identities" / f"{server_slug(server)}.json"

    @property
    def _games_file(self) -> Path:
        return self.data_folder / "unfinished-games.json"

    def _games(self) -> dict[str, str]:
        try:
            data = json.loads(self._games_file.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(server): str(table) for server, table in data.items()}

    def _write_games(self, games: dict[str, str]) -> None:
        self.data_folder.mkdir(parents=True, exist_ok=True)
        staging = self._games_file.with_name(f".{self._games_file.name}.{os.getpid()}.tmp")
        staging.write_text(json.dumps(games, indent=2) + "\n", encoding="utf-8")
        os.replace(staging, self._games_file)

    def unfinished_table(self, server: str) -> str | None:
        """The id of the table whose game was left unfinished on ``server``."""
        return self._games().get(server)

    def remember_table(self, server: str, table_id: str) -> None:
        """Note the table being played on ``server``, to offer it again after a restart."""
        games = self._games()
        if games.get(server) != table_id:
            games[server] = table_id
            self._write_games(games)

    def forget_table(self, server: str, table_id: str | None = None) -> None:
        """Forget the unfinished game on ``server`` (only if it is ``table_id``, when given)."""
        games = self._games()
        if server in games and (table_id is None or games[server] == table_id):
            del games[server]
            with contextlib.suppress(OSError):
                self._write_games(games)
