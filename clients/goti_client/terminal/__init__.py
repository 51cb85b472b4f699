"""``goti play``: Goti in a terminal, built with Textual.

Play the computer, a friend online, or a second player at the same terminal; browse the
lobby; watch a table.  The server-side ``goti`` command imports this package only when
``goti play`` runs, so the services never load Textual.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from goti.rules import Variant
from goti_client.terminal.app import DEFAULT_SERVER, GotiApp
from goti_client.terminal.labels import Language, language_from_locale
from goti_client.terminal.player_files import PlayerFiles, log_file_for_user
from goti_client.terminal.terminal_output import stderr_to_log
from goti_client.terminal.terminal_theme import Brightness, detect_brightness

__all__ = ["DEFAULT_SERVER", "GotiApp", "Language", "play"]


def play(
    *,
    server: str,
    variant: Variant,
    language: Language | None = None,
    brightness: Brightness | None = None,
    environment: Mapping[str, str] | None = None,
) -> int:
    """Run the terminal client until the player quits; returns the exit status."""
    environment = os.environ if environment is None else environment
    brightness = brightness or detect_brightness(environment)
    # gRPC's C core logs to descriptor 2 directly: into a file, or it lands on the screen.
    with stderr_to_log(log_file_for_user()):
        app = GotiApp(
            server=server,
            language=language or language_from_locale(environment),
            variant=variant,
            files=PlayerFiles.for_user(),
            brightness=brightness,
        )
        app.run()
    return app.return_code or 0
