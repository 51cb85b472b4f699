"""The checks every request field gets before the service acts on it.

Each function returns the field's value as the service uses it, or raises
:class:`~goti.tables.refusals.CallRefusedError` with INVALID_ARGUMENT naming the field: a
malformed request is an app bug and is told so precisely, never answered with INTERNAL.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from typing import Final

from google.protobuf.message import Message

from goti.api.v1 import game_pb2, tables_pb2
from goti.tables import seating
from goti.tables.options import MAX_TURN_TIMER_SECONDS
from goti.tables.refusals import CallRefusedError

MAX_REQUEST_ID_CHARS: Final = 64
MAX_TABLE_ID_CHARS: Final = 32
MAX_NOTATION_BYTES: Final = 64
MAX_PATH_SQUARES: Final = 13
MAX_CODE_CHARS: Final = 2048
"""A code as typed may carry spaces and dashes, and may come as a whole join link; anything
longer is neither."""
MAX_DISPLAY_NAME_CHARS: Final = 24
DEFAULT_PAGE_SIZE: Final = 50
MAX_PAGE_SIZE: Final = 200
MAX_PAGE_TOKEN_CHARS: Final = 128

_IDENTIFIER: Final = re.compile(r"[A-Za-z0-9_-]+")
_PAGE_TOKEN_PREFIX: Final = "v1:"


def request_id(value: str) -> str:
    """A command's request id: 1-64 characters of ``A-Za-z0-9_-``."""
    if not value:
        raise CallRefusedError.invalid("request_id", "request_id is required (a UUID)")
    if len(value) > MAX_REQUEST_ID_CHARS or not _IDENTIFIER.fullmatch(value):
        raise CallRefusedError.invalid(
            "request_id",
            f"request_id must be 1-{MAX_REQUEST_ID_CHARS} characters of A-Za-z0-9_-",
        )
    return value


def table_id(value: str, field: str = "table_id") -> str:
    """A table id: 1-32 URL-safe characters."""
    if not value:
        raise CallRefusedError.invalid(field, f"{field} is required")
    if len(value) > MAX_TABLE_ID_CHARS or not _IDENTIFIER.fullmatch(value):
        raise CallRefusedError.invalid(
            field, f"{field} must be 1-{MAX_TABLE_ID_CHARS} characters of A-Za-z0-9_-"
        )
    return value


def code(value: str) -> str:
    """A table code as typed or inside a join link, normalised.

    >>> code(" k7q-x2m "), code("https://goti.example/join/K7QX2M/")
    ('K7QX2M', 'K7QX2M')
    """
    if not value.strip():
        raise CallRefusedError.invalid("code", "code is required")
    found = seating.read_code(_last_path_segment(value)) if len(value) <= MAX_CODE_CHARS else None
    if found is None:
        raise CallRefusedError.invalid(
            "code",
            f"a table code is {seating.CODE_LENGTH} characters from {seating.CODE_ALPHABET}, "
            "as typed or at the end of its join link",
        )
    return found


def _last_path_segment(text: str) -> str:
    # A join link ends in the code (…/join/K7QX2M), perhaps followed by a query or a slash.
    text = text.strip().split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return text.rsplit("/", 1)[-1]


def table_by(table_id_value: str, code_value: str) -> tuple[str, str]:
    """Which table a request names: ``(table_id, "")`` or ``("", code)``; exactly one of the
    two fields must be set."""
    if table_id_value and code_value:
        raise CallRefusedError.invalid(
            "code", "set either table_id or code, not both: they may name different tables"
        )
    if code_value:
        return "", code(code_value)
    if not table_id_value:
        raise CallRefusedError.invalid(
            "table_id", "table_id is required (or code, the table's code or join link)"
        )
    return table_id(table_id_value), ""


def _enum(value: int, field: str, allowed: range) -> int:
    if value not in allowed:
        raise CallRefusedError.invalid(field, f"{field} is {value}, which is not a known value")
    return value


def variant(value: int, field: str = "variant") -> game_pb2.Variant.ValueType:
    """A variant; VARIANT_UNSPECIFIED stays as it is (the caller decides what it means)."""
    _enum(value, field, range(3))
    return value  # type: ignore[return-value]


def side(value: int, field: str = "side") -> game_pb2.Color.ValueType:
    """A side, or COLOR_UNSPECIFIED."""
    _enum(value, field, range(3))
    return value  # type: ignore[return-value]


def starting_player(value: int) -> tables_pb2.StartingPlayer.ValueType:
    """Who moves first; not set means at random."""
    _enum(value, "starting_player", range(4))
    if value == tables_pb2.STARTING_PLAYER_UNSPECIFIED:
        return tables_pb2.STARTING_PLAYER_RANDOM
    return value  # type: ignore[return-value]


