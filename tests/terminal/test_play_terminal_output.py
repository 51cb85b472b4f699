"""``goti play`` as a real process in a pseudo-terminal: nothing but the interface reaches the
screen, not even what gRPC's C core logs when the server goes away."""

from __future__ import annotations

import re
from pathlib import Path

from .pseudo_terminal import PseudoTerminal, goti_play_command, player_environment
from .running_backend import Backend

C_CORE_LINE = re.compile(r"[A-Za-z_]+\.cc:\d+\]")
"""Where a gRPC C-core log line names its source, as in ``chttp2_transport.cc:1403]``."""
GOAWAY_LOG = "got goaway"
"""What the C core logs when a server sends its clients away: at INFO when the GOAWAY carries
an error, and for every GOAWAY with the ``http`` tracer on."""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


async def test_grpc_log_lines_go_to_the_log_file_not_the_screen_when_the_server_goes_away(
    backend: Backend, tmp_path: Path
) -> None:
    environment = player_environment(tmp_path)
    # Whether the C core logs a GOAWAY at INFO depends on how the server stopped and on
    # when the client left it; with the http tracer on it logs every one (and every frame),
    # so there is always something that must stay off the screen.
    environment["GRPC_TRACE"] = "http"
    terminal = PseudoTerminal(
        goti_play_command(backend.target, "--theme", "dark", "--lang", "en"),
        environment=environment,
    )
    log_file = tmp_path / "state" / "goti" / "play.log"
    try:
        await terminal.wait_for(lambda: "Playing as" in terminal.output, "the start screen")
        # Enter on the focused Play button: a game against the computer, watched live.
        terminal.type("\r")
        await terminal.wait_for(lambda: "Your move" in terminal.output, "the game screen")
        await backend.drain_tables(grace=1.0)
        await terminal.wait_for(lambda: GOAWAY_LOG in _read(log_file).lower(), "the GOAWAY log")
        await terminal.wait_for(lambda: "reconnecting" in terminal.output, "reconnecting shown")
        await backend.start_tables()
        await terminal.wait_for(
            lambda: "● connected" in terminal.output.rsplit("reconnecting", 1)[-1],
            "connected again",
        )
        assert C_CORE_LINE.search(_read(log_file))
        assert not C_CORE_LINE.search(terminal.output)
        assert GOAWAY_LOG not in terminal.output.lower()
        terminal.type("\x11")  # Ctrl+Q
        await terminal.wait_for(lambda: terminal.process.poll() is not None, "goti play to end")
        assert terminal.process.returncode == 0
    finally:
        await terminal.close()
