"""``goti serve`` reads its configuration through Settings alone: the environment's ``GOTI_*``
variables are never read by the backend itself, only written for the services it starts."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from goti import backend
from goti.backend import backend_settings, child_environment


def test_the_backend_writes_goti_variables_for_the_services_and_reads_none() -> None:
    tree = ast.parse(Path(inspect.getfile(backend)).read_text(encoding="utf-8"))
    dict_keys = {
        id(key)
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key in node.keys
        if key is not None
    }
    named = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("GOTI_")
    ]
    assert named, "the backend points the services at its parts through GOTI_* variables"
    read = [node.value for node in named if id(node) not in dict_keys]
    assert read == [], "read settings through goti.settings.Settings"


def test_the_services_get_the_backends_settings_whatever_the_environment_says() -> None:
    settings = backend_settings({"GOTI_WEB_PORT": "8123", "GOTI_TABLES_PORT": "50061"})
    stale = {"GOTI_WEB_PORT": "1", "GOTI_TABLES_PORT": "2", "GOTI_LOG_LEVEL": "debug"}
    environment = child_environment(settings, "redis://localhost:1/0", stale)
    assert environment["GOTI_WEB_PORT"] == "8123"
    assert environment["GOTI_TABLES_PORT"] == "50061"
    assert environment["GOTI_JOIN_BASE_URL"] == "http://localhost:8123/join/"
    # What the backend does not set is handed on as it is: the services read it themselves.
    assert environment["GOTI_LOG_LEVEL"] == "debug"
