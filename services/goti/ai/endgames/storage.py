"""Table files: one per variant and material, a line of header and then the bytes, deflated.

``<directory>/<variant>/<material>.egdb``, for example ``english/0m2k-0m1k.egdb``.  The
header line is ``goti-endgame 1 <variant> <material> <positions>``; the rest is the zlib
stream of one byte per position (:mod:`goti.ai.endgames.values`) in index order.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Final

from goti.ai.endgames.indexing import Material

SUFFIX: Final = ".egdb"
_MAGIC: Final = "goti-endgame"
_FORMAT: Final = "1"
SHIPPED: Final = Path(__file__).resolve().parent / "data"
"""Where the tables shipped with Goti lie, one folder per variant."""


class TableFileError(Exception):
    """A table file that is not one Goti wrote for this variant and material."""


def table_path(directory: Path, variant: str, material: Material) -> Path:
    """Where the table of a variant and material lives under ``directory``."""
    return directory / variant / f"{material.name}{SUFFIX}"


def write_table(directory: Path, variant: str, material: Material, values: bytes) -> Path:
    """Write one table; returns its path."""
    path = table_path(directory, variant, material)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = f"{_MAGIC} {_FORMAT} {variant} {material.name} {len(values)}\n".encode()
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(header + zlib.compress(values, 9))
    partial.replace(path)  # a reader never sees half a file
    return path


def read_table(path: Path, variant: str, material: Material) -> bytes:
    """The bytes of one table file (raises :class:`TableFileError`, or OSError when unreadable)."""
    data = path.read_bytes()
    header, _, body = data.partition(b"\n")
    fields = header.decode("ascii", "replace").split()
    expected = [_MAGIC, _FORMAT, variant, material.name]
    if len(fields) != 5 or fields[:4] != expected or not fields[4].isdigit():
        raise TableFileError(f"{path}: not a Goti {variant} table of {material.name}")
    try:
        values = zlib.decompress(body)
    except zlib.error as error:
        raise TableFileError(f"{path}: damaged ({error})") from None
    if len(values) != int(fields[4]):
        raise TableFileError(f"{path}: {len(values)} positions where the header says {fields[4]}")
    return values


def stored_materials(directory: Path, variant: str) -> list[Material]:
    """The materials that have a table file under ``directory`` for a variant."""
    found = []
    for path in sorted((directory / variant).glob(f"*{SUFFIX}")):
        try:
            found.append(Material.parse(path.stem))
        except ValueError:
            continue
    return found
