"""A player's identity kept on the device: its public id, its name and its secret token.

The token is the only way back to the player's tables and streaks, and it cannot be
recovered, so the identity file is a small JSON object readable by its owner alone (mode
0600), replaced atomically so that a crash mid-write never leaves half a token behind::

    {"player_id": "p_7Hq...", "display_name": "Guest 4821", "token": "..."}
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path


class IdentityFileError(ValueError):
    """An identity file that cannot be read as one."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the client plays as."""

    player_id: str
    display_name: str
    token: str

    def __repr__(self) -> str:
        # Keep the secret out of logs and tracebacks.
        return f"Identity(player_id={self.player_id!r}, display_name={self.display_name!r})"


def load_identity(path: Path | str) -> Identity | None:
    """The identity kept in ``path``; None when there is no such file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
        identity = Identity(
            player_id=str(data["player_id"]),
            display_name=str(data.get("display_name", "")),
            token=str(data["token"]),
        )
    except (ValueError, KeyError, TypeError) as error:
        raise IdentityFileError(f"{path} is not a Goti identity file: {error}") from None
    if not identity.token or not identity.player_id:
        raise IdentityFileError(f"{path} is not a Goti identity file: empty player id or token")
    return identity


def save_identity(path: Path | str, identity: Identity) -> None:
    """Keep ``identity`` in ``path`` (mode 0600), replacing any identity there."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(
        {
            "player_id": identity.player_id,
            "display_name": identity.display_name,
            "token": identity.token,
        },
        indent=2,
    )
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # Created 0600 from the start: the token is never readable by others, not even briefly.
    descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.chmod(staging, 0o600)
        os.replace(staging, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            staging.unlink()
        raise
