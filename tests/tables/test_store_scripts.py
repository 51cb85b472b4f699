"""The stores' Lua scripts: files beside the stores, each saying what its KEYS and ARGV hold,
the request lookup and the writing of a new table each written once, and every file shipped
in the package."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

from goti.tables import player_store, pool_steps, pool_store, store

LUA_FOLDER = Path(store.__file__).parent / "lua"
SHARED = {"remembered_request.lua": 2, "new_table.lua": 3, "take_out.lua": 2}
"""Not scripts of their own: functions put ahead of the scripts that call them (the request
lookup ahead of commit and find_request, a new table's writing ahead of create, pair and,
on a Redis Cluster, pair_table, a seek's leaving its pool ahead of leave and cancel_seek),
with how many scripts call each."""
PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"


def _scripts() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in LUA_FOLDER.glob("*.lua")}


def _documented(header: str, section: str) -> set[int]:
    """The positions a header names in its ``-- KEYS:`` or ``-- ARGV:`` section."""
    found = re.search(
        rf"^-- {section}:(.*?)(?=^-- [A-Z][A-Za-z]+:|^-- Returns|\Z)", header, re.S | re.M
    )
    if found is None:
        return set()
    return {int(number) for number in re.findall(r"\b(\d+) (?:[a-z]|\.\.)", found[1])}


def test_every_script_starts_by_naming_its_keys_and_argv_positions() -> None:
    scripts = _scripts()
    assert len(scripts) > 1
    for name, text in scripts.items():
        assert text.startswith("-- "), f"{name} starts with a comment saying what it does"
        if name in SHARED:
            continue
        lines = text.splitlines()
        header = "\n".join(
            lines[: next(i for i, line in enumerate(lines) if not line.startswith("--"))]
        )
        for section in ("KEYS", "ARGV"):
            documented = _documented(header, section)
            assert 1 in documented, f"{name} names its {section} by position"
            used = {int(number) for number in re.findall(rf"{section}\[(\d+)\]", text)}
            assert used <= documented, (
                f"{name} uses {section} {sorted(used - documented)} undocumented"
            )


def test_the_stores_load_every_file_and_the_shared_functions_are_written_once() -> None:
    loaded = [
        value
        for module in (store, player_store, pool_store, pool_steps)
        for name, value in vars(module).items()
        if name.isupper() and name[0] == "_"
    ]
    for name, text in _scripts().items():
        assert any(text in script for script in loaded if isinstance(script, str)), name
    for shared_name, callers in SHARED.items():
        shared = _scripts()[shared_name]
        users = [
            script
            for script in loaded
            if isinstance(script, str) and script != shared and shared in script
        ]
        assert len(users) == callers, f"{callers} scripts share {shared_name}"
    lookups = [name for name, text in _scripts().items() if "string.sub(entry, 1, 8)" in text]
    assert lookups == ["remembered_request.lua"]
    table_writers = [name for name, text in _scripts().items() if "'log_first', 1" in text]
    assert table_writers == ["new_table.lua"]


def test_the_package_ships_every_script() -> None:
    package_data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]
    patterns = package_data.get("goti.tables", [])
    for name in _scripts():
        assert any(fnmatch.fnmatch(f"lua/{name}", pattern) for pattern in patterns), name
