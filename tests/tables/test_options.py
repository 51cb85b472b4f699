"""The tables service's options: every ``GOTI_*`` one takes its default from Settings, under
the setting's own name, so that no default is written twice."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

from goti.settings import Settings
from goti.tables import options as options_module
from goti.tables.options import FROM_SETTINGS, TablesOptions
from goti.tables.store import TableStore

SETTINGS_TAKEN = {
    "join_base_url",
    "finished_table_seconds",
    "waiting_table_seconds",
    "idle_table_seconds",
    "heartbeat_seconds",
    "joins_per_minute",
    "tables_per_minute",
    "guests_per_minute",
    "table_log_events",
    "seeks_per_minute",
    "seek_resume_seconds",
    "redis_wait_replicas",
    "redis_wait_timeout_seconds",
    "redis_shards",
}
"""The settings the tables service is tuned with: a rename on either side shows here."""


def test_the_options_that_are_settings_default_to_the_settings_defaults() -> None:
    assert FROM_SETTINGS == SETTINGS_TAKEN
    options, settings = TablesOptions(), Settings()
    for name in FROM_SETTINGS:
        assert getattr(options, name) == getattr(settings, name), name
    log_length = inspect.signature(TableStore).parameters["table_log_events"]
    assert log_length.default == settings.table_log_events


def test_no_default_of_a_setting_is_written_again_in_the_options() -> None:
    tree = ast.parse(Path(inspect.getfile(options_module)).read_text(encoding="utf-8"))
    options_class = next(
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name == TablesOptions.__name__
    )
    defaults = {
        node.target.id: ast.unparse(node.value)
        for node in options_class.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value
    }
    for name in FROM_SETTINGS:
        assert defaults[name] == f"_DEFAULTS.{name}", f"{name} defaults to {defaults[name]}"


def test_from_settings_takes_every_setting_and_overrides_on_top() -> None:
    chosen = Settings.from_env(
        {
            "GOTI_JOIN_BASE_URL": "https://goti.example/join/",
            "GOTI_FINISHED_TABLE_SECONDS": "11",
            "GOTI_WAITING_TABLE_SECONDS": "12",
            "GOTI_IDLE_TABLE_SECONDS": "13",
            "GOTI_HEARTBEAT_SECONDS": "14",
            "GOTI_JOINS_PER_MINUTE": "15",
            "GOTI_TABLES_PER_MINUTE": "16",
            "GOTI_GUESTS_PER_MINUTE": "17",
            "GOTI_TABLE_LOG_EVENTS": "18",
            "GOTI_SEEKS_PER_MINUTE": "19",
            "GOTI_SEEK_RESUME_SECONDS": "20",
            "GOTI_REDIS_WAIT_REPLICAS": "1",
            "GOTI_REDIS_WAIT_TIMEOUT_SECONDS": "2",
            "GOTI_REDIS_SHARDS": "8",
        }
    )
    options = TablesOptions.from_settings(chosen, guests_per_minute=0, timer_poll_seconds=0.05)
    expected = {name: getattr(chosen, name) for name in FROM_SETTINGS}
    expected |= {"guests_per_minute": 0, "timer_poll_seconds": 0.05}
    for name, value in expected.items():
        assert getattr(options, name) == value, name
    defaults = Settings()
    assert all(getattr(chosen, name) != getattr(defaults, name) for name in FROM_SETTINGS)
    assert dataclasses.replace(options, timer_poll_seconds=0.5) == TablesOptions.from_settings(
        chosen, guests_per_minute=0
    )
