"""Whether the terminal has a light or a dark background, so the client can match it.

Asked before the app starts: ``COLORFGBG`` when the terminal sets it (rxvt, Konsole, iTerm),
else the terminal itself with the xterm background-colour query (OSC 11), which most modern
terminals answer.  The query is followed by a device-attributes request that every terminal
answers, so the client reads up to that answer and leaves no stray bytes for the app to see
as keys.
"""

from __future__ import annotations

import enum
import os
import re
import select
import sys
import time
from collections.abc import Mapping
from typing import Final

QUERY: Final = b"\x1b]11;?\x1b\\\x1b[c"
"""The background colour query, then a primary device attributes request."""
_BACKGROUND: Final = re.compile(rb"\]11;rgba?:([0-9a-f]+)/([0-9a-f]+)/([0-9a-f]+)", re.IGNORECASE)
_ATTRIBUTES_END: Final = re.compile(rb"\x1b\[\?[0-9;]*c")
QUERY_TIMEOUT_SECONDS: Final = 0.3
LIGHT_BACKGROUND_INDEXES: Final = frozenset({7, 15})


class Brightness(enum.Enum):
    """A terminal's background."""

    LIGHT = "light"
    DARK = "dark"


def brightness_from_colorfgbg(value: str) -> Brightness | None:
    """The background ``COLORFGBG`` (``"15;0"``: white on black) names, if it names one."""
    last = value.rsplit(";", 1)[-1].strip()
    if not last.isdigit():
        return None
    return Brightness.LIGHT if int(last) in LIGHT_BACKGROUND_INDEXES else Brightness.DARK


def brightness_from_reply(reply: bytes) -> Brightness | None:
    """The background an OSC 11 reply (``ESC ] 11 ; rgb:ffff/ffff/ffff``) describes."""
    found = _BACKGROUND.search(reply)
    if found is None:
        return None
    red, green, blue = (int(part, 16) / (16 ** len(part) - 1) for part in found.groups())
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return Brightness.LIGHT if luminance > 0.5 else Brightness.DARK


def _ask_terminal(timeout: float) -> bytes:
    try:
        import termios  # noqa: PLC0415 - absent on Windows
        import tty  # noqa: PLC0415
    except ImportError:
        return b""
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    if not (os.isatty(stdin) and os.isatty(stdout)):
        return b""
    saved = termios.tcgetattr(stdin)
    reply = b""
    try:
        tty.setraw(stdin)
        os.write(stdout, QUERY)
        deadline = time.monotonic() + timeout
        while not _ATTRIBUTES_END.search(reply):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stdin], [], [], left)[0]:
                break
            reply += os.read(stdin, 256)
    finally:
        termios.tcsetattr(stdin, termios.TCSADRAIN, saved)
    return reply


def detect_brightness(
    environment: Mapping[str, str], *, timeout: float = QUERY_TIMEOUT_SECONDS
) -> Brightness:
    """The terminal's background; dark when nothing says (the common default)."""
    colorfgbg = environment.get("COLORFGBG")
    if colorfgbg:
        found = brightness_from_colorfgbg(colorfgbg)
        if found is not None:
            return found
    try:
        return brightness_from_reply(_ask_terminal(timeout)) or Brightness.DARK
    except OSError:
        return Brightness.DARK