def opponent(value: int) -> tables_pb2.Opponent.ValueType:
    """Who the second player is; not set means a person."""
    _enum(value, "opponent", range(7))
    if value == tables_pb2.OPPONENT_UNSPECIFIED:
        return tables_pb2.OPPONENT_HUMAN
    return value  # type: ignore[return-value]


def visibility(value: int) -> tables_pb2.Visibility.ValueType:
    """Whether to list the table; not set means private."""
    _enum(value, "visibility", range(3))
    if value == tables_pb2.VISIBILITY_UNSPECIFIED:
        return tables_pb2.VISIBILITY_PRIVATE
    return value  # type: ignore[return-value]


def turn_timer_seconds(value: int, minimum: int) -> int:
    """Seconds per move: 0 (no timer) or ``minimum``-86400."""
    if value and not minimum <= value <= MAX_TURN_TIMER_SECONDS:
        raise CallRefusedError.invalid(
            "turn_timer_seconds",
            f"turn_timer_seconds must be 0 (no timer) or {minimum}-{MAX_TURN_TIMER_SECONDS}, "
            f"not {value}",
        )
    return value


def move(request: tables_pb2.PlayRequest) -> None:
    """Check that a move is given, within Goti's size limits (the referee checks the rest)."""
    kind = request.WhichOneof("move")
    if kind is None:
        raise CallRefusedError.invalid("move", "set one of path or notation")
    if kind == "path" and len(request.path.squares) > MAX_PATH_SQUARES:
        raise CallRefusedError.too_large(
            "path.squares",
            f"a move has at most {MAX_PATH_SQUARES} squares, not {len(request.path.squares)}",
            MAX_PATH_SQUARES,
        )
    if kind == "notation" and len(request.notation.encode()) > MAX_NOTATION_BYTES:
        raise CallRefusedError.too_large(
            "notation", f"notation is over {MAX_NOTATION_BYTES} bytes", MAX_NOTATION_BYTES
        )


def display_name(value: str, field: str = "display_name") -> str:
    """A display name: 1-24 characters, no control characters, trimmed."""
    name = value.strip()
    if not name:
        raise CallRefusedError.invalid(field, f"{field} must have 1-24 characters")
    if len(name) > MAX_DISPLAY_NAME_CHARS:
        raise CallRefusedError.invalid(
            field, f"{field} has {len(name)} characters, at most {MAX_DISPLAY_NAME_CHARS}"
        )
    if any(unicodedata.category(character).startswith("C") for character in name):
        raise CallRefusedError.invalid(field, f"{field} must not hold control characters")
    return name


def page_size(value: int) -> int:
    """Tables per page: 1-200, 0 for 50."""
    if value == 0:
        return DEFAULT_PAGE_SIZE
    if value > MAX_PAGE_SIZE:
        raise CallRefusedError.invalid(
            "page_size", f"page_size must be 1-{MAX_PAGE_SIZE}, or 0 for {DEFAULT_PAGE_SIZE}"
        )
    return value


def page_token(value: str) -> tuple[int, str] | None:
    """Where a page starts: after the lobby entry (opening time, table id) the token names."""
    if not value:
        return None
    problem = CallRefusedError.invalid(
        "page_token", "page_token is not one this server gave: start again without it"
    )
    if len(value) > MAX_PAGE_TOKEN_CHARS:
        raise problem
    try:
        text = base64.urlsafe_b64decode(value.encode() + b"=" * (-len(value) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise problem from None
    if not text.startswith(_PAGE_TOKEN_PREFIX):
        raise problem
    opened, _, last_id = text.removeprefix(_PAGE_TOKEN_PREFIX).partition(":")
    if not opened.isdigit() or not _IDENTIFIER.fullmatch(last_id):
        raise problem
    return int(opened), last_id


def next_page_token(opened_ms: int, last_table_id: str) -> str:
    """The token of the page after the lobby entry (opening time, table id)."""
    text = f"{_PAGE_TOKEN_PREFIX}{opened_ms}:{last_table_id}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def fingerprint(method: str, request: Message) -> bytes:
    """What a command asks, without its request id and expected seq: a retry has the same."""
    copy = type(request)()
    copy.CopyFrom(request)
    for name in ("request_id", "expected_seq"):
        if name in copy.DESCRIPTOR.fields_by_name:
            copy.ClearField(name)
    return method.encode() + b"\0" + copy.SerializeToString(deterministic=True)
