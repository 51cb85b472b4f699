"""How the store keeps a table's fields: the long ones deflated, the rest as they are."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Final

DEFLATED: Final = b"\x00"
"""Starts a field value the store keeps deflated.  No value the service stores starts with
it: a protobuf message starts with a field tag, never 0, and a number with a digit."""
DEFLATE_FROM_BYTES: Final = 128
"""Field values this long or longer are kept deflated when that makes them shorter: the game
(its move list and repetition window grow with every move) takes about a third of its size."""
DEFLATE_WINDOW_BITS: Final = 12
DEFLATE_MEMORY_LEVEL: Final = 4
"""zlib's defaults (a 32 KB window, 256 KB of state) are sized for files: setting up that state
cost five times the compressing of a game's few hundred bytes, on every move.  A 4 KB window
holds a whole game and packs it as small; inflating with the largest window reads either."""


def deflated(fields: Mapping[str, bytes]) -> dict[str, bytes]:
    """A table's fields as Redis keeps them: the long ones deflated, marked by
    :data:`DEFLATED`."""
    kept = {}
    for name, value in fields.items():
        if value.startswith(DEFLATED):
            raise ValueError(f"the value of {name!r} starts with the mark of a deflated one")
        kept[name] = value
        if len(value) >= DEFLATE_FROM_BYTES:
            # Raw deflate: zlib's header and checksum would cost six bytes a table.
            deflater = zlib.compressobj(
                zlib.Z_DEFAULT_COMPRESSION,
                zlib.DEFLATED,
                -DEFLATE_WINDOW_BITS,
                DEFLATE_MEMORY_LEVEL,
            )
            packed = DEFLATED + deflater.compress(value) + deflater.flush()
            if len(packed) < len(value):
                kept[name] = packed
    return kept


def inflated(value: bytes) -> bytes:
    """A field value as the service stored it."""
    if value.startswith(DEFLATED):
        return zlib.decompress(value[len(DEFLATED) :], wbits=-zlib.MAX_WBITS)
    return value
